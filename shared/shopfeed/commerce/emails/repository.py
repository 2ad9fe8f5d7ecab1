"""The email worker's CommerceTable: the customer's address, and the guard item of each event's email.

The guard (``NOTICE#<event_id>`` / ``EMAIL``) is claimed before the email is sent and settled after:

- ``claim``: one conditional UpdateItem creates it as ``Sending`` with a lease (``claimed_until``), or
  takes over a ``Sending`` claim whose lease ran out (its holder crashed or lost SES's answer). A settled
  guard (``Sent``, ``Skipped``, ``Rejected``) or a live claim refuses: that event's email is done, or
  being sent right now by another delivery of the same event.
- ``settle``: the outcome, written only by the claim's holder (``claim = :token``).
- ``release``: a send that did not happen (SES unavailable) gives its claim back, so the retry can claim.

Powertools' idempotency utility does the same dance, but with a sort key it puts every record in one
static partition (every email of the shop claiming in one partition), writes no ``entity_type``, and does
not say whether a claim was taken over (the one case where an email may go out twice; see
docs/data-model.md). The guard lives in the event's own partition instead.
"""

from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Final

from boto3.dynamodb.conditions import Attr

from shopfeed.commerce import customers, items, keys
from shopfeed.commerce.emails.notices import Notice
from shopfeed.platform import dynamo
from shopfeed.platform.clock import epoch_seconds, iso
from shopfeed.platform.dynamo import ConditionFailed, Update

# A guard outlives every redelivery of its event: EventBridge retries for 24 h, the email queue keeps a
# message 4 days and its DLQ 14 days (a redrive from the DLQ must still find the guard).
RETENTION: Final = timedelta(days=30)


class NoticeStatus(StrEnum):
    SENDING = "Sending"  # claimed: an email may be going out now
    SENT = "Sent"
    SKIPPED = "Skipped"  # no address to send to
    REJECTED = "Rejected"  # SES refused the email for good


class EmailDone(Exception):
    """The event's email was settled already (sent, skipped or rejected): nothing more to do."""

    def __init__(self, status: str) -> None:
        super().__init__(f"the email was settled already: {status}")
        self.status = status


class EmailInFlight(Exception):
    """Another delivery of the same event holds the claim (its lease is running): try again later."""


@dataclass(frozen=True)
class Claim:
    token: str
    taken_over: bool  # a claim whose lease ran out was taken over: its holder may have sent the email


@dataclass(frozen=True)
class Recipient:
    email: str
    name: str


class EmailRepository:
    def __init__(self, table: dynamo.Table, lease: timedelta) -> None:
        self._table = table
        self._lease = lease

    def recipient(self, user_id: str) -> Recipient | None:
        """The customer's address and name (the commerce customer item, ECOM-001); None when there is no
        customer or no address."""
        item = self._table.get(customers.customer_key(user_id), consistent=False)
        if item is None or not item.get("email"):
            return None
        customer = customers.customer_from(item)
        return Recipient(email=customer.email, name=customer.name)

    def claim(self, notice: Notice, token: str, now: datetime) -> Claim:
        """Claim the event's email for ``token``. Raises EmailDone or EmailInFlight."""
        free = Attr("PK").not_exists() | (
            Attr("status").eq(NoticeStatus.SENDING.value) & Attr("claimed_until").lt(iso(now))
        )
        change = Update(
            set={
                "entity_type": items.EMAIL_NOTICE,
                "event_id": notice.event_id,
                "event_type": notice.event_type,
                "order_id": notice.order_id,
                "user_id": notice.user_id,
                "status": NoticeStatus.SENDING.value,
                "claim": token,
                "claimed_until": iso(now + self._lease),
                "expires_at": epoch_seconds(now + RETENTION),
            },
            add={"claims": 1},
        )
        try:
            written = self._table.update(keys.email_notice(notice.event_id), change, free)
        except ConditionFailed as refused:
            status = (refused.current or {}).get("status")
            if status == NoticeStatus.SENDING.value:
                raise EmailInFlight(notice.event_id) from None
            raise EmailDone(str(status)) from None
        return Claim(token=token, taken_over=int(written["claims"]) > 1)

    def settle(self, notice: Notice, claim: Claim, status: NoticeStatus, now: datetime, message_id: str = "") -> bool:
        """Record the outcome under ``claim``; False when the claim was lost (its lease ran out and another
        delivery took it over before this one finished)."""
        outcome = {"status": status.value, "settled_at": iso(now), **({"message_id": message_id} if message_id else {})}
        try:
            self._table.update(
                keys.email_notice(notice.event_id),
                Update(set=outcome, remove=("claimed_until",)),
                Attr("claim").eq(claim.token),
            )
        except ConditionFailed:
            return False
        return True

    def release(self, notice: Notice, claim: Claim) -> None:
        """Give the claim back (the email was not sent): the next delivery claims afresh."""
        # A claim taken over already belongs to the other delivery now: it is left alone.
        with suppress(ConditionFailed):
            self._table.delete(
                keys.email_notice(notice.event_id),
                Attr("claim").eq(claim.token) & Attr("status").eq(NoticeStatus.SENDING.value),
            )
