"""Posts: what a post is indexed as for search (the post's writes and reads are the feed repository's)."""
