"""HTTP routes of the feed API, one Router per resource; functions/feed_api wires them."""
