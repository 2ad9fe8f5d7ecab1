"""The email port and its Amazon SES adapter (SES API v2, ``SendEmail``).

SES has no idempotency key: a ``SendEmail`` whose answer is lost may have sent the email, and sending it
again sends a second one. The worker's guard item (``ledger``) is what keeps an event to one email; this
module only tells a send that did not happen (``EmailUnavailable``: try again later) from one SES will
never accept (``EmailRejected``: trying again cannot help).
"""

from collections.abc import Mapping
from typing import Any, Final, Protocol

from botocore.exceptions import BotoCoreError, ClientError

# Errors about this one message: an address SES refuses, a message it cannot take. Any other error
# (throttling, a paused account, an unverified sender, a 5xx, a lost connection) is about SES or its
# configuration, and the message waits on the queue for it to be fixed.
_REJECTIONS: Final = frozenset({"MessageRejected", "BadRequestException"})


class EmailUnavailable(Exception):
    """The email was not sent now (SES throttled, failed or could not be reached): try again later."""


class EmailRejected(Exception):
    """SES refused this email for good (a malformed address): sending it again would be refused too."""


class EmailSender(Protocol):
    """Where emails go out (SesSender, or an in-memory fake in unit tests)."""

    def send(self, to: str, subject: str, body: str, event_id: str) -> str:
        """Send a plain-text email to ``to`` about the event ``event_id``; the provider's message id.
        Raises EmailUnavailable or EmailRejected."""
        ...


class _SesV2(Protocol):
    # The one call the adapter makes (boto3's sesv2 client; no type stubs are installed for it).
    def send_email(self, **request: Any) -> Mapping[str, Any]: ...


class SesSender:
    """Amazon SES: plain-text emails from the configured sender address (a verified identity)."""

    def __init__(self, client: _SesV2, sender: str) -> None:
        self._client = client
        self._sender = sender

    def send(self, to: str, subject: str, body: str, event_id: str) -> str:
        try:
            answer = self._client.send_email(
                FromEmailAddress=self._sender,
                Destination={"ToAddresses": [to]},
                Content={
                    "Simple": {
                        "Subject": {"Data": subject, "Charset": "UTF-8"},
                        "Body": {"Text": {"Data": body, "Charset": "UTF-8"}},
                    }
                },
                # The event travels with the email (SES event destinations, the local sink's page show it).
                EmailTags=[{"Name": "event_id", "Value": event_id}],
            )
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "")
            if code in _REJECTIONS:
                raise EmailRejected(f"{code}: {error}") from error
            raise EmailUnavailable(f"{code}: {error}") from error
        except BotoCoreError as error:  # no answer at all: connection refused, timed out
            raise EmailUnavailable(str(error)) from error
        return str(answer["MessageId"])
