"""The fanout worker's use case (one page per task) against the in-memory store and queue."""

import pytest

from shopfeed.feed.home.fanout import FanoutAction, FanoutTask, run_page
from shopfeed.feed.models import FeedEntry
from shopfeed.platform.queues import TaskNotQueued
from tests.unit.fanout_fakes import InMemoryFanout
from tests.unit.queue_fakes import InMemoryQueue

POST = "01M81B5H80VT7TZWRY7NSHD6TE"
ENTRY = FeedEntry(post_id=POST, author_id="U100", created_at="2026-11-22T10:00:00.000Z")


def task(action: FanoutAction = FanoutAction.ADD, page: str | None = None) -> FanoutTask:
    return FanoutTask(action=action, entry=ENTRY, page=page)


def audience(size: int) -> list[str]:
    return [f"U{n:05d}" for n in range(size)]


def drain(store: InMemoryFanout, queue: InMemoryQueue, page_size: int) -> int:
    """Run every queued task, including the ones they enqueue; returns how many ran."""
    ran = 0
    while (next_task := queue.take()) is not None:
        run_page(next_task, store, queue, page_size)
        ran += 1
    return ran


def test_a_post_reaches_every_follower_one_page_per_task() -> None:
    # given
    store, queue = InMemoryFanout(posts={POST}, audience={"U100": audience(25)}), InMemoryQueue([task()])
    # when
    ran = drain(store, queue, page_size=10)
    # then
    assert ran == 3
    assert store.feed_of(POST) == audience(25)
    assert store.entry_writes == 25


def test_a_page_writes_its_followers_and_enqueues_the_next_page_only() -> None:
    # given
    store, queue = InMemoryFanout(posts={POST}, audience={"U100": audience(25)}), InMemoryQueue()
    # when
    report = run_page(task(), store, queue, page_size=10)
    # then
    assert (report.written, report.continued) == (10, True)
    assert store.feed_of(POST) == audience(10)
    assert queue.tasks == [task(page="10")]


def test_the_last_page_enqueues_nothing() -> None:
    # given
    store, queue = InMemoryFanout(posts={POST}, audience={"U100": audience(25)}), InMemoryQueue()
    # when
    report = run_page(task(page="20"), store, queue, page_size=10)
    # then
    assert (report.written, report.continued) == (5, False)
    assert queue.tasks == []


def test_redelivering_every_task_writes_the_same_entries_again() -> None:
    # given a fanout that ran once, and a copy of every task it ran
    store, queue = InMemoryFanout(posts={POST}, audience={"U100": audience(25)}), InMemoryQueue([task()])
    delivered = [task(), task(page="10"), task(page="20")]
    drain(store, queue, page_size=10)
    first = dict(store.entries)
    # when every message is delivered once more
    for again in delivered:
        run_page(again, store, queue, page_size=10)
    drain(store, queue, page_size=10)
    # then
    assert store.entries == first
    assert len(store.entries) == 25


def test_a_post_deleted_before_its_fanout_writes_nothing_and_stops_the_chain() -> None:
    # given
    store, queue = InMemoryFanout(posts=set(), audience={"U100": audience(25)}), InMemoryQueue()
    # when
    report = run_page(task(), store, queue, page_size=10)
    # then
    assert report.post_gone
    assert store.entries == {}
    assert queue.tasks == []


def test_a_post_deleted_while_a_page_is_written_leaves_no_entry_of_that_page() -> None:
    # given the post is deleted (and its REMOVE fanout has passed) while the page's entries are written
    store, queue = InMemoryFanout(posts={POST}, audience={"U100": audience(25)}), InMemoryQueue()
    store.after_add = lambda: store.posts.discard(POST)
    # when
    report = run_page(task(), store, queue, page_size=10)
    # then
    assert report.post_gone
    assert store.feed_of(POST) == []
    assert queue.tasks == []


def test_a_post_deleted_mid_chain_leaves_no_entry_once_its_removal_has_run() -> None:
    # given the first page ran, then the post was deleted and its REMOVE task queued behind the chain
    store, queue = InMemoryFanout(posts={POST}, audience={"U100": audience(25)}), InMemoryQueue()
    run_page(task(), store, queue, page_size=10)
    store.posts.discard(POST)
    queue.tasks.append(task(FanoutAction.REMOVE))
    # when
    drain(store, queue, page_size=10)
    # then
    assert store.feed_of(POST) == []


def test_a_removal_deletes_the_entries_page_by_page() -> None:
    # given
    store, queue = InMemoryFanout(posts={POST}, audience={"U100": audience(25)}), InMemoryQueue([task()])
    drain(store, queue, page_size=10)
    store.posts.discard(POST)
    # when
    queue.tasks.append(task(FanoutAction.REMOVE))
    ran = drain(store, queue, page_size=10)
    # then
    assert ran == 3
    assert store.entries == {}


def test_a_refused_next_page_fails_the_task_so_its_message_comes_back() -> None:
    # given
    store, queue = InMemoryFanout(posts={POST}, audience={"U100": audience(25)}), InMemoryQueue(refuse=True)
    # when
    with pytest.raises(TaskNotQueued):
        run_page(task(), store, queue, page_size=10)
    # then the page was written; the redelivered message writes it again and enqueues the next page
    queue.refuse = False
    run_page(task(), store, queue, page_size=10)
    assert queue.tasks == [task(page="10")]
    assert store.feed_of(POST) == audience(10)


def test_a_task_survives_the_queue_as_json() -> None:
    # given
    sent = task(FanoutAction.REMOVE, page='{"PK": {"S": "x"}}')
    # when
    received = FanoutTask.model_validate_json(sent.model_dump_json())
    # then
    assert received == sent
