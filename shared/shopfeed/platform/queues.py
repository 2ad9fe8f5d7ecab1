"""Sending messages to SQS in batches, with each refused message reported on its own.

SendMessageBatch, like PutEvents, answers HTTP 200 with per-entry failures: a caller that does not
read ``Failed`` loses messages silently.
"""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

MAX_BATCH: Final = 10  # SQS's limit per SendMessageBatch


def send_all(client: "SQSClient", queue_url: str, bodies: Sequence[str]) -> dict[int, str]:
    """Send every body; returns why each refused message failed, by its position in ``bodies``."""
    refused: dict[int, str] = {}
    for start in range(0, len(bodies), MAX_BATCH):
        chunk = bodies[start : start + MAX_BATCH]
        response = client.send_message_batch(
            QueueUrl=queue_url,
            Entries=[{"Id": str(start + n), "MessageBody": body} for n, body in enumerate(chunk)],
        )
        for failure in response.get("Failed", []):
            refused[int(failure["Id"])] = f"{failure['Code']}: {failure.get('Message', '')}"
    return refused
