"""Record handlers of the CommerceTable stream consumer (functions/commerce_stream routes to them).

Each handler gets every record of its type in the batch and answers the failed ones; each is
idempotent, because a partial-batch retry delivers again every record after the first failure
(``platform.exactly_once``).
"""

from collections.abc import Sequence

from shopfeed.commerce import bootstrap
from shopfeed.platform import outbox, streams
from shopfeed.platform.clock import utc_now


def relay_outbox_events(changes: Sequence[streams.ItemChange]) -> streams.Failures:
    """New outbox items → the event bus (the platform's relay, on the commerce outbox)."""
    publisher, repository = bootstrap.relay_ports()
    return outbox.relay_records(changes, publisher, repository, utc_now())
