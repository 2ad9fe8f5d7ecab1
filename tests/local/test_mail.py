"""The local stack's email sink: the worker's SES adapter, pointed at it as the stack points the functions
(``AWS_ENDPOINT_URL_SESV2``), sends as it would to SES, and ``GET /__local/mail`` lists what was sent."""

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
import requests

from local.auth import SigningKey
from local.dynamodb_local import free_port
from local.gateway import ApiGateway
from local.schedules import Scheduler
from local.server import LocalPages, LocalServer
from shopfeed.commerce.emails.sender import EmailRejected, SesSender
from tests.support.servers import serve_in_thread


@pytest.fixture
def stack_url(tmp_path: Path) -> Iterator[str]:
    """The stack's pages (no API routes) on a free port."""
    url = f"http://127.0.0.1:{free_port()}"
    ready = threading.Event()
    ready.set()
    key = SigningKey.load_or_create(tmp_path)
    pages = LocalPages(ready, url, key, dict, Scheduler([]), tmp_path / "openapi.json", url)
    server = LocalServer(("127.0.0.1", int(url.rsplit(":", 1)[1])), ApiGateway([], {}, {}), pages)
    serve_in_thread(server)
    yield url
    server.shutdown()
    server.server_close()


def ses_at(url: str) -> SesSender:
    client = boto3.client(
        "sesv2",
        endpoint_url=f"{url}/__local/ses",
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    return SesSender(client, "orders@shop.example")


def test_an_email_sent_through_the_ses_adapter_is_listed_on_the_mail_page(stack_url: str) -> None:
    # given the stack's sink as SES
    sender = ses_at(stack_url)
    # when two emails are sent
    first = sender.send("ada@example.com", "Your order O1 is placed", "Hello Ada,\n\nThanks.\n", "E1")
    sender.send("bob@example.com", "Refund for order O2", "Hello Bob,\n", "E2")
    # then the page lists them oldest first, with the id SES answered and the event each came from
    messages = requests.get(f"{stack_url}/__local/mail", timeout=10).json()["messages"]
    assert [(m["to"], m["subject"], m["event_id"], m["sender"]) for m in messages] == [
        (["ada@example.com"], "Your order O1 is placed", "E1", "orders@shop.example"),
        (["bob@example.com"], "Refund for order O2", "E2", "orders@shop.example"),
    ]
    assert messages[0]["body"] == "Hello Ada,\n\nThanks.\n"
    assert messages[0]["message_id"] == first


def test_a_request_the_sink_does_not_understand_is_refused_as_ses_refuses_a_bad_request(stack_url: str) -> None:
    # when something that is no SendEmail reaches the sink
    answer = requests.post(
        f"{stack_url}/__local/ses/v2/email/outbound-emails",
        data=json.dumps({"Content": {"Template": {}}}),
        headers={"Host": "127.0.0.1"},
        timeout=10,
    )
    # then it is a 400 the SDK reads as BadRequestException (the adapter: rejected, never retried)
    assert (answer.status_code, answer.headers["x-amzn-errortype"]) == (400, "BadRequestException")
    assert requests.get(f"{stack_url}/__local/mail", timeout=10).json() == {"messages": []}


def test_the_adapter_reads_the_sinks_refusal_as_a_rejection(stack_url: str) -> None:
    sender = ses_at(stack_url)
    # an empty address list is a SendEmail the sink cannot keep (SES refuses it too)
    with pytest.raises(EmailRejected, match="BadRequestException"):
        sender.send("", "Subject", "Body", "E1")
