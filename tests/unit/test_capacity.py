"""The capacity and cost arithmetic of ``bench.capacity`` (docs/data-model.md, "Capacity and cost (measured)")."""

import re
from pathlib import Path

import pytest

from bench import capacity
from bench.capacity import Cost, Load, Use, assemble, on_demand, parse_report, provisioned
from shopfeed.commerce import keys as commerce_keys
from shopfeed.feed import keys as feed_keys

HEADER = "route | case | pattern | status | round trips | calls | RCU | WCU | of which indexes | by table and index"
ROWS = [
    "`POST /orders` | 1 line | ECOM-009 | 201 | 1 | TransactWriteItems | 0 | 18 * | 8 | "
    "write: CommerceTable 10, OrdersByUser 2, UnpublishedOutbox 6",
    "`POST /orders` | short of stock | ECOM-009 | 409 | 1 | TransactWriteItems | 0 | – | – | –",
    "`GET /orders/{order_id}` | 5 lines | ECOM-003 | 200 | 1 | Query | 1 | 0 | 0 | read: CommerceTable 1",
    "`POST /posts` | new | – | 201 | 2 | GetItem + TransactWriteItems | 1 | 6 * | 2 | "
    "read: FeedTable 1; write: FeedTable 4, PostsByAuthor 2",
]
SIZES = [
    "entity type | items | median bytes | largest bytes",
    "--- | ---: | ---: | ---:",
    "`OutboxEvent` | 40 | 1500 | 1800",
]
MARKS = "| --- | --- | --- | --- | ---: | --- | ---: | ---: | ---: | --- |"
REPORT = "\n".join([f"| {HEADER} |", MARKS, *(f"| {row} |" for row in ROWS), "", *(f"| {row} |" for row in SIZES), ""])
INDEXES = {"CommerceTable": [("OrdersByUser", "INCLUDE"), ("UnpublishedOutbox", "INCLUDE")]}


def test_a_row_is_read_with_its_shares_by_table_and_index_and_a_refused_one_is_left_out() -> None:
    measured = parse_report(REPORT)

    assert measured.rows[("POST /orders", "1 line")] == Cost(
        {}, {"CommerceTable": 10, "OrdersByUser": 2, "UnpublishedOutbox": 6}
    )
    assert measured.rows[("POST /posts", "new")] == Cost({"FeedTable": 1}, {"FeedTable": 4, "PostsByAuthor": 2})
    assert ("POST /orders", "short of stock") not in measured.rows
    assert measured.sizes == {"OutboxEvent": 1500}


def test_on_demand_bills_the_average_units_over_a_730_hour_month() -> None:
    reads, writes = on_demand(reads_per_s=1.0, writes_per_s=1.0)

    # 1 unit a second for 730 h is 2.628 million units; $0.125 and $0.625 a million.
    assert reads == pytest.approx(2.628 * 0.125)
    assert writes == pytest.approx(2.628 * 0.625)


def test_provisioned_keeps_the_average_at_the_target_utilisation_and_never_below_one_unit() -> None:
    units, dollars = provisioned(7.0, unit_hour=0.00065)
    assert units == pytest.approx(10.0)
    assert dollars == pytest.approx(10 * 730 * 0.00065)

    assert provisioned(0.01, unit_hour=0.00065)[0] == 1.0


def test_a_load_costs_its_rows_times_their_counts_per_second_and_at_peak() -> None:
    load = Load(
        "X",
        "orders with a read",
        per_day=86_400 * 2,  # 2 a second
        uses=(Use("POST /orders", "1 line", 0.5), Use("GET /orders/{order_id}", "5 lines")),
        peak=3,
    )
    built = assemble(parse_report(REPORT), [load], INDEXES)

    writes = {"CommerceTable": 5, "OrdersByUser": 1, "UnpublishedOutbox": 3}
    assert built.loads[0][1] == Cost({"CommerceTable": 1}, writes)
    assert built.per_second().writes == {"CommerceTable": 10, "OrdersByUser": 2, "UnpublishedOutbox": 6}
    assert built.per_second(peak=True).reads == {"CommerceTable": 6}
    assert built.loads[0][2] == "`POST /orders` (1 line) × 0.5 + `GET /orders/{order_id}` (5 lines)"


def test_a_load_naming_a_row_the_report_lacks_fails_loudly() -> None:
    with pytest.raises(KeyError, match="no measured row"):
        assemble(parse_report(REPORT), [Load("X", "gone", 1, (Use("GET /gone", "case"),))], INDEXES)


def test_the_relay_is_computed_from_the_measured_event_size() -> None:
    relay, _ = capacity.computed_costs(parse_report(REPORT).sizes)["relay"]

    # 1,500 B: 2 KB started, twice in a transaction; its index entry removed; a strong read under 4 KB.
    assert relay == Cost({"CommerceTable": 1}, {"CommerceTable": 4, "UnpublishedOutbox": 1})


def test_the_tables_list_every_index_and_the_money_adds_up() -> None:
    load = Load("X", "orders", per_day=86_400, uses=(Use("POST /orders", "1 line"),))
    text = capacity.markdown(assemble(parse_report(REPORT), [load], INDEXES))

    # 18 WCU a second on demand: 18 × 2.628 × $0.625 = $29.57; the index without writes still listed.
    assert "| **all** |  |  |  |  |  |  | **$29.57** |" in text
    assert "| CommerceTable / `OrdersByUser` | INCLUDE | 2.00 | 20.0% | $3.29 |" in text
    assert "| CommerceTable / `UnpublishedOutbox` | INCLUDE | 6.00 | 60.0% |" in text


def test_every_index_of_both_tables_is_read_from_the_template() -> None:
    indexes = capacity.template_indexes()

    assert [name for name, _ in indexes["CommerceTable"]] == [i.name for i in commerce_keys.INDEXES]
    assert {name for name, _ in indexes["FeedTable"]} >= {i.name for i in feed_keys.INDEXES if i.name}


def test_the_section_in_the_data_model_is_what_the_script_prints_from_the_committed_report() -> None:
    """Re-run ``python -m bench.capacity --write`` after ``make bench`` or an index change."""
    written = capacity.DATA_MODEL.read_text()
    found = re.search(re.escape(capacity.BEGIN) + ".*?" + re.escape(capacity.END), written, re.DOTALL)

    assert found is not None
    expected = capacity.markdown(
        assemble(parse_report(capacity.REPORT.read_text()), capacity.LOADS, capacity.template_indexes())
    )
    assert found.group(0) == expected


def test_writing_replaces_only_the_marked_section(tmp_path: Path) -> None:
    document = tmp_path / "model.md"
    document.write_text(f"before\n{capacity.BEGIN}\nold\n{capacity.END}\nafter\n")

    capacity.write_into(document, f"{capacity.BEGIN}\nnew\n{capacity.END}")

    assert document.read_text() == f"before\n{capacity.BEGIN}\nnew\n{capacity.END}\nafter\n"

    plain = tmp_path / "plain.md"
    plain.write_text("no markers\n")
    with pytest.raises(SystemExit):
        capacity.write_into(plain, "x")
    assert plain.read_text() == "no markers\n"
