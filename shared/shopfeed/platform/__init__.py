"""Cross-cutting pieces used by every bounded context: config, clients, errors, cursors, idempotency."""
