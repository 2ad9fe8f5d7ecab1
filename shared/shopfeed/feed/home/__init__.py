"""The home feed's write side: fanout of a post's entry to its author's followers, a page per task."""
