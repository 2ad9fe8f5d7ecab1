"""Which module's router serves each route of the feed API, by the key API Gateway names it with.

Read by ``functions/feed_api/app.py`` (``platform.http.lazy_resolver``, decision 233); checked against
the routers and template.yaml by ``tests/unit/test_route_groups.py``.
"""

ROUTE_GROUPS = {
    "shopfeed.feed.routes.posts": (
        "POST /posts",
        "GET /posts/{post_id}",
        "DELETE /posts/{post_id}",
        "GET /users/{user_id}/posts",
        "GET /tags/{tag}/posts",
    ),
    "shopfeed.feed.routes.follows": (
        "PUT /users/{user_id}/followers/me",
        "DELETE /users/{user_id}/followers/me",
        "GET /users/{user_id}/followers",
        "GET /users/{user_id}/following",
    ),
    "shopfeed.feed.routes.home": ("GET /feed",),
    "shopfeed.feed.routes.likes": (
        "PUT /posts/{post_id}/likes/me",
        "DELETE /posts/{post_id}/likes/me",
        "GET /posts/{post_id}/likes",
    ),
    "shopfeed.feed.routes.comments": (
        "POST /posts/{post_id}/comments",
        "GET /posts/{post_id}/comments",
        "DELETE /posts/{post_id}/comments/{comment_id}",
        "GET /users/{user_id}/comments",
    ),
    "shopfeed.feed.routes.notifications": (
        "GET /notifications",
        "POST /notifications/read",
        "POST /notifications/{notification_id}/read",
        "GET /leaderboards/authors",
    ),
    "shopfeed.feed.routes.search": ("GET /search/posts",),
    "shopfeed.feed.routes.media": ("POST /media",),
}
