"""Which handles a post or comment mentions, and the notification a mention makes, without AWS."""

from datetime import UTC, datetime

import pytest

from local.harness import feed_builders
from shopfeed.feed import items
from shopfeed.feed.engagement.mentions import MAX_MENTIONS, mention_notification, mentioned_handles, mentioning
from shopfeed.feed.models import Like, NotificationKind
from shopfeed.platform.streams import ChangeKind, ItemChange

AT = datetime(2026, 11, 22, 10, tzinfo=UTC)


def inserted(item: dict[str, object], kind: ChangeKind = ChangeKind.INSERT) -> ItemChange:
    new, old = (None, item) if kind is ChangeKind.REMOVE else (item, None)
    return ItemChange("1", kind, {"PK": item["PK"], "SK": item["SK"]}, new, old, AT)


@pytest.mark.parametrize(
    ("text", "handles"),
    [
        ("thanks @Grace_H and @ada!", ["grace_h", "ada"]),
        ("@ada, @ADA and @ada again", ["ada"]),
        ("mail me at someone@example.com", []),
        ("@ab is too short, @ada.lovelace stops at the dot", ["ada"]),
        ("@@ada and @ada@host are no mentions", []),
        ("no mention at all", []),
    ],
)
def test_a_text_mentions_each_registered_form_of_handle_once(text: str, handles: list[str]) -> None:
    assert mentioned_handles(text) == handles


def test_a_text_mentions_at_most_ten_handles_the_first_ones() -> None:
    text = " ".join(f"@user_{n:02d}" for n in range(MAX_MENTIONS + 5))
    assert mentioned_handles(text) == [f"user_{n:02d}" for n in range(MAX_MENTIONS)]


def test_a_new_post_or_comment_mentions_and_a_removal_or_a_like_does_not() -> None:
    post = feed_builders.post("U100", text="hello @ada")
    comment = feed_builders.comment(post, "U300", text="@grace look")
    like = Like(post_id=post.post_id, user_id="U200", post_author_id="U100", liked_at="2026-11-22T10:30:00.000Z")
    on_post, on_comment = mentioning(inserted(items.post_item(post))), mentioning(inserted(items.comment_item(comment)))
    assert on_post is not None
    assert on_comment is not None
    assert (on_post.handles, on_post.comment_id, on_post.author_id) == (["ada"], None, "U100")
    assert (on_comment.handles, on_comment.comment_id, on_comment.post_id) == (
        ["grace"],
        comment.comment_id,
        post.post_id,
    )
    assert mentioning(inserted(items.post_item(post), ChangeKind.REMOVE)) is None
    assert mentioning(inserted(items.post_item(feed_builders.post("U100", text="no one")))) is None
    assert mentioning(inserted(items.like_item(like))) is None


def test_a_mention_notification_has_one_id_per_cause_and_user() -> None:
    post = feed_builders.post("U100", text="hello @ada @grace")
    mention = mentioning(inserted(items.post_item(post)))
    assert mention is not None
    first, again, other = (mention_notification(mention, u) for u in ("U200", "U200", "U300"))
    assert first == again
    assert first.notification_id != other.notification_id
    assert (first.kind, first.actor_id, first.post_id, first.created_at) == (
        NotificationKind.MENTION,
        "U100",
        post.post_id,
        post.created_at,
    )
