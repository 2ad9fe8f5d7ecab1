"""The local stack: shopfeed on one machine with no Docker and no AWS (``make dev``)."""
