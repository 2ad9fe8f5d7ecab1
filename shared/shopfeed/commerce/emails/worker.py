"""The email worker: each message of the email queue is one commerce event from the bus (EventBridge
rule → EmailQueue); the customer gets one email per event id, however often the event comes.

Per message: read the event (``notices``) → claim its guard (``repository``) → read the customer's
address → render → send (``sender``) → settle the guard. The claim comes **before** the send, so two
deliveries of one event (EventBridge and SQS both deliver at least once, the outbox may publish an
event twice with the same id) never both send: the second finds the claim or the settled guard. If the
worker dies, or loses SES's answer, between the send and the settle, the claim's lease runs out and a
later delivery takes it over and sends again: at least once in that window, never lost (the choice is
argued in docs/data-model.md, decision 115). A send SES did not take gives its claim back.

What can never succeed is acknowledged, logged and counted, so it cannot poison the queue: an event no
customer hears about, a message that is not a commerce event, a customer without an address, an email
SES refuses for good. What may succeed later (SES throttling or unavailable, another delivery holding
the claim, DynamoDB unavailable) fails its message alone, held back on the queue longer after each
failure (``BACKOFF``), and reaches EmailDLQ after the queue's maxReceiveCount (an alarm watches it).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Final

from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSEvent
from botocore.exceptions import BotoCoreError, ClientError

from shopfeed.commerce.emails.notices import notice_from, template_for
from shopfeed.commerce.emails.repository import EmailDone, EmailInFlight, EmailRepository, NoticeStatus
from shopfeed.commerce.emails.sender import EmailRejected, EmailSender, EmailUnavailable
from shopfeed.platform import queues
from shopfeed.platform.clients import BUDGETS
from shopfeed.platform.clock import new_id, utc_now
from shopfeed.platform.errors import DependencyUnavailable
from shopfeed.platform.observability import logger, metrics
from shopfeed.platform.queues import Backoff, Redelivery

# A message that failed comes back after 30 s, 1, 2, 4, 8 min, then every 15 min: with the queue's
# maxReceiveCount of 10 (template.yaml) an SES outage of about 1.5 hours is outlived before EmailDLQ.
BACKOFF: Final = Backoff(base=30, cap=900)


class Outcome(StrEnum):
    SENT = "EmailSent"
    ALREADY_DONE = "EmailAlreadySent"
    NOT_TOLD = "EmailSkippedEventNotTold"  # an event type (or status) customers are not emailed about
    UNREADABLE = "EmailSkippedUnreadable"
    NO_ADDRESS = "EmailSkippedNoAddress"
    REJECTED = "EmailRejected"


@dataclass(frozen=True)
class EmailPorts:
    repository: EmailRepository
    sender: EmailSender
    redelivery: Redelivery


# Failures before SES took the email: SES's own, or DynamoDB's while reading the customer.
_NOT_SENT: Final = (EmailUnavailable, DependencyUnavailable, ClientError, BotoCoreError)


def send_once(body: str, repository: EmailRepository, sender: EmailSender, now: datetime) -> Outcome:
    """One message: the event's email sent, unless it was already (see the module docstring). Raises
    EmailUnavailable, EmailInFlight or an unavailable DynamoDB: the message is tried again later."""
    try:
        notice = notice_from(body)
    except ValueError as error:
        logger.warning("email event unreadable", error=str(error))
        return Outcome.UNREADABLE
    template = template_for(notice)
    if template is None:
        logger.info("event not emailed", event_id=notice.event_id, event_type=notice.event_type)
        return Outcome.NOT_TOLD
    try:
        email = template.render(notice)
    except ValueError as error:
        logger.warning("email event unreadable", event_id=notice.event_id, error=str(error))
        return Outcome.UNREADABLE
    try:
        claim = repository.claim(notice, new_id(now), now)
    except EmailDone as done:
        logger.info("email already settled", event_id=notice.event_id, status=done.status)
        return Outcome.ALREADY_DONE
    if claim.taken_over:
        # The claim's earlier holder died or lost SES's answer: its email may have gone out already.
        logger.warning("email claim taken over", event_id=notice.event_id, order_id=notice.order_id)
        metrics.add_metric(name="EmailClaimTakenOver", unit="Count", value=1)
    try:
        recipient = repository.recipient(notice.user_id)
        if recipient is None:
            logger.warning("customer has no email address", event_id=notice.event_id, user_id=notice.user_id)
            repository.settle(notice, claim, NoticeStatus.SKIPPED, now)
            return Outcome.NO_ADDRESS
        message_id = sender.send(recipient.email, email.subject, email.body_for(recipient.name), notice.event_id)
    except EmailRejected as rejected:
        logger.warning("email rejected", event_id=notice.event_id, user_id=notice.user_id, error=str(rejected))
        repository.settle(notice, claim, NoticeStatus.REJECTED, now)
        return Outcome.REJECTED
    except _NOT_SENT:
        # Nothing went out: the claim is given back, so the retry claims at once instead of waiting
        # out the lease (and being counted as a takeover).
        repository.release(notice, claim)
        raise
    if not repository.settle(notice, claim, NoticeStatus.SENT, utc_now(), message_id):
        logger.warning("email sent after its claim was taken over", event_id=notice.event_id)
    logger.info("email sent", event_id=notice.event_id, event_type=notice.event_type, order_id=notice.order_id)
    return Outcome.SENT


# What fails a message for now (it comes back after its backoff); anything else is a bug and fails the batch.
_RETRIED: Final = (EmailUnavailable, EmailInFlight, DependencyUnavailable, ClientError, BotoCoreError)


class NotStarted(Exception):
    """The invocation had too little time left to start this message: it comes back, unclaimed."""


# A message is begun only with time for its slowest SES call left (the background budget's worst case,
# platform.clients): a batch that meets a degraded SES stops between messages, its rest coming back
# later, instead of being cut by the Timeout in the middle of one (whose claim would then have to run out).
START_MARGIN_MS: Final = int(BUDGETS["background"].worst_case_s() * 1000)


def handle_messages(
    event: Mapping[str, Any],
    ports: EmailPorts,
    remaining_ms: Callable[[], int],
    backoff: Backoff = BACKOFF,
    clock: Callable[[], datetime] = utc_now,
) -> PartialItemFailureResponse:
    """The worker's whole handler: each message sent once (``send_once``), counted by outcome; the
    failed ones held back on the queue by their receive count (``queues.retry_later``). The first message
    is always begun (each invocation makes progress); a later one only with ``START_MARGIN_MS`` left."""
    records = list(SQSEvent(dict(event)).records)
    failures: dict[str, Exception] = {}
    for position, record in enumerate(records):
        if position and remaining_ms() < START_MARGIN_MS:
            failures |= dict.fromkeys((r.message_id for r in records[position:]), NotStarted())
            logger.warning("emails left for a later invocation", messages=len(records) - position)
            break
        try:
            outcome = send_once(record.body, ports.repository, ports.sender, clock())
        except _RETRIED as error:
            failures[record.message_id] = error
            logger.warning("email not sent, retried later", message_id=record.message_id, error=str(error))
            metrics.add_metric(name="EmailRetried", unit="Count", value=1)
            continue
        metrics.add_metric(name=outcome.value, unit="Count", value=1)
    return queues.retry_later(records, failures, ports.redelivery, backoff)
