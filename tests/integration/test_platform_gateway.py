"""The platform's table gateway and pagers against moto, on items of a test-only key format."""

import pytest
from boto3.dynamodb.conditions import Attr

from shopfeed.platform import clients, dynamo
from shopfeed.platform.cursors import CursorCodec
from shopfeed.platform.errors import InvalidCursor
from shopfeed.platform.pagination import Source, merged_page, query_page

CODEC = CursorCodec(b"test-key")


@pytest.fixture
def table(aws: None) -> dynamo.Table:
    return dynamo.Table(clients.dynamodb(), "CommerceTable")


def item(partition: str, sort: str, **attributes: object) -> dict[str, object]:
    return {"PK": f"TEST#{partition}", "SK": sort, **attributes}


# -- single items --------------------------------------------------------------------------------------


def test_put_if_absent_writes_once_and_then_says_the_key_is_taken(table: dynamo.Table) -> None:
    # when
    first = table.put_if_absent(item("a", "1", name="first"))
    second = table.put_if_absent(item("a", "1", name="second"))
    # then
    assert (first, second) == (True, False)
    assert table.get({"PK": "TEST#a", "SK": "1"}) == item("a", "1", name="first")


def test_get_many_reads_the_items_that_exist_with_the_attributes_asked(table: dynamo.Table) -> None:
    # given
    for n in range(3):
        table.put_if_absent(item("a", str(n), name=f"item {n}", other="x"))
    keys = [{"PK": "TEST#a", "SK": str(n)} for n in range(5)]
    # when
    found = table.get_many(keys, ["SK", "name"])
    # then
    assert sorted(found, key=lambda i: i["SK"]) == [{"SK": str(n), "name": f"item {n}"} for n in range(3)]
    assert table.get_many([]) == []


def test_delete_answers_the_item_it_deleted_and_none_when_there_was_none(table: dynamo.Table) -> None:
    # given
    table.put_if_absent(item("a", "1", name="first"))
    key = {"PK": "TEST#a", "SK": "1"}
    # when
    deleted, again = table.delete(key), table.delete(key)
    # then
    assert (deleted, again) == (item("a", "1", name="first"), None)
    assert table.get(key) is None


def test_a_condition_check_lets_its_transaction_commit_only_while_it_holds(table: dynamo.Table) -> None:
    # given an item holding 1, and a write that may happen only while the item holds more than 0
    table.put_if_absent(item("a", "1", held=1))
    key = {"PK": "TEST#a", "SK": "1"}

    def write_if_held(checked: dict[str, str], sort: str) -> None:
        transaction = dynamo.Transaction()
        transaction.add("check", table.check_op(checked, Attr("held").gt(0)))
        transaction.add("write", table.put_op(item("b", sort), if_absent=True))
        table.transact(transaction, busy="test")

    # when
    write_if_held(key, "1")
    table.update(key, dynamo.Update(add={"held": -1}))
    with pytest.raises(dynamo.TransactionCancelled) as refused:
        write_if_held(key, "2")
    with pytest.raises(dynamo.TransactionCancelled) as missing:
        write_if_held({"PK": "TEST#ghost", "SK": "1"}, "3")
    # then
    assert table.get({"PK": "TEST#b", "SK": "1"}) is not None
    assert refused.value.failed("check")
    assert not refused.value.failed("write")
    assert missing.value.failed("check")
    assert table.get({"PK": "TEST#b", "SK": "2"}) is None
    assert table.get({"PK": "TEST#b", "SK": "3"}) is None


def test_a_versioned_update_applies_at_the_read_version_and_names_the_stored_item_otherwise(
    table: dynamo.Table,
) -> None:
    # given
    table.put_if_absent(item("a", "1", name="first", version=1))
    key = {"PK": "TEST#a", "SK": "1"}
    # when
    updated = table.update_versioned(key, 1, dynamo.Update(set={"name": "second"}))
    with pytest.raises(dynamo.ConditionFailed) as stale:
        table.update_versioned(key, 1, dynamo.Update(set={"name": "third"}))
    with pytest.raises(dynamo.ConditionFailed) as missing:
        table.update_versioned({"PK": "TEST#ghost", "SK": "1"}, 1, dynamo.Update(set={"name": "x"}))
    # then
    assert (updated["name"], updated["version"]) == ("second", 2)
    assert stale.value.current == updated
    assert missing.value.current is None
    assert table.get({"PK": "TEST#ghost", "SK": "1"}) is None


def test_an_update_sets_adds_removes_and_keeps_a_first_value(table: dynamo.Table) -> None:
    # given
    table.put_if_absent(item("a", "1", count=1, stale="x", origin="o1", nested={"amount": 1}))
    # when
    written = table.update(
        {"PK": "TEST#a", "SK": "1"},
        dynamo.Update(
            set={"nested.amount": 5},
            set_if_absent={"first_seen": "t1", "origin": "o2"},
            add={"count": 2},
            remove=["stale"],
        ),
    )
    # then
    assert written == item("a", "1", count=3, origin="o1", nested={"amount": 5}, first_seen="t1")


# -- transactions by label -----------------------------------------------------------------------------


def test_a_cancelled_transaction_names_its_failed_items_by_label_with_what_they_saw(table: dynamo.Table) -> None:
    # given
    table.put_if_absent(item("a", "taken", n=1))
    transaction = dynamo.Transaction()
    transaction.add("fresh", table.put_op(item("a", "fresh"), if_absent=True))
    transaction.add("taken", table.put_op(item("a", "taken", n=2), if_absent=True))
    transaction.add(
        "guarded",
        table.update_op(
            {"PK": "TEST#a", "SK": "missing"},
            dynamo.Update(add={"n": 1}),
            condition=Attr("PK").exists(),
            return_old_on_failure=True,
        ),
    )
    # when
    with pytest.raises(dynamo.TransactionCancelled) as cancelled:
        table.transact(transaction, busy="test items")
    # then
    assert set(cancelled.value.failed_labels()) == {"taken", "guarded"}
    assert cancelled.value.reason("taken").item == item("a", "taken", n=1)
    assert cancelled.value.reason("guarded").item is None
    assert not cancelled.value.failed("fresh")
    assert table.get({"PK": "TEST#a", "SK": "fresh"}) is None


def test_a_transaction_refuses_a_label_used_twice() -> None:
    transaction = dynamo.Transaction().add("x", {"ConditionCheck": {}})  # type: ignore[typeddict-item]
    with pytest.raises(ValueError, match="used twice"):
        transaction.add("x", {"ConditionCheck": {}})  # type: ignore[typeddict-item]


# -- pages -----------------------------------------------------------------------------------------------


def test_a_query_page_follows_its_cursor_to_the_end_with_a_filter_and_a_sort_key_condition(
    table: dynamo.Table,
) -> None:
    # given
    for n in range(7):
        table.put_if_absent(item("a", f"LINE#{n}", owner="U1" if n != 3 else "U2"))
    table.put_if_absent(item("a", "META"))
    # when
    seen: list[str] = []
    cursor = None
    for _ in range(10):
        found, cursor = query_page(
            table,
            CODEC,
            "lines:a",
            dynamo.BASE_TABLE,
            "TEST#a",
            2,
            cursor,
            where=lambda sk: sk.begins_with("LINE#"),
            filter=Attr("owner").eq("U1"),
        )
        seen += [i["SK"] for i in found]
        if cursor is None:
            break
    # then
    assert seen == [f"LINE#{n}" for n in range(7) if n != 3]
    with pytest.raises(InvalidCursor):
        query_page(table, CODEC, "lines:b", dynamo.BASE_TABLE, "TEST#b", 2, CODEC.encode("lines:a", {}))


def merged_all(table: dynamo.Table, sources: list[Source], limit: int, newest_first: bool) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor = None
    for _ in range(50):
        found, cursor = merged_page(table, CODEC, "merged", sources, limit, cursor, newest_first=newest_first)
        pages.append([i["SK"] for i in found])
        if cursor is None:
            return pages
    raise AssertionError("the pager never ended")


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 9, 10, 50])
@pytest.mark.parametrize("newest_first", [True, False])
def test_a_merged_page_walks_every_source_in_sort_order_without_gaps_or_repeats(
    table: dynamo.Table, limit: int, newest_first: bool
) -> None:
    # given: three partitions with interleaved sort keys, one of them empty
    times = {"a": [1, 4, 5, 9], "b": [2, 3, 7, 8, 10], "c": [6]}
    for partition, moments in times.items():
        for moment in moments:
            table.put_if_absent(item(partition, f"2026-03-05T10:00:{moment:02d}.000Z#{partition}"))
    sources = [Source(dynamo.BASE_TABLE, f"TEST#{p}") for p in ("a", "b", "c", "empty")]
    expected = sorted((sk for p, ms in times.items() for sk in (f"2026-03-05T10:00:{m:02d}.000Z#{p}" for m in ms)))
    # when
    pages = merged_all(table, sources, limit, newest_first)
    # then
    walked = [sk for page in pages for sk in page]
    assert walked == (expected[::-1] if newest_first else expected)
    assert all(len(page) == limit for page in pages[:-1])
    assert pages[-1] or len(pages) == 1, "an empty last page costs the client a request"


def test_a_merged_cursor_is_refused_by_another_scope_or_another_set_of_sources(table: dynamo.Table) -> None:
    # given
    for n in range(3):
        table.put_if_absent(item("a", f"{n}"))
    sources = [Source(dynamo.BASE_TABLE, "TEST#a"), Source(dynamo.BASE_TABLE, "TEST#b")]
    _, cursor = merged_page(table, CODEC, "merged", sources, 1, None)
    # when / then
    with pytest.raises(InvalidCursor):
        merged_page(table, CODEC, "another", sources, 1, cursor)
    with pytest.raises(InvalidCursor):
        merged_page(table, CODEC, "merged", sources[:1], 1, cursor)


def test_a_merged_cursor_holds_one_watermark_whatever_the_sources_keys(table: dynamo.Table) -> None:
    # given: 40 sources whose partition keys are long, two items each
    sources = [Source(dynamo.BASE_TABLE, f"TEST#{n:02d}{'x' * 300}") for n in range(40)]
    for n in range(40):
        for k in range(2):
            table.put_if_absent(item(f"{n:02d}{'x' * 300}", f"2026-03-05T10:{k:02d}:{n:02d}.000Z#{n}"))
    # when
    pages = merged_all(table, sources, 7, newest_first=True)
    # then: every item once, and no cursor longer than a sort key and a digit per four sources need
    assert sum(map(len, pages)) == 80
    _, cursor = merged_page(table, CODEC, "merged", sources, 7, None)
    assert cursor is not None
    assert len(cursor) < 200
