"""The transactional outbox, its write side: the integration event and the item a context writes in
the same transaction as the change it reports. Each context gives the keys of its outbox items
(``OutboxKeys``, declared in its ``keys.py``).

The relay side (the stream relay, the sweeper, marking events published) is ``outbox_relay``: an API
writes outbox items and never relays them, so it imports this module alone, and with it none of the
stream-record machinery (``streams``, ``exactly_once``, Powertools' data classes) the relay runs on.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shopfeed.platform import dynamo
from shopfeed.platform.models import Model


class OutboxEvent(Model):
    """An integration event written in the same transaction as the change it reports."""

    event_id: str
    event_type: str
    source: str
    aggregate_id: str
    occurred_at: str
    detail: dict[str, Any]


@dataclass(frozen=True)
class OutboxKeys:
    """Where a context keeps its outbox items (its ``keys.py`` declares one).

    ``unpublished`` is a sparse index whose sort key starts with the event's ISO-8601 ``occurred_at``
    (so "occurred before" is a sort-key bound), spread over the ``partitions`` of its write shards.
    """

    entity_type: str
    item_key: Callable[[str], Mapping[str, str]]
    unpublished_key: Callable[[str, str], Mapping[str, str]]
    unpublished: dynamo.IndexSpec
    partitions: Sequence[str]
    event_id_of: Callable[[str], str]

    def item(self, event: OutboxEvent) -> dynamo.Item:
        """The stored outbox item of ``event``, unpublished."""
        return {
            **self.item_key(event.event_id),
            **self.unpublished_key(event.event_id, event.occurred_at),
            "entity_type": self.entity_type,
            **event.model_dump(),
        }


def event_from(item: Mapping[str, Any]) -> OutboxEvent:
    return OutboxEvent.model_validate({k: item[k] for k in OutboxEvent.model_fields})
