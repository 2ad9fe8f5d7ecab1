"""Follows: the profile counters that follow edges (and posts, counted with them) keep."""
