"""Payments: attempts on an order (use cases, repository), the provider port and its sandbox, and the
worker that settles queued attempts."""
