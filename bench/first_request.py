"""A container's first request against its warm ones, per API route group and per other function, primed
at init or not (design §1; decision 181: a primed first request within 2× a warm one).

Each round starts a fresh interpreter per function and mode, configured as deployed: the cursor
secret is named by ARN (CURSOR_SECRET_ARN) and every AWS service (DynamoDB, Secrets Manager,
EventBridge) is a moto server on this machine, so each call is a real HTTP round trip. The child
times its init (``import boto3`` then ``import app``, which primes when AWS_LAMBDA_FUNCTION_NAME is
set, as in Lambda), its first invocation with the row's sample event (events/), and 20 more; a
botocore ``after-call`` hook, registered before any client exists, records every AWS call, and counts
apart priming's dry runs, which botocore answers in process (decision 216). ``POST /orders`` sends a new
Idempotency-Key with each request, so that every request places an order. Search is configured as a
stack with search deploys it (SEARCH_ENDPOINT on both APIs): each round also starts osmem-server (the
local stack's engine, decision 40) with a few products and posts indexed, and the search rows count the
engine's HTTP calls beside the AWS ones, read from opensearch-py's own request log (``search POST
/products/_search``), which needs no import of the client before the timed init (decision 242).
"""

import json
import logging
import os
import socket
import statistics
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from bench.markdown import ms, table
from local.cfn import ROOT
from local.engines import CALL_TIMEOUT_SCALE

FUNCTIONS = ROOT / "functions"
SHARED = ROOT / "shared"
WARM_REQUESTS = 20
# The post the likes row reads: its sample event names this id, the seed's post replaces it.
SAMPLE_POST_ID = "01JBENCHP0ST00000000000000"


@dataclass(frozen=True)
class Case:
    """What one row sends: a route group's request to its API function, or another function's event
    (its sample event, as sam local invoke sends it)."""

    function: str
    event: str
    what: str


CASES = [
    Case("commerce_api", "events/api/get_product.json", "products: `GET /products/{product_id}`"),
    Case("commerce_api", "events/api/list_my_orders.json", "orders: `GET /users/me/orders`"),
    # Each request a new order (a fresh Idempotency-Key per request): a first order against warm ones.
    Case("commerce_api", "events/api/place_order.json", "orders: `POST /orders`"),
    Case("commerce_api", "events/api/list_pending_payments.json", "payments: `GET /payments?status=Pending`"),
    Case("commerce_api", "events/api/list_product_reviews.json", "reviews: `GET /products/{product_id}/reviews`"),
    Case("commerce_api", "events/api/get_user.json", "users: `GET /users/{user_id}`"),
    Case("feed_api", "events/api/get_feed.json", "feed: `GET /feed`"),
    Case("feed_api", "events/api/list_user_posts.json", "posts: `GET /users/{user_id}/posts`"),
    Case("feed_api", "events/api/list_post_likes.json", "likes: `GET /posts/{post_id}/likes`"),
    Case("feed_api", "events/api/unread_notifications.json", "notifications: `GET /notifications?unread=true`"),
    Case("commerce_api", "events/api/search_products.json", "search: `GET /search/products?q=`"),
    Case("feed_api", "events/api/search_posts.json", "search: `GET /search/posts?q=`"),
    Case("commerce_stream", "events/streams/commerce_outbox_order_placed.json", "one outbox INSERT"),
    Case("outbox_sweeper", "events/schedules/outbox_sweep.json", "a sweep, nothing to re-drive"),
]

_SEED = """
import json, boto3
from local.cfn import table_definitions
dynamodb = boto3.client("dynamodb")
for name, definition in table_definitions().items():
    dynamodb.create_table(**{{k: v for k, v in definition.items() if not k.startswith("_")}})
boto3.client("events").create_event_bus(Name="shopfeed-bench")
queue_url = boto3.client("sqs").create_queue(QueueName="PaymentQueue")["QueueUrl"]
arn = boto3.client("secretsmanager").create_secret(Name="CursorSecret", SecretString="b" * 48)["ARN"]
import os
os.environ["CURSOR_SECRET_ARN"] = arn
os.environ["PAYMENT_QUEUE_URL"] = queue_url
from functions.commerce_api.app import lambda_handler
from local.harness.client import LambdaContext
event = json.load(open("events/api/create_product.json"))
# Stock for every order the POST /orders row places (2 units each, 21 per round and mode).
body = json.loads(event["body"]) | {{"product_id": "P-RED-TSHIRT", "available": 100000}}
event["body"] = json.dumps(body)
answer = lambda_handler(event, LambdaContext())
assert answer["statusCode"] in (201, 409), answer
from local.harness.client import ApiClient
from local.harness.factories import register_user
from local.harness.feed_factories import write_post
register_user(ApiClient(lambda_handler).as_user("U100"))
# Each request kind once, so the moto server's own first-call costs stay out of the measurement.
from functions.commerce_stream.app import lambda_handler as relay
from functions.outbox_sweeper.app import lambda_handler as sweep
from functions.feed_api.app import lambda_handler as feed
for handler, sample in [(lambda_handler, {api!r}), (relay, {stream!r}), (sweep, {sweeper!r}), (feed, {feed!r})]:
    handler(json.load(open(sample)), LambdaContext())
post_id = write_post(ApiClient(feed).as_user("U100"))["post_id"]
# A few documents for each search row to find (the search events ask for "shirt" and "dynamodb"),
# indexed as `make reindex` does, then each search once, as every other request kind above.
from local.harness.factories import create_product
admin = ApiClient(lambda_handler).as_user("U1", "admin")
for product_id in ("P-BLUE-SHIRT", "P-DENIM-SHIRT", "P-SHIRT-HAT"):
    create_product(admin, product_id)
for text, tag in [("DynamoDB single-table design", "dynamodb"), ("Streams feed DynamoDB search", "streams")]:
    write_post(ApiClient(feed).as_user("U100"), text, tag)
from shopfeed.commerce.catalog.reindex import PRODUCTS_SOURCE
from shopfeed.feed.reindex import POSTS_SOURCE
from shopfeed.platform.search import reindex
for source, table in [(PRODUCTS_SOURCE, "CommerceTable"), (POSTS_SOURCE, "FeedTable")]:
    assert reindex.main(source, "", ["--table", table, "--search-endpoint", os.environ["SEARCH_ENDPOINT"]]) == 0
for handler, sample in [(lambda_handler, {products!r}), (feed, {posts!r})]:
    found = json.loads(handler(json.load(open(sample)), LambdaContext())["body"])["items"]
    assert len(found) > 1, found
print(arn, queue_url, post_id)
"""

_CHILD = """
import json, sys, time
sys.path[:0] = {paths!r}
started = time.perf_counter()
import boto3
calls = []
boto3.setup_default_session()
def record(model, http_response, **_):
    # Priming's dry runs (decision 216) are answered in process: shown as such, never as calls.
    dry = http_response.headers.get("x-amzn-requestid") == "shopfeed-warmup-dry-run"
    calls.append(("dry run " if dry else "") + model.service_model.service_name + "." + model.name)
boto3.DEFAULT_SESSION.events.register("after-call.*.*", record)
import logging
class EngineCalls(logging.Handler):
    # opensearch-py logs each request it sends on this logger (INFO, "<method> <url> [status:...]"):
    # counted from there, the client need not be imported before init.
    def emit(self, line):
        method, url = line.args[:2]
        calls.append("search " + method + " " + "/" + url.split("/", 3)[-1].split("?")[0])
engine_log = logging.getLogger("opensearch")
engine_log.setLevel(logging.INFO)
engine_log.propagate = False
engine_log.addHandler(EngineCalls())
booted = time.perf_counter()
import app
init = time.perf_counter() - started
import abc
abc_caches = abc.get_cache_token()
init_calls, calls[:] = list(calls), []
# Nothing is imported between init and the first request, as in Lambda: an import that registers a
# virtual subclass of any ABC (the test client's did) clears every ABC's cache of negative isinstance
# answers, and the first request would pay ~1 ms to work them out again (decision 249).
class LambdaContext:
    function_name = "bench"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"
    aws_request_id = "bench-request"
    def get_remaining_time_in_millis(self):
        return 10_000
event = json.loads(open({event!r}).read().replace({sample_post!r}, {post_id!r}))
def events():
    # A create with an Idempotency-Key gets a new one per request, so that each is a new create.
    key = (event.get("headers") or {{}}).get("idempotency-key")
    while True:
        if key is None:
            yield event
        else:
            yield event | {{"headers": event["headers"] | {{"idempotency-key": key + "-" + str(time.time_ns())}}}}
sent = events()
assert abc.get_cache_token() == abc_caches, "the bench registered an ABC between init and the first request"
started = time.perf_counter()
statuses = [app.lambda_handler(next(sent), LambdaContext()).get("statusCode")]
first = time.perf_counter() - started
first_calls, calls[:] = list(calls), []
warm = []
for _ in range({warm}):
    request = next(sent)
    started = time.perf_counter()
    statuses.append(app.lambda_handler(request, LambdaContext()).get("statusCode"))
    warm.append(time.perf_counter() - started)
warm_calls = calls[: len(calls) // {warm}]
sys.stderr.flush()
print("@@" + json.dumps(dict(init=init, boto3=booted, first=first, warm=warm, init_calls=init_calls,
                             first_calls=first_calls, warm_calls=warm_calls, statuses=statuses)))
"""


@dataclass
class Row:
    case: Case
    primed: bool
    init: list[float] = field(default_factory=list)
    first: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    init_calls: list[str] = field(default_factory=list)
    first_calls: list[str] = field(default_factory=list)
    warm_calls: list[str] = field(default_factory=list)


@dataclass
class FirstRequests:
    rows: list[Row]
    rounds: int

    def slow_first(self) -> list[Row]:
        """Primed rows whose first request costs more than design §1's 2× a warm one."""
        return [row for row in self.rows if row.primed and statistics.median(row.ratios) > 2]

    def markdown(self) -> str:
        body = []
        for row in self.rows:
            body.append(
                [
                    f"`{row.case.function}` ({row.case.what})",
                    "primed" if row.primed else "not primed",
                    ms(statistics.median(row.init)),
                    ms(statistics.median(row.first)),
                    ms(statistics.median(row.warm)),
                    f"{statistics.median(row.ratios):.1f}",
                    _calls(row.init_calls),
                    _calls(row.first_calls),
                    _calls(row.warm_calls),
                ]
            )
        return "\n".join(
            [
                table(
                    [
                        "function (route group: request)",
                        "init",
                        "init ms",
                        "first ms",
                        "warm ms",
                        "first ÷ warm",
                        "AWS calls at init",
                        "on the first request",
                        "on a warm request",
                    ],
                    body,
                    "llrrrrlll",
                ),
                "",
                f"Medians of {self.rounds} rounds (a fresh interpreter each); warm is the median of "
                f"{WARM_REQUESTS} requests after the first, first ÷ warm the median of the rounds' ratios. "
                "Init is `import boto3` plus `import app` (priming included when primed); against a real "
                "DynamoDB the first request also opens the TLS connection, which no priming without a "
                "call can save.",
            ]
        )


def _calls(calls: list[str]) -> str:
    dry = sum(1 for call in calls if call.startswith("dry run "))
    counted: dict[str, int] = {}
    for call in calls:
        if not call.startswith("dry run "):
            counted[call] = counted.get(call, 0) + 1
    shown = [f"{name} ×{count}" if count > 1 else name for name, count in counted.items()]
    if dry:
        shown.append(f"{dry} dry runs (not sent)")
    return ", ".join(shown) or "none"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _environment(endpoint: str) -> dict[str, str]:
    inherited = {
        k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("AWS_ENDPOINT_URL")
    }
    return inherited | {
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "COMMERCE_TABLE_NAME": "CommerceTable",
        "FEED_TABLE_NAME": "FeedTable",
        "EVENT_BUS_NAME": "shopfeed-bench",
        "POWERTOOLS_SERVICE_NAME": "shopfeed",
        "POWERTOOLS_METRICS_NAMESPACE": "shopfeed",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        "POWERTOOLS_METRICS_DISABLED": "true",
        # moto copies every table on each transaction, so a transaction slows as the rounds' orders
        # pile up; with the deployed timeouts the SDK gave up and retried while moto still ran the
        # first, and two transactions at once break moto's copy (a 503 on an idle machine)
        "CALL_TIMEOUT_SCALE": CALL_TIMEOUT_SCALE,
    }


@contextmanager
def _search_engine() -> Iterator[str]:
    from local.engines import search_server

    server = search_server()
    try:
        yield str(server.url)
    finally:
        server.close()


@contextmanager
def _moto_server() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        # the backend is this process's: forget it, or the next server would start with its tables
        urllib.request.urlopen(urllib.request.Request(f"http://127.0.0.1:{port}/moto-api/reset", method="POST"))
        server.stop()


def _run(code: str, environment: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], env=environment, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    if done.returncode:
        raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else str(done.returncode))
    return done.stdout


def measure(rounds: int = 5, only: str | None = None) -> FirstRequests:
    """Every row, or (``only``) the rows whose request or function names it.

    Each round runs on a fresh, seeded moto: the `POST /orders` rows place orders every round, and moto
    copies every table on each transaction, so on one moto the later rounds timed a larger copy (and
    once ran past the SDK's timeout)."""
    cases = [c for c in CASES if only is None or only in c.what or only == c.function]
    rows = [Row(case, primed) for case in cases for primed in (True, False)]
    for _ in range(rounds):
        with _moto_server() as endpoint, _search_engine() as search:
            environment, post_id = _seeded(endpoint, search)
            for row in rows:
                _measure_row(row, environment, post_id)
    return FirstRequests(rows, rounds)


def _seeded(endpoint: str, search: str) -> tuple[dict[str, str], str]:
    environment = _environment(endpoint) | {"SEARCH_ENDPOINT": search}
    first_event = {case.function: case.event for case in reversed(CASES)}
    seed = _SEED.format(
        api=first_event["commerce_api"],
        stream=first_event["commerce_stream"],
        sweeper=first_event["outbox_sweeper"],
        feed=first_event["feed_api"],
        products="events/api/search_products.json",
        posts="events/api/search_posts.json",
    )
    secret_arn, queue_url, post_id = _run(seed, environment).strip().splitlines()[-1].split()
    return environment | {"CURSOR_SECRET_ARN": secret_arn, "PAYMENT_QUEUE_URL": queue_url}, post_id


def _measure_row(row: Row, environment: dict[str, str], post_id: str) -> None:
    child = environment | ({"AWS_LAMBDA_FUNCTION_NAME": row.case.function} if row.primed else {})
    code = _CHILD.format(
        paths=[str(FUNCTIONS / row.case.function), str(SHARED), str(ROOT)],
        event=row.case.event,
        warm=WARM_REQUESTS,
        sample_post=SAMPLE_POST_ID,
        post_id=post_id,
    )
    output = _run(code, child)
    result = json.loads(output.rsplit("@@", 1)[1])
    failed = [status for status in result["statuses"] if status is not None and status >= 500]
    if failed:
        # A refused dependency (503 after the SDK's retries: moto on a loaded machine) would time an
        # error path: the figures would not be the route's.
        raise RuntimeError(f"{row.case.what}: answered {failed}; measure on a quieter machine")
    warm = statistics.median(result["warm"])
    row.init.append(result["init"])
    row.first.append(result["first"])
    row.warm.append(warm)
    row.ratios.append(result["first"] / warm)
    row.init_calls, row.first_calls, row.warm_calls = (
        result["init_calls"],
        result["first_calls"],
        result["warm_calls"],
    )


if __name__ == "__main__":
    print(
        measure(
            rounds=int(sys.argv[1]) if len(sys.argv) > 1 else 3, only=sys.argv[2] if len(sys.argv) > 2 else None
        ).markdown()
    )
