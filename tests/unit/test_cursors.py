"""Pagination cursors: opaque to clients, signed, and bound to the query that issued them."""

import base64
import itertools
import json

import pytest

from shopfeed.feed import repository
from shopfeed.platform.config import CursorSettings
from shopfeed.platform.cursors import CursorCodec, KeyRing, parse_key_ring, signing_keys
from shopfeed.platform.errors import InvalidCursor

SCOPE = "orders-by-user:U100"
POSITION = {"PK": {"S": "some-key"}, "n": 3}
codec = CursorCodec(b"test-key")


def tampered(cursor: str, change: dict[str, object]) -> str:
    body, signature = cursor.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    forged = base64.urlsafe_b64encode(json.dumps(payload | change).encode()).rstrip(b"=").decode()
    return f"{forged}.{signature}"


def test_a_cursor_gives_back_the_position_it_was_made_from() -> None:
    assert codec.decode(SCOPE, codec.encode(SCOPE, POSITION)) == POSITION


def test_no_cursor_means_the_first_page() -> None:
    assert codec.decode(SCOPE, None) is None


def test_a_cursor_does_not_show_the_position_in_clear_text() -> None:
    assert "some-key" not in codec.encode(SCOPE, POSITION)


def test_a_cursor_with_an_edited_position_is_refused() -> None:
    # given
    cursor = tampered(codec.encode(SCOPE, POSITION), {"p": {"PK": {"S": "another-key"}}})
    # when / then
    with pytest.raises(InvalidCursor):
        codec.decode(SCOPE, cursor)


def test_a_cursor_moved_to_another_scope_by_editing_it_is_refused() -> None:
    cursor = tampered(codec.encode(SCOPE, POSITION), {"s": "orders-by-user:U200"})
    with pytest.raises(InvalidCursor):
        codec.decode("orders-by-user:U200", cursor)


def test_a_cursor_with_an_edited_signature_is_refused() -> None:
    # given
    body, signature = codec.encode(SCOPE, POSITION).split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    # when / then
    with pytest.raises(InvalidCursor):
        codec.decode(SCOPE, f"{body}.{flipped}")


def test_a_cursor_signed_with_another_key_is_refused() -> None:
    with pytest.raises(InvalidCursor):
        codec.decode(SCOPE, CursorCodec(b"someone-elses-key").encode(SCOPE, POSITION))


def test_a_cursor_from_another_query_is_refused() -> None:
    with pytest.raises(InvalidCursor):
        codec.decode("orders-by-user:U200", codec.encode(SCOPE, POSITION))


@pytest.mark.parametrize("garbage", ["", ".", "not-a-cursor", "a.b.c", "!!!.???", "é.é", "eyJzIjoxfQ.", "x" * 4096])
def test_garbage_is_an_invalid_cursor_not_a_crash(garbage: str) -> None:
    with pytest.raises(InvalidCursor):
        codec.decode(SCOPE, garbage)


def test_a_plain_secret_is_a_ring_of_one_key() -> None:
    assert signing_keys(CursorSettings(cursor_secret="s3cret")) == KeyRing(b"s3cret")


def test_a_json_secret_is_a_ring_of_the_current_key_and_the_accepted_ones() -> None:
    ring = parse_key_ring('{"current": "new", "accepted": ["old"]}')
    assert ring == KeyRing(b"new", (b"old",))


@pytest.mark.parametrize(
    "secret",
    [
        "{",
        '{"accepted": ["old"]}',
        '{"current": ""}',
        '{"current": "new", "accepted": "old"}',
        '{"current": "new", "accepted": [""]}',
        '{"current": "new", "accepted": ["a", "b", "c", "d"]}',
    ],
)
def test_a_malformed_key_ring_is_a_configuration_error(secret: str) -> None:
    with pytest.raises(ValueError, match="cursor key ring"):
        parse_key_ring(secret)


def test_a_rotation_never_refuses_a_cursor_a_live_container_signed() -> None:
    # The three deploys of docs/operations.md, "Rotating the cursor key": at each step containers of
    # the step before and of the step itself serve the same clients.
    steps = [
        KeyRing(b"old"),
        KeyRing(b"old", (b"new",)),  # 1: the new key is accepted everywhere before anyone signs with it
        KeyRing(b"new", (b"old",)),  # 2: signed with the new key, cursors of the old still accepted
        KeyRing(b"new"),  # 3: the old key retired
    ]
    for before, after in itertools.pairwise(steps):
        for signer, reader in ((before, after), (after, before)):
            cursor = CursorCodec(signer).encode(SCOPE, POSITION)
            assert CursorCodec(reader).decode(SCOPE, cursor) == POSITION


def test_a_cursor_signed_with_a_retired_key_is_refused() -> None:
    cursor = CursorCodec(KeyRing(b"old")).encode(SCOPE, POSITION)
    assert CursorCodec(KeyRing(b"new", (b"old",))).decode(SCOPE, cursor) == POSITION
    with pytest.raises(InvalidCursor):
        CursorCodec(KeyRing(b"new")).decode(SCOPE, cursor)


def test_a_missing_signing_secret_is_a_configuration_error() -> None:
    with pytest.raises(RuntimeError, match="CURSOR_SECRET"):
        signing_keys(CursorSettings())


def test_a_home_cursor_stays_under_its_bound_for_the_longest_ids_and_the_most_celebrities() -> None:
    # given: a reader and 64 celebrities whose ids are 255 bytes of four-byte characters
    longest = "\U0001f600" * 63 + "abc"
    assert len(longest.encode()) == 255
    state = {
        "a": "A" * 8 * repository.MAX_MERGED_AUTHORS,
        "m": {"w": f"2026-03-05T10:00:00.000000Z#{'0' * 26}", "x": "f" * 17},
    }
    # when
    cursor = codec.encode(f"home-feed:{longest}", state)
    # then
    assert len(cursor) <= repository.MAX_HOME_CURSOR_LENGTH <= 4096
