"""The feed context: social profiles, posts, follows and home feeds (FeedTable)."""
