"""The feed's pure reads: GET routes call these directly with the reader ``feed.bootstrap`` builds.
Each is one Query over the platform's pager (and what the visibility rules add), with its cursor
bound to the query and its parameters."""

from collections.abc import Sequence

from shopfeed.feed import items, keys
from shopfeed.feed.models import Comment
from shopfeed.platform.models import Page
from shopfeed.platform.pagination import Reader, Source


def comments_of_user(reader: Reader, user_id: str, limit: int, cursor: str | None) -> Page[Comment]:
    """A user's comments, newest first: one Query on CommentsByUser, then one BatchGetItem of their
    posts' keys. A comment whose post is gone is left out, as the post's own comment list is a 404 then
    (its comments are removed by the stream consumer a moment later). ``limit`` at most 100 (one
    BatchGetItem)."""
    source = Source(keys.COMMENTS_BY_USER, keys.user_partition(user_id))
    page = reader.page_of(items.comment_from, f"comments-of-user:{user_id}", source, limit, cursor, forward=False)
    posts = existing_posts(reader, [comment.post_id for comment in page.items])
    return Page(items=[comment for comment in page.items if comment.post_id in posts], next_cursor=page.next_cursor)


def existing_posts(reader: Reader, post_ids: Sequence[str]) -> set[str]:
    """Which of up to 100 ``post_ids`` are posts now: one strongly consistent BatchGetItem of their keys.
    What an index or the search engine lists may lag a delete; the table does not."""
    wanted = sorted(set(post_ids))
    return {str(item["post_id"]) for item in reader.table.get_many([keys.post(p) for p in wanted], ("post_id",))}
