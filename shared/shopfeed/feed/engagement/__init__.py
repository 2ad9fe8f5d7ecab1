"""Likes, comments, notifications and the monthly leaderboard: their API side and their stream effects."""
