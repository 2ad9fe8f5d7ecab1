"""The stack's moto server, with S3's POST policy enforced on browser-form uploads, and three of moto's
costs taken out of the path every order's events take (``lighten_moto``).

moto (5.2) stores whatever a presigned POST form sends: it checks neither the signature, nor the
expiry, nor one condition of the policy (content type, ``content-length-range``, key). S3 checks all
of them, and the media uploads depend on it (``shopfeed.feed.media``), so the local stack puts this
check in front of moto: a form that S3 would refuse is refused here with S3's error codes, the rest
goes to moto unchanged. Signature V4 forms only (what the functions' clients sign); the secret is the
stack's fixed local one.

Run as ``python local/moto_server.py -H host -p port`` (local/engines.py does).
"""

import argparse
import base64
import hashlib
import hmac
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from io import BytesIO
from typing import Any
from xml.sax.saxutils import escape

from werkzeug.formparser import parse_form_data

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
# Form fields the policy need not name (S3's rule: the signature itself, the policy, the file, x-ignore-*).
_UNSIGNED = {"policy", "x-amz-signature", "file"}


class Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def check_form(
    bucket: str, fields: Mapping[str, str], file_size: int, secrets: Mapping[str, str], now: datetime
) -> None:
    """Raise Refused where S3 would refuse this form POST; ``fields`` keyed in lower case."""
    policy_b64 = fields.get("policy")
    if policy_b64 is None:
        raise Refused(403, "AccessDenied", "Access Denied")  # an anonymous write to a private bucket
    if fields.get("x-amz-algorithm") != "AWS4-HMAC-SHA256":
        raise Refused(400, "InvalidRequest", "Only AWS4-HMAC-SHA256 forms are accepted here")
    access_key, date, region, service, _ = (fields.get("x-amz-credential", "") + "////").split("/")[:5]
    if access_key not in secrets:
        raise Refused(403, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.")
    key = f"AWS4{secrets[access_key]}".encode()
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(key, policy_b64.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, fields.get("x-amz-signature", "")):
        raise Refused(403, "SignatureDoesNotMatch", "The request signature we calculated does not match.")
    policy = json.loads(base64.b64decode(policy_b64))
    if datetime.fromisoformat(policy["expiration"]) <= now:
        raise Refused(403, "AccessDenied", "Invalid according to Policy: Policy expired.")
    values = {**fields, "bucket": bucket}
    named = set()
    for condition in policy["conditions"]:
        if isinstance(condition, dict):
            ((name, wanted),) = condition.items()
            condition = ["eq", f"${name}", wanted]
        operator, subject, bound = condition
        if operator == "content-length-range":
            if file_size > int(bound):
                raise Refused(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size")
            if file_size < int(subject):
                raise Refused(400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size")
            continue
        name = subject.removeprefix("$").lower()
        named.add(name)
        actual = values.get(name, "")
        passed = actual == bound if operator == "eq" else actual.startswith(bound)
        if not passed:
            raise Refused(
                403, "AccessDenied", f"Invalid according to Policy: Policy Condition failed: {json.dumps(condition)}"
            )
    extra = sorted(name for name in fields if name not in named | _UNSIGNED and not name.startswith("x-ignore-"))
    if extra:
        raise Refused(403, "AccessDenied", f"Invalid according to Policy: Extra input fields: {', '.join(extra)}")


class PostPolicyGuard:
    """WSGI middleware: form POSTs are checked (``check_form``) before ``app`` sees them."""

    def __init__(self, app: WsgiApp, secrets: Mapping[str, str]) -> None:
        self.app, self.secrets = app, secrets

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        is_form = environ.get("CONTENT_TYPE", "").startswith("multipart/form-data")
        if environ["REQUEST_METHOD"] != "POST" or not is_form:
            return self.app(environ, start_response)
        body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        _, form, files = parse_form_data({**environ, "wsgi.input": BytesIO(body)})
        upload = files.get("file")
        size = len(upload.read()) if upload is not None else 0
        bucket = environ.get("PATH_INFO", "/").strip("/").split("/")[0]
        try:
            check_form(bucket, {k.lower(): v for k, v in form.items()}, size, self.secrets, datetime.now(UTC))
        except Refused as refused:
            xml = f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{refused.code}</Code>"
            xml += f"<Message>{escape(refused.message)}</Message></Error>"
            start_response(f"{refused.status} {refused.code}", [("Content-Type", "application/xml")])
            return [xml.encode()]
        environ["wsgi.input"] = BytesIO(body)
        return self.app(environ, start_response)


def lighten_moto() -> None:
    """Take three costs out of moto 5.2's hot paths, none of which changes what it answers.

    The stack's events go through moto on every order (EventBridge PutEvents, then SendMessage to each
    rule's queue, then the consumers' ReceiveMessage), and moto was the stack's largest CPU consumer:
    80 % of a core at 45 orders a second, more than DynamoDB Local, and growing with the run.

    - A message's ``visible`` and ``delayed`` read the time through a naive-datetime subtraction
      (``unix_time_millis``), and each SendMessage evaluates them for every message of the queue
      three times (the queue's approximate counts, computed with all its attributes to read
      ContentBasedDeduplication). A queue that a rule fills and no function reads (OrderEventsQueue)
      made each send cost more than the last. The same instant, read from ``time.time``: ~20× less.
    - Each message received reads the queue's retention through GetQueueAttributes, which computes
      every attribute, counts included, three times: read from the queue instead.
    - Each event sent to a target parses its input paths anew with jsonpath-ng, which builds its
      parser tables each time: the parsed paths (immutable, a handful) are kept.
    """
    import functools
    import time

    from jsonpath_ng import ext as jsonpath
    from moto.sqs import models as sqs

    sqs.Message.visible = property(lambda message: time.time() * 1000 > message.visible_at)  # type: ignore[method-assign,assignment]
    sqs.Message.delayed = property(lambda message: time.time() * 1000 < message.delayed_until)  # type: ignore[method-assign,assignment]

    def retained(backend: Any, queue_name: str, message: Any) -> bool:
        retention_s = int(backend.get_queue(queue_name).message_retention_period)
        return bool(retention_s + message.sent_timestamp / 1000 > time.time())

    sqs.SQSBackend.is_message_valid_based_on_retention_period = retained  # type: ignore[method-assign,assignment]
    jsonpath.parse = functools.cache(jsonpath.parse)  # type: ignore[attr-defined]


def main(argv: list[str]) -> None:
    # Imported here: the module's checks are used by tests without starting a server.
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import run_simple

    parser = argparse.ArgumentParser()
    parser.add_argument("-H", "--host", default="127.0.0.1")
    parser.add_argument("-p", "--port", type=int, required=True)
    parser.add_argument("--secret", action="append", default=[], help="ACCESS_KEY=SECRET_KEY of a signer")
    args = parser.parse_args(argv)
    os.environ.setdefault("MOTO_PORT", str(args.port))  # as moto's own main does (URLs it makes)
    secrets = dict(pair.split("=", 1) for pair in args.secret)
    lighten_moto()
    app = PostPolicyGuard(DomainDispatcherApplication(create_backend_app), secrets)
    run_simple(args.host, args.port, app, threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main(sys.argv[1:])
