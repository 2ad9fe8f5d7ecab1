"""A soak: mixed traffic from several clients against a running local stack, then the ledger checked.

Each client is one registered user on its own thread. For a bounded time it orders (with keys), pays,
cancels, posts, follows, likes, comments and reviews, and writes down every write the API answered 2xx:
the ledger. A 503 (or 429, or a dropped connection) is retried as a careful client would, after the
answer's Retry-After and with the same Idempotency-Key, so a retry never counts twice; a 500 is never
retried and is a failure of the soak. Then the stack drains and the ledger is compared with what the
stack serves, until they agree or the settle time runs out:

- every 2xx write is there exactly once (orders, posts, comments, follows, likes, reviews);
- stock + units sold (orders not cancelled) = the initial stock, for every product;
- counters equal their lists (likes and comments of a post, follows of a profile, ratings);
- every order's event reached the bus's subscriber queue, duplicates only under the same event id;
- every post of an author reaches the home feed of each user who followed them before it was written;
- search finds every post and product, as the tables hold them.

``tests/e2e/test_soak.py`` runs it on a stack injecting faults; ``python -m local.harness.soak --stack URL``
runs it against a ``make dev`` stack.
"""

import argparse
import json
import random
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import boto3
import requests

from local.auth import SigningKey, issuer_for
from local.engines import CREDENTIALS, REGION

Token = Callable[..., str]

UNIT_PRICE, CURRENCY = 1500, "EUR"  # any total of it the payment sandbox approves
PRICE = {"amount": UNIT_PRICE, "currency": CURRENCY}
INITIAL_STOCK = 10_000
ATTEMPTS = 12  # a request answered 503 this many times in a row is unresolved, and the soak fails
RETRY_CAP_S = 1.0  # Retry-After is honoured up to this, so the soak keeps its time bound
RETRIED = frozenset({429, 502, 503, 504})
# The mix of writes: weights per action, close to a shop with a social feed.
MIX = {
    "order": 26,
    "pay": 10,
    "cancel": 6,
    "post": 14,
    "follow": 10,
    "like": 14,
    "comment": 12,
    "review": 8,
}


@dataclass
class Figures:
    """What the soak did and found; ``mismatches`` empty and ``server_errors`` 0 is a pass."""

    clients: int = 0
    seconds: float = 0.0
    statuses: Counter[int] = field(default_factory=Counter)
    traffic: Counter[int] = field(default_factory=Counter)  # the statuses of the traffic, before the checks
    without_retry_after: int = 0  # 503 and 429 answers that did not say when to come back
    retries: int = 0
    unresolved: list[str] = field(default_factory=list)
    writes: Counter[str] = field(default_factory=Counter)
    events: int = 0
    duplicate_events: int = 0
    faults: Mapping[str, Any] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)

    @property
    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500 and status not in RETRIED)

    def summary(self) -> str:
        statuses = ", ".join(f"{status}: {n}" for status, n in sorted(self.traffic.items()))
        answered = sum(self.traffic.values())
        checks = sum(self.statuses.values()) - answered
        writes = ", ".join(f"{kind} {n}" for kind, n in sorted(self.writes.items()))
        faults = "none (the stack injects none)"
        if self.faults:
            kinds: Counter[str] = Counter()
            for row in self.faults.get("by_operation", {}).values():
                kinds.update({kind: n for kind, n in row.items() if kind != "calls"})
            by_kind = ", ".join(f"{kind} {n}" for kind, n in kinds.most_common())
            faults = f"{self.faults['faults']} of {self.faults['calls']} AWS call attempts ({by_kind})"
        return "\n".join(
            (
                f"soak: {self.clients} clients for {self.seconds:.0f} s: {answered} answers ({statuses}),",
                f"  then {checks} requests to check the ledger",
                f"  2xx writes: {writes}",
                f"  faults injected: {faults}",
                f"  answers retried (503, 429, dropped connections): {self.retries};"
                f" 503/429 without Retry-After: {self.without_retry_after}",
                f"  unresolved after {ATTEMPTS} tries: {len(self.unresolved)}",
                f"  events delivered: {self.events} ({self.duplicate_events} redelivered under their own id)",
                f"  500s: {self.server_errors}; mismatches: {len(self.mismatches)}",
                *(f"    - {m}" for m in self.mismatches[:20]),
            )
        )


class Session:
    """One user's HTTP client with the retry rule above; counts into ``figures`` under ``lock``."""

    def __init__(self, base_url: str, token: str, figures: Figures, lock: threading.Lock) -> None:
        self.base_url = base_url
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {token}"
        self.figures = figures
        self.lock = lock

    def call(self, method: str, path: str, *, body: Any = None, key: str | None = None) -> requests.Response | None:
        """The answer once it is not a retryable one; None when it stayed retryable (unresolved)."""
        headers = {"Idempotency-Key": key} if key else {}
        for attempt in range(ATTEMPTS):
            try:
                answer = self.http.request(method, self.base_url + path, json=body, headers=headers, timeout=60)
            except requests.ConnectionError:
                answer = None
            with self.lock:
                if answer is not None:
                    self.figures.statuses[answer.status_code] += 1
                    if answer.status_code in (429, 503) and "Retry-After" not in answer.headers:
                        self.figures.without_retry_after += 1
            if answer is not None and answer.status_code not in RETRIED:
                return answer
            with self.lock:
                self.figures.retries += 1
            wait = float(answer.headers.get("Retry-After", "0.2")) if answer is not None else 0.2
            time.sleep(min(wait, RETRY_CAP_S) * (0.5 + random.random() / 2) * (1 + attempt / 4))
        with self.lock:
            self.figures.unresolved.append(f"{method} {path}")
        return None

    def pages(self, path: str) -> Iterator[dict[str, Any]]:
        """Every item of a paged GET, following next_cursor."""
        cursor: str | None = None
        while True:
            query = f"{'&' if '?' in path else '?'}cursor={quote(cursor)}" if cursor else ""
            answer = self.call("GET", path + query)
            if answer is None or answer.status_code != 200:
                raise AssertionError(f"GET {path}: {answer.status_code if answer else 'unresolved'}")
            page = answer.json()
            yield from page["items"]
            cursor = page.get("next_cursor")
            if not cursor:
                return


@dataclass
class Ledger:
    """Every write the API answered 2xx, with the order writes happened in (``tick``)."""

    orders: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)  # id -> user, units by product
    paid: set[str] = field(default_factory=set)
    cancelled: set[str] = field(default_factory=set)
    posts: dict[str, tuple[str, int, str]] = field(default_factory=dict)  # id -> author, tick, word
    follows: dict[tuple[str, str], int] = field(default_factory=dict)  # (follower, followee) -> tick
    likes: set[tuple[str, str]] = field(default_factory=set)  # (post, user)
    comments: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> post, author
    reviews: set[tuple[str, str]] = field(default_factory=set)  # (product, user)
    ticks: Iterator[int] = field(default_factory=lambda: iter(range(1, 1 << 62)))

    def tick(self) -> int:
        return next(self.ticks)


class Client:
    """One user's traffic: picks an action by weight, records what succeeded."""

    def __init__(self, user: str, session: Session, world: "World", seed: int) -> None:
        self.user = user
        self.session = session
        self.world = world
        self.random = random.Random(seed)

    def run(self, deadline: float) -> None:
        actions = list(MIX)
        weights = [MIX[a] for a in actions]
        while time.monotonic() < deadline:
            action = self.random.choices(actions, weights)[0]
            getattr(self, action)()

    def _write(self, kind: str, method: str, path: str, body: Any = None, *, keyed: bool = False) -> Any:
        """The JSON of a 2xx answer (or {} for 204), or None; a 409 on a repeat is the write already done."""
        answer = self.session.call(method, path, body=body, key=uuid.uuid4().hex if keyed else None)
        if answer is None or answer.status_code >= 300:
            return None
        with self.world.lock:
            self.session.figures.writes[kind] += 1
        return answer.json() if answer.content else {}

    def order(self) -> None:
        products = self.random.sample(self.world.products, self.random.randint(1, 2))
        units = {product: self.random.randint(1, 3) for product in products}
        lines = [{"product_id": p, "quantity": q, "unit_price": PRICE} for p, q in units.items()]
        placed = self._write("order", "POST", "/orders", {"lines": lines}, keyed=True)
        if placed is not None:
            with self.world.lock:
                self.world.ledger.orders[placed["order_id"]] = (self.user, units)

    def _my_open_order(self) -> str | None:
        with self.world.lock:
            ledger = self.world.ledger
            mine = [o for o, (u, _) in ledger.orders.items() if u == self.user and o not in ledger.cancelled]
        return self.random.choice(mine) if mine else None

    def pay(self) -> None:
        order_id = self._my_open_order()
        with self.world.lock:
            if order_id is None or order_id in self.world.ledger.paid:
                return
            units = sum(self.world.ledger.orders[order_id][1].values())
        amount = {"amount": UNIT_PRICE * units, "currency": CURRENCY}
        body = {"amount": amount, "payment_method": "tok_sandbox_visa"}
        if self._write("pay", "POST", f"/orders/{order_id}/payments", body, keyed=True) is not None:
            with self.world.lock:
                self.world.ledger.paid.add(order_id)

    def cancel(self) -> None:
        order_id = self._my_open_order()
        if order_id is not None and self._write("cancel", "POST", f"/orders/{order_id}/cancel") is not None:
            with self.world.lock:
                self.world.ledger.cancelled.add(order_id)

    def post(self) -> None:
        word = f"soak{uuid.uuid4().hex[:12]}"
        with self.world.lock:
            tick = self.world.ledger.tick()
        body = {"text": f"{self.world.run_word} {word} a post of the soak", "tags": ["soak"]}
        posted = self._write("post", "POST", "/posts", body, keyed=True)
        if posted is not None:
            with self.world.lock:
                self.world.ledger.posts[posted["post_id"]] = (self.user, tick, word)

    def follow(self) -> None:
        followee = self.random.choice([u for u in self.world.users if u != self.user])
        if self._write("follow", "PUT", f"/users/{followee}/followers/me") is not None:
            with self.world.lock:
                ledger = self.world.ledger
                ledger.follows.setdefault((self.user, followee), ledger.tick())

    def _some_post(self) -> str | None:
        with self.world.lock:
            posts = list(self.world.ledger.posts)
        return self.random.choice(posts) if posts else None

    def like(self) -> None:
        post_id = self._some_post()
        if post_id is not None and self._write("like", "PUT", f"/posts/{post_id}/likes/me") is not None:
            with self.world.lock:
                self.world.ledger.likes.add((post_id, self.user))

    def comment(self) -> None:
        post_id = self._some_post()
        if post_id is None:
            return
        made = self._write("comment", "POST", f"/posts/{post_id}/comments", {"text": "a comment"}, keyed=True)
        if made is not None:
            with self.world.lock:
                self.world.ledger.comments[made["comment_id"]] = (post_id, self.user)

    def review(self) -> None:
        with self.world.lock:
            ledger = self.world.ledger
            # A review needs a paid purchase (the order paid, not cancelled): the API checks it.
            paid = ledger.paid - ledger.cancelled
            bought = {p for o, (u, units) in ledger.orders.items() if u == self.user and o in paid for p in units}
            open_ = sorted(p for p in bought if (p, self.user) not in ledger.reviews)
        if not open_:
            return
        product = self.random.choice(open_)
        body = {"rating": self.random.randint(1, 5), "title": "Soaked"}
        answer = self.session.call("POST", f"/products/{product}/reviews", body=body)
        # 409: already reviewed, by an attempt whose answer was lost to a fault: the review exists once.
        if answer is not None and answer.status_code in (201, 409):
            with self.world.lock:
                self.session.figures.writes["review"] += answer.status_code == 201
                ledger.reviews.add((product, self.user))


@dataclass
class World:
    """What the clients share: the users, the products, the ledger."""

    run_word: str
    users: list[str]
    products: list[str]
    ledger: Ledger = field(default_factory=Ledger)
    lock: threading.Lock = field(default_factory=threading.Lock)


def run(
    base_url: str, token: Token, *, clients: int = 4, seconds: float = 60, settle_s: float = 180, seed: int = 1
) -> Figures:
    """Traffic for ``seconds``, then the checks until they pass or ``settle_s`` has passed."""
    figures = Figures(clients=clients)
    lock = threading.Lock()
    run_word = f"soakrun{uuid.uuid4().hex[:10]}"
    admin = Session(base_url, token("U-SOAK-ADMIN", "admin"), figures, lock)
    products = [_create_product(admin, f"P-SOAK-{run_word[-6:].upper()}-{n}", run_word) for n in range(4)]
    users = [f"U-SOAK-{run_word[-6:]}-{n}" for n in range(clients)]
    world = World(run_word, users, products, lock=lock)
    sessions = {user: Session(base_url, token(user), figures, lock) for user in users}
    for user, session in sessions.items():
        _register(session, user)
    started = time.monotonic()
    threads = [
        threading.Thread(target=Client(user, session, world, seed * 1000 + n).run, args=(started + seconds,))
        for n, (user, session) in enumerate(sessions.items())
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    figures.seconds = time.monotonic() - started
    figures.traffic = Counter(figures.statuses)
    checker = Checker(base_url, world, sessions, admin, figures)
    deadline = time.monotonic() + settle_s
    while True:
        figures.mismatches = checker.mismatches()
        if not figures.mismatches or time.monotonic() > deadline:
            break
        time.sleep(2)
    figures.events, figures.duplicate_events = checker.events_seen()
    return figures


def _create_product(admin: Session, product_id: str, run_word: str) -> str:
    body = {
        "product_id": product_id,
        "name": f"Soak mug {product_id[-1]}",
        "description": run_word,
        "category": "soak",
        "price": PRICE,
        "available": INITIAL_STOCK,
    }
    _created(admin.call("POST", "/products", body=body))
    return product_id


def _register(session: Session, user: str) -> None:
    body = {"email": f"{user.lower()}@example.com", "name": "Soak Customer"}
    _created(session.call("POST", "/users", body=body))


def _created(answer: requests.Response | None) -> None:
    """201, or 409 when a first attempt whose answer a fault lost had created it."""
    if answer is None or answer.status_code not in (201, 409):
        raise AssertionError(
            f"setup refused: {answer.status_code if answer else 'unresolved'} {answer and answer.text}"
        )


class Checker:
    """Compares the ledger with what the stack serves; each check lists its mismatches."""

    def __init__(
        self, base_url: str, world: World, sessions: Mapping[str, Session], admin: Session, figures: Figures
    ) -> None:
        self.world = world
        self.sessions = sessions
        self.admin = admin
        self.figures = figures
        page = requests.get(f"{base_url}/__local/stack", timeout=10).json()
        self.sqs: Any = boto3.client(
            "sqs",
            endpoint_url=page["endpoints"]["aws"],
            region_name=REGION,
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )
        self.events_url = page["resources"]["OrderEventsQueue"]["QueueUrl"]
        self.base_url = base_url
        self.events: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.deliveries = 0

    def mismatches(self) -> list[str]:
        found: list[str] = []
        for check in (self.orders, self.stock, self.social, self.counters, self.events_check, self.feeds, self.search):
            found += check()
        return found

    def orders(self) -> list[str]:
        ledger, found = self.world.ledger, []
        for user, session in self.sessions.items():
            orders = list(session.pages("/users/me/orders?limit=100"))
            wanted = {o for o, (u, _) in ledger.orders.items() if u == user}
            found += _compare(f"orders of {user}", wanted, Counter(o["order_id"] for o in orders))
            for order in orders:
                expected = None
                if order["order_id"] in ledger.cancelled:
                    # A paid order's cancel refunds its payment: the worker moves it on to Refunded.
                    expected = "Refunded" if order["order_id"] in ledger.paid else "Cancelled"
                elif order["order_id"] in ledger.paid:
                    expected = "Paid"
                if expected and order["status"] != expected:
                    found.append(f"order {order['order_id']} is {order['status']}, not {expected}")
        return found

    def stock(self) -> list[str]:
        ledger, found = self.world.ledger, []
        sold: Counter[str] = Counter()
        for order_id, (_, units) in ledger.orders.items():
            if order_id not in ledger.cancelled:
                sold.update(units)
        for product in self.world.products:
            answer = self.admin.call("GET", f"/products/{product}")
            available = answer.json()["available"] if answer is not None else None
            if available is None or available + sold[product] != INITIAL_STOCK:
                found.append(f"{product}: stock {available} + sold {sold[product]} != {INITIAL_STOCK}")
        return found

    def social(self) -> list[str]:
        ledger, found = self.world.ledger, []
        for user, session in self.sessions.items():
            posts = Counter(p["post_id"] for p in session.pages(f"/users/{user}/posts"))
            found += _compare(f"posts of {user}", {p for p, (a, *_) in ledger.posts.items() if a == user}, posts)
            following = Counter(f["followee_id"] for f in session.pages(f"/users/{user}/following"))
            found += _compare(f"following of {user}", {b for a, b in ledger.follows if a == user}, following)
            comments = Counter(c["comment_id"] for c in session.pages(f"/users/{user}/comments"))
            found += _compare(
                f"comments of {user}", {c for c, (_, a) in ledger.comments.items() if a == user}, comments
            )
            reviews = Counter(r["product_id"] for r in session.pages("/users/me/reviews"))
            found += _compare(f"reviews of {user}", {p for p, u in ledger.reviews if u == user}, reviews)
        for post_id in ledger.posts:
            likes = Counter(like["user_id"] for like in self.admin.pages(f"/posts/{post_id}/likes"))
            found += _compare(f"likes of {post_id}", {u for p, u in ledger.likes if p == post_id}, likes)
        return found

    def counters(self) -> list[str]:
        ledger, found = self.world.ledger, []
        for post_id in ledger.posts:
            answer = self.admin.call("GET", f"/posts/{post_id}")
            post = answer.json() if answer is not None and answer.status_code == 200 else {}
            likes = sum(1 for p, _ in ledger.likes if p == post_id)
            comments = sum(1 for p, _ in ledger.comments.values() if p == post_id)
            if (post.get("likes_count"), post.get("comments_count")) != (likes, comments):
                counted = f"{post.get('likes_count')}/{post.get('comments_count')}"
                found.append(f"post {post_id}: likes/comments counted {counted}, listed {likes}/{comments}")
        for user in self.world.users:
            answer = self.admin.call("GET", f"/users/{user}")
            profile = answer.json() if answer is not None and answer.status_code == 200 else {}
            counts = (
                sum(1 for _, b in ledger.follows if b == user),
                sum(1 for a, _ in ledger.follows if a == user),
                sum(1 for a, *_ in ledger.posts.values() if a == user),
            )
            on_profile = (profile.get("followers_count"), profile.get("following_count"), profile.get("posts_count"))
            if on_profile != counts:
                found.append(f"profile {user}: counted {on_profile}, listed {counts}")
        for product in self.world.products:
            answer = self.admin.call("GET", f"/products/{product}")
            rating = answer.json()["rating"]["count"] if answer is not None and answer.status_code == 200 else None
            reviews = sum(1 for p, _ in ledger.reviews if p == product)
            if rating != reviews:
                found.append(f"{product}: {rating} ratings counted, {reviews} reviews")
        return found

    def _receive_events(self) -> None:
        while messages := self.sqs.receive_message(
            QueueUrl=self.events_url, MaxNumberOfMessages=10, WaitTimeSeconds=0
        ).get("Messages", []):
            for message in messages:
                event = json.loads(message["Body"])
                data = event["detail"]["data"]
                subject = data.get("order_id") or data.get("aggregate_id") or ""
                self.events[(event["detail-type"], subject)].add(event["detail"]["metadata"]["event_id"])
                self.deliveries += 1
            self.sqs.delete_message_batch(
                QueueUrl=self.events_url,
                Entries=[{"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(messages)],
            )

    def events_check(self) -> list[str]:
        self._receive_events()
        ledger, found = self.world.ledger, []
        expected = [("OrderPlaced", o) for o in ledger.orders] + [("OrderCancelled", o) for o in ledger.cancelled]
        expected += [("PaymentAuthorized", o) for o in ledger.paid if o not in ledger.cancelled]
        expected += [("PaymentRefunded", o) for o in ledger.paid & ledger.cancelled]
        for kind, order_id in expected:
            ids = self.events.get((kind, order_id), set())
            if len(ids) != 1:
                found.append(f"{kind} of {order_id}: {len(ids)} event ids")
        return found

    def events_seen(self) -> tuple[int, int]:
        self._receive_events()
        return self.deliveries, self.deliveries - sum(len(ids) for ids in self.events.values())

    def feeds(self) -> list[str]:
        ledger, found = self.world.ledger, []
        for follower, session in self.sessions.items():
            wanted = {
                post_id
                for post_id, (author, tick, _) in ledger.posts.items()
                if (follower, author) in ledger.follows and ledger.follows[(follower, author)] < tick
            }
            have = {p["post_id"] for p in session.pages("/feed")}
            missing = wanted - have
            if missing:
                found.append(f"home feed of {follower}: {len(missing)} of {len(wanted)} posts missing")
        return found

    def search(self) -> list[str]:
        ledger, found = self.world.ledger, []
        hits = Counter(h["post_id"] for h in self.admin.pages(f"/search/posts?q={self.world.run_word}&limit=50"))
        found += _compare("posts found by search", set(ledger.posts), hits)
        products = {h["product_id"] for h in self.admin.pages(f"/search/products?q={self.world.run_word}&limit=50")}
        if products != set(self.world.products):
            found.append(f"products found by search: {sorted(products)}")
        return found


def _compare(what: str, wanted: set[str], listed: Counter[str]) -> list[str]:
    missing, extra = wanted - set(listed), set(listed) - wanted
    twice = sorted(k for k, n in listed.items() if n > 1)
    if missing or extra or twice:
        examples = ", ".join([*sorted(missing)[:2], *sorted(extra)[:2], *twice[:2]])
        return [f"{what}: {len(missing)} missing, {len(extra)} unknown, {len(twice)} listed twice ({examples})"]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--stack", default="http://127.0.0.1:3000", help="a running local stack")
    parser.add_argument("--state-dir", type=Path, default=Path(".local-stack"), help="its state (the token key)")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    key = SigningKey.load_or_create(args.state_dir)
    issuer = issuer_for(int(args.stack.rsplit(":", 1)[1]))

    def token(sub: str, *groups: str) -> str:
        return key.mint(issuer, sub, groups)

    figures = run(args.stack, token, clients=args.clients, seconds=args.seconds, seed=args.seed)
    figures.faults = requests.get(f"{args.stack}/__local/stack", timeout=10).json().get("faults", {})
    print(figures.summary())
    return 0 if not figures.mismatches and not figures.server_errors and not figures.unresolved else 1


if __name__ == "__main__":
    raise SystemExit(main())
