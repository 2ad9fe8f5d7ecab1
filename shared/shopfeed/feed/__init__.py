"""The feed context (FeedTable): profiles, posts, follows, home feeds, likes, comments, notifications.

At the root, what the whole table shares: ``keys`` (every key format and index), ``items`` and
``models``; the API's repository, use cases and schemas of profiles, posts, follows and the home feed;
``bootstrap`` (every port, once per container) and ``consumers`` (one handler per stream effect).
By aggregate: ``posts`` (search), ``follows`` (profile counters), ``home`` (fanout) and
``engagement`` (likes, comments, notifications, the leaderboard).
"""
