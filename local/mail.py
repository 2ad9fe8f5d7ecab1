"""The local stack's email sink: SES API v2's ``SendEmail``, as the order email worker calls it, answered
by the stack itself, and what it took listed at ``GET /__local/mail``.

The functions reach it through ``AWS_ENDPOINT_URL_SESV2`` (``Engines.ses_endpoint``), so the worker's SES
adapter runs unchanged. moto's SES would take the call too, but it runs in its own process and offers
no way to read back what was sent; the sink keeps every email in this process, newest last, bounded.
Only the simple (plain text or HTML) content the worker sends is understood; anything else is a 400,
as SES answers a malformed request.
"""

import json
import threading
import uuid
from collections import deque
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Final

from local.gateway import HttpRequest, HttpResponse

SEND_PATH: Final = "/ses/v2/email/outbound-emails"  # under /__local: the SESv2 endpoint plus SendEmail's path
KEPT: Final = 1000  # the page shows the newest this many


@dataclass(frozen=True)
class SentMail:
    message_id: str
    sent_at: str
    sender: str
    to: list[str]
    subject: str
    body: str
    event_id: str | None  # the worker tags each email with the event that caused it


class MailSink:
    def __init__(self, kept: int = KEPT) -> None:
        self._sent: deque[SentMail] = deque(maxlen=kept)
        self._lock = threading.Lock()

    def send_email(self, request: HttpRequest) -> HttpResponse:
        """``POST .../v2/email/outbound-emails``: keep the email, answer its new message id."""
        try:
            mail = _mail_of(json.loads(request.body or b"{}"))
        except (ValueError, KeyError, TypeError) as error:
            refusal = {"message": f"not a SendEmail request the sink understands: {error}"}
            return HttpResponse.json(400, refusal, [("x-amzn-errortype", "BadRequestException")])
        with self._lock:
            self._sent.append(mail)
        return HttpResponse.json(200, {"MessageId": mail.message_id})

    def listed(self) -> list[dict[str, Any]]:
        """What was sent, oldest first (to, subject, body, event id, ...)."""
        with self._lock:
            return [asdict(mail) for mail in self._sent]


def _mail_of(request: dict[str, Any]) -> SentMail:
    simple = request["Content"]["Simple"]
    body = simple["Body"].get("Text") or simple["Body"]["Html"]
    tags = {tag["Name"]: tag["Value"] for tag in request.get("EmailTags") or []}
    to = [str(address) for address in request["Destination"]["ToAddresses"]]
    if not to or not all("@" in address for address in to):  # SES refuses an illegal address too
        raise ValueError(f"illegal address in {to}")
    return SentMail(
        message_id=f"local-{uuid.uuid4()}",
        sent_at=datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        sender=str(request["FromEmailAddress"]),
        to=to,
        subject=str(simple["Subject"]["Data"]),
        body=str(body["Data"]),
        event_id=tags.get("event_id"),
    )
