"""A user of shopfeed is one person in both contexts: a customer (commerce) and a social profile (feed).
``POST /users``, ``GET /users/{user_id}`` and ``PATCH /users/me`` serve both halves at once."""
