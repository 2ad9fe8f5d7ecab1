"""What `make dev` promises besides the API's own behaviour: auth at the edge, seed data, local pages."""

import contextlib
import http.server
import json
import re
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from local import cfn
from local.auth import SigningKey, issuer_for
from local.cfn import ROOT
from tests.e2e.conftest import APP_ORIGIN, EVENT_TIMEOUT_S, Client, LocalStack
from tests.e2e.test_feed_fanout import eventually
from tests.e2e.test_orders import order_body, place
from tests.support.servers import serve_in_thread

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


@pytest.mark.parametrize(
    ("method", "path"), [("GET", "/products/P-RED-TSHIRT"), ("POST", "/orders"), ("GET", "/users/me/orders")]
)
def test_requests_without_a_token_are_refused_at_the_edge(anonymous: Client, method: str, path: str) -> None:
    response = anonymous.request(method, path)
    assert (response.status_code, response.json()) == (401, {"message": "Unauthorized"})


def test_a_token_for_another_issuer_is_refused_saying_why(local_stack: LocalStack) -> None:
    # given a token signed with the stack's key, but issued for another issuer
    token = SigningKey.load_or_create(local_stack.state_dir).mint(issuer_for(1), "U100")

    # when it is used
    response = Client(local_stack, token).get("/products/P-RED-TSHIRT")

    # then the edge refuses it, saying why, as API Gateway does
    assert response.status_code == 401
    assert "valid issuer" in response.headers["www-authenticate"]


def test_routes_outside_the_template_do_not_exist(customer: Client) -> None:
    response = customer.get("/admin/secrets")
    assert (response.status_code, response.json()) == (404, {"message": "Not Found"})


def test_the_demo_data_is_seeded_through_the_api(local_stack: LocalStack) -> None:
    # given the demo user's token
    demo = Client(local_stack, local_stack.token("U100"))

    # then the playbook's sample customer and products exist (one of each sold to the seeded orders)
    assert demo.get("/users/U100").json()["email"] == "u100@example.com"
    shirt = demo.get("/products/P-RED-TSHIRT").json()
    cap = demo.get("/products/P-BLK-CAP").json()
    assert (shirt["category"], shirt["price"], shirt["available"]) == (
        "apparel",
        {"amount": 1999, "currency": "EUR"},
        99,
    )
    assert (cap["category"], cap["price"], cap["available"]) == ("accessories", {"amount": 1499, "currency": "EUR"}, 49)


def test_the_seed_has_a_paid_and_a_shipped_order_made_through_payments_and_shipping(local_stack: LocalStack) -> None:
    # given the demo user's orders
    demo = Client(local_stack, local_stack.token("U100"))
    orders = demo.get("/users/me/orders", params={"limit": 100}).json()["items"]
    seeded: dict[int, dict[str, object]] = {}
    for order in reversed(orders):  # the seed's are the oldest
        seeded.setdefault(order["total"]["amount"], order)

    # then the t-shirt's order is Paid by an authorized attempt, the cap's is Shipped with a DHL parcel
    paid, shipped = seeded[1999], seeded[1499]
    assert (paid["status"], shipped["status"]) == ("Paid", "Shipped")
    (attempt,) = demo.get(f"/orders/{paid['order_id']}/payments").json()["items"]
    assert attempt["status"] == "Authorized"
    (parcel,) = demo.get(f"/orders/{shipped['order_id']}/shipments").json()["items"]
    assert (parcel["carrier"], parcel["status"]) == ("dhl", "Shipped")


def test_the_seed_customer_reviews_what_it_bought_and_the_ratings_follow(local_stack: LocalStack) -> None:
    # given the demo user, whose seeded orders of both products are paid
    demo = Client(local_stack, local_stack.token("U100"))

    # when its reviews are read, and the t-shirt once the commerce stream counted them
    reviews = demo.get("/users/U100/reviews").json()["items"]
    rating = eventually(lambda: demo.get("/products/P-RED-TSHIRT").json()["rating"], lambda r: r["count"] >= 1)

    # then
    assert {(r["product_id"], r["rating"]) for r in reviews} == {("P-RED-TSHIRT", 5), ("P-BLK-CAP", 4)}
    assert rating["count"] >= 1
    assert rating["average"] is not None


def test_the_stack_page_lists_the_templates_resources_and_consumers(local_stack: LocalStack) -> None:
    page = local_stack.page()
    assert page["resources"]["EventBus"]["name"] == "shopfeed-dev"
    assert page["resources"]["CommerceTable"]["StreamArn"]
    assert {"CommerceApiFunction", "CommerceStreamFunction", "OutboxSweeperFunction"} <= page["functions"].keys()
    mappings = [
        (name, event["Type"])
        for name, function in cfn.resources("AWS::Serverless::Function").items()
        for event in (function["Properties"].get("Events") or {}).values()
        if event["Type"] in ("DynamoDB", "SQS")
    ]
    deliveries = [(name, "Firehose") for name in cfn.resources("AWS::KinesisFirehose::DeliveryStream")]
    assert sorted((p["function"], p["type"]) for p in page["pollers"]) == sorted(mappings + deliveries)
    assert ("FanoutWorkerFunction", "SQS") in mappings
    assert ("AnalyticsDeliveryStream", "Firehose") in deliveries


def test_the_openapi_document_and_swagger_ui_are_served(local_stack: LocalStack, anonymous: Client) -> None:
    if not (ROOT / "docs" / "openapi.json").exists():
        pytest.skip("docs/openapi.json is not generated yet (make openapi)")
    document = anonymous.get("/__local/openapi.json").json()
    assert "/orders" in document["paths"]
    assert document["servers"][0]["url"] == local_stack.url
    assert "swagger-ui" in anonymous.get("/__local/docs").text


def test_a_scheduled_function_runs_on_demand(anonymous: Client) -> None:
    # when the sweeper's schedule is triggered
    response = anonymous.post("/__local/schedules/OutboxSweeperFunction")

    # then it ran once and succeeded
    assert response.status_code == 200, response.text
    assert response.json()["function"] == "OutboxSweeperFunction"


def test_make_token_prints_a_token_the_stack_accepts(local_stack: LocalStack) -> None:
    # when the token command runs for this stack
    port = local_stack.url.rsplit(":", 1)[1]
    command = [sys.executable, "-m", "local.tokens", "--sub", "U100", "--groups", "admin,ops", "--port", port]
    output = subprocess.run(
        [*command, "--state-dir", str(local_stack.state_dir)], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout

    # then its last line is a bearer token the API takes
    token = output.strip().splitlines()[-1]
    assert Client(local_stack, token).get("/products/P-BLK-CAP").status_code == 200


def test_the_queue_page_shows_the_events_a_queue_holds(customer: Client, product: dict[str, Any]) -> None:
    # given an order, whose OrderPlaced the rule delivers to the subscriber queue
    order_id = place(customer, order_body(product, 1)).json()["order_id"]

    # when the queue page is read until the event shows (bounded: the relay needs a moment)
    deadline = time.monotonic() + EVENT_TIMEOUT_S
    while True:
        messages = customer.get("/__local/queues/OrderEventsQueue").json()["messages"]
        mine = [m for m in messages if m["detail"]["data"]["order_id"] == order_id]
        if mine or time.monotonic() > deadline:
            break
        time.sleep(0.2)

    # then it is there, and left there for its subscriber
    assert [m["detail-type"] for m in mine] == ["OrderPlaced"]
    assert customer.get("/__local/queues/NoSuchQueue").status_code == 404


def test_swagger_ui_renders_the_apis_operations_in_a_browser_without_internet(
    local_stack: LocalStack, anonymous: Client, chromium: str
) -> None:
    # given the API's operations, and a headless browser for which no host but this machine resolves
    paths = anonymous.get("/__local/openapi.json").json()["paths"]
    command = [
        chromium,
        "--headless",
        "--no-sandbox",  # as root in a container, Chromium's sandbox cannot start
        "--disable-gpu",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        "--virtual-time-budget=20000",  # run the page's scripts and fetches to completion first
        "--dump-dom",
        f"{local_stack.url}/__local/docs",
    ]

    # when the docs page is rendered
    dom = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout

    # then every operation of the API is on the page
    rendered = set(re.findall(r'data-path="([^"]+)"', dom))
    assert rendered == set(paths), dom[:2000]


def test_the_queue_page_shows_every_message_not_only_the_first_ten(local_stack: LocalStack, anonymous: Client) -> None:
    # given more messages on a queue than one receive returns (shaped like the events the tests wait for)
    sqs = local_stack.aws("sqs")
    url = local_stack.page()["resources"]["OrderEventsQueue"]["QueueUrl"]
    probe = f"probe-{uuid.uuid4().hex[:8]}"
    sent = [f"{probe}-{n:02d}" for n in range(15)]
    for order_id in sent:
        body = {"detail-type": "QueuePageProbe", "detail": {"data": {"order_id": order_id}}}
        sqs.send_message(QueueUrl=url, MessageBody=json.dumps(body))

    # when the queue page is read
    messages = anonymous.get("/__local/queues/OrderEventsQueue").json()["messages"]

    # then every one of them is shown
    shown = [m["detail"]["data"]["order_id"] for m in messages if m.get("detail-type") == "QueuePageProbe"]
    assert sorted(o for o in shown if o.startswith(probe)) == sent


@contextlib.contextmanager
def serving(origin: str, page: str) -> Iterator[str]:
    """A browser app's page served from ``origin``, as a site other than the API would."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = page.encode()
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    address = urlsplit(origin)
    server = http.server.ThreadingHTTPServer((str(address.hostname), int(address.port or 80)), Page)
    serve_in_thread(server)
    try:
        yield f"{origin}/app.html"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_of_an_allowed_origin_calls_the_api_across_origins_and_another_origins_page_cannot(
    local_stack: LocalStack, chromium: str
) -> None:
    # given a page that reads a product with a token (a preflighted request) and shows its ETag
    token = local_stack.token("U-BROWSER")
    script = f"""
      fetch("{local_stack.url}/products/P-RED-TSHIRT", {{headers: {{Authorization: "Bearer {token}"}}}})
        .then(r => r.json().then(b => `${{r.status}} ${{r.headers.get("ETag")}} ${{b.product_id}}`))
        .catch(e => `blocked: ${{e.name}}`)
        .then(text => {{ document.getElementById("out").textContent = text; }});
    """
    page = f'<html><body><pre id="out">pending</pre><script>{script}</script></body></html>'

    def rendered(url: str) -> str:
        command = [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE 127.0.0.2, EXCLUDE 127.0.0.3",
            "--virtual-time-budget=10000",
            "--dump-dom",
            url,
        ]
        dom = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout
        found = re.search(r'<pre id="out">([^<]*)</pre>', dom)
        assert found, dom[:2000]
        return found.group(1)

    # when the page is opened from the origin the stack allows (AllowedOrigins), and from another
    with serving(APP_ORIGIN, page) as allowed:
        from_app = rendered(allowed)
    other_origin = APP_ORIGIN.replace("127.0.0.2", "127.0.0.3")
    with serving(other_origin, page) as refused:
        from_elsewhere = rendered(refused)

    # then the app reads the answer and its exposed ETag; the browser keeps it from the other origin
    assert re.fullmatch(r'200 "\d+" P-RED-TSHIRT', from_app), from_app
    assert from_elsewhere == "blocked: TypeError", from_elsewhere
