"""The local S3's POST-policy check (local/moto_server.py): it must refuse what S3 refuses, or the media
tests on the local stack would pass where AWS fails. Forms are made by boto3, as the feed API makes them."""

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.config import Config

from local.moto_server import Refused, check_form, lighten_moto

SECRETS = {"local": "local"}
BUCKET = "mediabucket"


def form(expires_in: int = 600, secret: str = "local") -> dict[str, str]:
    client = boto3.client(
        "s3",
        endpoint_url="http://127.0.0.1:1",
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key=secret,
        config=Config(signature_version="s3v4"),
    )
    presigned = client.generate_presigned_post(
        BUCKET,
        "uploads/U1/M1",
        Fields={"Content-Type": "image/png", "x-amz-meta-owner": "U1"},
        Conditions=[{"Content-Type": "image/png"}, {"x-amz-meta-owner": "U1"}, ["content-length-range", 1, 100]],
        ExpiresIn=expires_in,
    )
    return {name.lower(): value for name, value in presigned["fields"].items()}


def check(fields: dict[str, str], size: int = 10, bucket: str = BUCKET, **at: Any) -> None:
    check_form(bucket, fields, size, SECRETS, at.get("now", datetime.now(UTC)))


def refusal(fields: dict[str, str], size: int = 10, **options: Any) -> tuple[int, str]:
    with pytest.raises(Refused) as refused:
        check(fields, size, **options)
    return refused.value.status, refused.value.code


def test_a_form_as_signed_passes() -> None:
    check(form())


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"content-type": "text/html"}, (403, "AccessDenied")),
        ({"x-amz-meta-owner": "U2"}, (403, "AccessDenied")),
        ({"key": "uploads/U2/M1"}, (403, "AccessDenied")),
        ({"acl": "public-read"}, (403, "AccessDenied")),  # a field the policy does not name
        ({"x-amz-signature": "0" * 64}, (403, "SignatureDoesNotMatch")),
        ({"x-amz-algorithm": "AWS4-HMAC-SHA1"}, (400, "InvalidRequest")),
    ],
    ids=["type", "owner", "key", "extra field", "signature", "algorithm"],
)
def test_a_changed_form_is_refused(change: dict[str, str], expected: tuple[int, str]) -> None:
    assert refusal({**form(), **change}) == expected


def test_sizes_outside_the_range_are_refused_with_s3s_codes() -> None:
    assert refusal(form(), 101) == (400, "EntityTooLarge")
    assert refusal(form(), 0) == (400, "EntityTooSmall")
    check(form(), 100)
    check(form(), 1)


def test_an_expired_form_a_form_for_another_bucket_and_one_without_policy_are_refused() -> None:
    assert refusal(form(), now=datetime.now(UTC) + timedelta(seconds=601)) == (403, "AccessDenied")
    assert refusal(form(), bucket="otherbucket") == (403, "AccessDenied")
    assert refusal({k: v for k, v in form().items() if k != "policy"}) == (403, "AccessDenied")


def test_a_form_signed_with_another_secret_is_refused() -> None:
    assert refusal(form(secret="not-the-stacks")) == (403, "SignatureDoesNotMatch")


def _sqs_and_events_answers() -> list[Any]:
    """What the stack's SQS and EventBridge calls observe, in moto, in one scenario (no ids, no times)."""
    from moto import mock_aws
    from moto.sqs.models import sqs_backends

    seen: list[Any] = []
    with mock_aws():
        sqs = boto3.client("sqs", region_name="us-east-1")
        events = boto3.client("events", region_name="us-east-1")
        url = sqs.create_queue(QueueName="q", Attributes={"MessageRetentionPeriod": "60"})["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="now")
        sqs.send_message(QueueUrl=url, MessageBody="later", DelaySeconds=30)
        received = sqs.receive_message(QueueUrl=url, VisibilityTimeout=30, MaxNumberOfMessages=10)["Messages"]
        seen.append([m["Body"] for m in received])
        counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        seen.append({k: v for k, v in counts.items() if k.startswith("Approximate")})
        # a message older than the queue's retention is never received
        sqs.send_message(QueueUrl=url, MessageBody="expired")
        (queue,) = (q for q in sqs_backends["123456789012"]["us-east-1"].queues.values() if q.name == "q")
        queue._messages[-1].sent_timestamp -= 120_000
        seen.append(sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []))
        # a rule's events reach its queue target, each time
        target = sqs.create_queue(QueueName="target")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=target, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        events.put_rule(Name="r", EventPattern='{"source": ["shopfeed.commerce"]}')
        events.put_targets(Rule="r", Targets=[{"Id": "t", "Arn": arn}])
        for n in (1, 2):
            entry = {"Source": "shopfeed.commerce", "DetailType": "OrderPlaced", "Detail": f'{{"n": {n}}}'}
            events.put_events(Entries=[entry])
        bodies = [
            json.loads(m["Body"]) for m in sqs.receive_message(QueueUrl=target, MaxNumberOfMessages=10)["Messages"]
        ]
        seen.append(sorted((b["detail-type"], b["detail"]["n"]) for b in bodies))
    return seen


def test_lightening_moto_changes_no_answer_the_stack_relies_on(monkeypatch: pytest.MonkeyPatch) -> None:
    import jsonpath_ng.ext
    from moto.sqs import models as sqs_models

    # given moto's own answers to the stack's SQS and EventBridge calls
    before = _sqs_and_events_answers()
    assert before[0] == ["now"]
    assert before[1]["ApproximateNumberOfMessagesNotVisible"] == "1"
    assert before[1]["ApproximateNumberOfMessagesDelayed"] == "1"
    assert before[2] == []
    assert before[3] == [("OrderPlaced", 1), ("OrderPlaced", 2)]

    # when the stack's moto server lightens it (undone after the test: the patches are process-wide)
    for owner, name in [
        (sqs_models.Message, "visible"),
        (sqs_models.Message, "delayed"),
        (sqs_models.SQSBackend, "is_message_valid_based_on_retention_period"),
        (jsonpath_ng.ext, "parse"),
    ]:
        monkeypatch.setattr(owner, name, vars(owner)[name] if isinstance(owner, type) else getattr(owner, name))
    lighten_moto()

    # then every answer is the same
    assert _sqs_and_events_answers() == before
