"""The composition root of the commerce context: settings, clients, repository, outbox, publisher,
search index and queues wired in one place. Routes, consumers and the sweeper ask it; nothing else builds a port.

Everything is built on first use and kept for the container's life (clients come from the
platform's per-container factories); ``reset`` forgets it (tests switch environments between tests).
"""

from datetime import timedelta
from functools import cache
from typing import TYPE_CHECKING

from shopfeed.platform import clients
from shopfeed.platform.config import settings

# The repositories, the settings and the other ports are imported inside the factories that build
# them (decision 214): an API function imports this module through its routes, and a container builds
# them when priming runs (``API_PORTS``, at init in Lambda) or on the first request that depends on
# one, so an import of the API (tests, tools, ``sam local``) pays only for the routes themselves.
if TYPE_CHECKING:
    from shopfeed.commerce.archive.archiver import ArchivePorts
    from shopfeed.commerce.cart.repository import CartRepository
    from shopfeed.commerce.emails.worker import EmailPorts
    from shopfeed.commerce.inventory.rebalancer import RebalancePorts
    from shopfeed.commerce.inventory.repository import SnapshotQueries
    from shopfeed.commerce.inventory.snapshots import SnapshotPorts
    from shopfeed.commerce.inventory.stock import StockRepository
    from shopfeed.commerce.orders.expiry import ExpiryPorts
    from shopfeed.commerce.orders.repository import CommerceRepository
    from shopfeed.commerce.payments.provider import PaymentProvider
    from shopfeed.commerce.payments.repository import PaymentQueries, PaymentRepository
    from shopfeed.commerce.payments.services import PaymentTask
    from shopfeed.commerce.reviews.repository import ReviewRepository
    from shopfeed.commerce.settings import CommerceOutboxSettings
    from shopfeed.commerce.shipments.repository import ShipmentQueries, ShipmentRepository
    from shopfeed.platform import dynamo
    from shopfeed.platform.cursors import CursorCodec
    from shopfeed.platform.outbox_relay import OutboxRepository
    from shopfeed.platform.publisher import EventBridgePublisher
    from shopfeed.platform.queues import Backoff, SqsTaskQueue
    from shopfeed.platform.search import SearchIndex
    from shopfeed.platform.search.sync import IndexWrite


@cache
def cursors() -> "CursorCodec":
    """The API's cursor signer (its key is read once per container)."""
    from shopfeed.commerce.settings import CommerceApiSettings
    from shopfeed.platform.cursors import CursorCodec, signing_keys

    return CursorCodec(signing_keys(settings(CommerceApiSettings)))


@cache
def api_table() -> "dynamo.Table":
    """CommerceTable as the API's repositories share it."""
    from shopfeed.commerce.settings import CommerceApiSettings

    return _table(settings(CommerceApiSettings).commerce_table_name)


def _table(name: str) -> "dynamo.Table":
    from shopfeed.platform import dynamo

    return dynamo.Table(clients.dynamodb(), name)


@cache
def repository() -> "CommerceRepository":
    """CommerceTable for the API: the repository its routes depend on."""
    from shopfeed.commerce.orders.repository import CommerceRepository

    return CommerceRepository(api_table(), cursors())


def stock() -> "StockRepository":
    """Stock buckets for the API (the repository's own: orders and inventory share its layouts)."""
    return repository().stock


@cache
def carts() -> "CartRepository":
    """Carts for the API; a checkout places its order through the orders' repository."""
    from shopfeed.commerce.cart.repository import CartRepository

    return CartRepository(api_table(), repository())


@cache
def reviews() -> "ReviewRepository":
    """CommerceTable's reviews for the API (their own repository: the write repository stays small)."""
    from shopfeed.commerce.reviews.repository import ReviewRepository

    return ReviewRepository(api_table(), cursors())


@cache
def stream_table() -> "dynamo.Table":
    """CommerceTable as the stream consumer's counters write it (the product rating counters)."""
    from shopfeed.commerce.settings import CommerceStreamSettings

    return _table(settings(CommerceStreamSettings).commerce_table_name)


# Search, once per container (None when the stack has none: search is off): the engine as the API's
# routes ask it (its budget, behind a breaker), and the queue the stream consumer puts index writes on.
@cache
def api_search_index() -> "SearchIndex | None":
    """The engine as the API's search routes ask it (None when search is off)."""
    from shopfeed.platform.search import engine

    return engine.for_api()


def warm_search() -> None:
    """At init (``warmup.prime``'s ``connections``): the API's connection to the engine opened, where
    search is on (``SearchIndex.warm_up``, decision 268)."""
    search = api_search_index()
    if search is not None:
        from shopfeed.commerce.catalog.search import PRODUCTS

        search.warm_up(PRODUCTS)


@cache
def search_sync_queue() -> "SqsTaskQueue[IndexWrite] | None":
    """The queue the stream consumer puts index writes on (None when search is off)."""
    # Imported here, as every consumer-side port below: the API functions import this module, and the
    # task queues and the relay bring the stream-record machinery (Powertools' data classes) an API
    # never runs (decision 206).
    from shopfeed.platform.search import sync

    return sync.queue()


def _outbox_ports(config: "CommerceOutboxSettings") -> "tuple[EventBridgePublisher, OutboxRepository]":
    from shopfeed.commerce import items
    from shopfeed.platform.outbox_relay import OutboxRepository
    from shopfeed.platform.publisher import EventBridgePublisher

    table = _table(config.commerce_table_name)
    return (
        EventBridgePublisher(clients.eventbridge(), config.event_bus_name),
        OutboxRepository(table, items.OUTBOX, timedelta(days=config.outbox_retention_days)),
    )


@cache
def relay_ports() -> "tuple[EventBridgePublisher, OutboxRepository]":
    """The bus and the outbox as the stream relay uses them."""
    from shopfeed.commerce.settings import CommerceStreamSettings

    return _outbox_ports(settings(CommerceStreamSettings))


@cache
def sweeper_ports() -> "tuple[EventBridgePublisher, OutboxRepository, timedelta]":
    """The bus, the outbox and the sweep threshold as the scheduled sweeper uses them."""
    from shopfeed.commerce.settings import CommerceSweeperSettings

    config = settings(CommerceSweeperSettings)
    return (*_outbox_ports(config), timedelta(seconds=config.outbox_sweep_after_seconds))


# -- payments ------------------------------------------------------------------------------------


@cache
def payments() -> "PaymentRepository":
    """Payment attempts as the API starts them."""
    from shopfeed.commerce.payments.repository import PaymentRepository

    return PaymentRepository(api_table())


@cache
def payment_lists() -> "PaymentQueries":
    """ECOM-006 and ECOM-007 for the API."""
    from shopfeed.commerce.payments.repository import PaymentQueries

    return PaymentQueries(api_table(), cursors())


@cache
def payment_queue() -> "SqsTaskQueue[PaymentTask]":
    """The payment queue, as the stream consumer fills it."""
    from shopfeed.commerce.settings import CommerceStreamSettings
    from shopfeed.platform.queues import SqsTaskQueue

    return SqsTaskQueue(clients.sqs(), settings(CommerceStreamSettings).payment_queue_url)


@cache
def payment_worker_ports() -> "tuple[PaymentRepository, PaymentProvider]":
    """The payment worker's attempts and the provider the configuration names."""
    from shopfeed.commerce.payments.repository import PaymentRepository
    from shopfeed.commerce.settings import PaymentWorkerSettings

    config = settings(PaymentWorkerSettings)
    table = _table(config.commerce_table_name)
    return PaymentRepository(table), payment_provider(config.payment_provider, table)


@cache
def payment_redelivery() -> "tuple[SqsTaskQueue[PaymentTask], Backoff]":
    """The payment queue, as the worker holds failed messages back on it, and for how long."""
    from shopfeed.commerce.settings import PaymentWorkerSettings
    from shopfeed.platform.queues import Backoff, SqsTaskQueue

    config = settings(PaymentWorkerSettings)
    # commerce.payments.worker.BACKOFF with the template's first wait (not imported: the API uses this module).
    backoff = Backoff(base=config.payment_retry_seconds, cap=900)
    return SqsTaskQueue(clients.sqs(), config.payment_queue_url), backoff


def payment_provider(name: str, table: "dynamo.Table") -> "PaymentProvider":
    """The PaymentProvider called ``name``. A real provider's adapter is one more case here."""
    from shopfeed.commerce.payments.provider import SANDBOX
    from shopfeed.commerce.payments.sandbox import SandboxProvider

    if name == SANDBOX:
        return SandboxProvider(table)
    raise ValueError(f"unknown payment provider {name!r}")


# -- customer emails -----------------------------------------------------------------------------


@cache
def email_ports() -> "EmailPorts":
    """The email worker's table (guards and customers), SES with the sender address, and its queue."""
    # Imported here: the API functions import this module and never send an email.
    from shopfeed.commerce.emails.notices import Notice
    from shopfeed.commerce.emails.repository import EmailRepository
    from shopfeed.commerce.emails.sender import SesSender
    from shopfeed.commerce.emails.worker import EmailPorts
    from shopfeed.commerce.settings import OrderEmailSettings
    from shopfeed.platform.queues import SqsTaskQueue

    config = settings(OrderEmailSettings)
    table = _table(config.commerce_table_name)
    return EmailPorts(
        repository=EmailRepository(table, timedelta(seconds=config.email_claim_seconds)),
        sender=SesSender(clients.sesv2(), config.email_sender),
        # Only its retry_after is used: the rule puts the messages there, the worker holds failed ones back.
        redelivery=SqsTaskQueue[Notice](clients.sqs(), config.email_queue_url),
    )


# -- shipments -----------------------------------------------------------------------------------


@cache
def shipments() -> "ShipmentRepository":
    """Shipments as the API creates and moves them."""
    from shopfeed.commerce.shipments.repository import ShipmentRepository

    return ShipmentRepository(api_table())


@cache
def shipment_lists() -> "ShipmentQueries":
    """ECOM-008 and ECOM-010 for the API."""
    from shopfeed.commerce.shipments.repository import ShipmentQueries

    return ShipmentQueries(api_table(), cursors())


# -- archive (ECOM-011) and inventory snapshots ------------------------------------------------------


@cache
def archiver() -> "ArchivePorts":
    """The archive job's table, bucket and bounds."""
    # Imported here: the API functions import this module and never run the job.
    from shopfeed.commerce.archive.archiver import ArchivePolicy, ArchivePorts
    from shopfeed.commerce.archive.repository import ArchiveRepository
    from shopfeed.commerce.settings import OrderArchiverSettings
    from shopfeed.platform.objects import S3Objects

    config = settings(OrderArchiverSettings)
    return ArchivePorts(
        store=ArchiveRepository(_table(config.commerce_table_name)),
        objects=S3Objects(clients.s3(), config.archive_bucket_name),
        policy=ArchivePolicy(
            after=timedelta(days=config.archive_after_days),
            max_orders=config.archive_max_orders_per_run,
            stop_margin=timedelta(seconds=config.archive_stop_margin_seconds),
            batch_orders=config.archive_batch_orders,
        ),
    )


@cache
def expiry_job() -> "ExpiryPorts":
    """The payment-window sweeper's table and policy."""
    # Imported here, as the archive's: the API functions import this module and never run the job.
    from shopfeed.commerce.orders.expiry import ExpiryPolicy, ExpiryPorts
    from shopfeed.commerce.orders.repository import ExpiryRepository
    from shopfeed.commerce.settings import OrderExpirySettings

    config = settings(OrderExpirySettings)
    return ExpiryPorts(
        store=ExpiryRepository(_table(config.commerce_table_name)),
        policy=ExpiryPolicy(
            window=timedelta(minutes=config.payment_window_minutes),
            max_orders=config.expiry_max_orders_per_run,
            stop_margin=timedelta(seconds=config.expiry_stop_margin_seconds),
            workers=config.expiry_workers,
        ),
    )


@cache
def snapshot_job() -> "SnapshotPorts":
    """The snapshot job's table, retention and write rate."""
    from shopfeed.commerce.inventory.repository import SnapshotRepository
    from shopfeed.commerce.inventory.snapshots import SnapshotPorts
    from shopfeed.commerce.settings import InventorySnapshotSettings

    config = settings(InventorySnapshotSettings)
    return SnapshotPorts(
        store=SnapshotRepository(_table(config.commerce_table_name)),
        retention=timedelta(days=config.snapshot_retention_days),
        writes_per_second=config.snapshot_writes_per_second,
    )


@cache
def rebalancer() -> "RebalancePorts":
    """The rebalancer's stock buckets and its policy (low-water mark, moves per product)."""
    # Imported here, as the archive's: the API functions import this module and never rebalance.
    from shopfeed.commerce.inventory.rebalancer import RebalancePolicy, RebalancePorts
    from shopfeed.commerce.inventory.stock import StockRepository
    from shopfeed.commerce.settings import StockRebalancerSettings

    config = settings(StockRebalancerSettings)
    return RebalancePorts(
        stock=StockRepository(_table(config.commerce_table_name)),
        policy=RebalancePolicy(low_water=config.rebalance_low_water, max_moves=config.rebalance_max_moves),
    )


@cache
def snapshots() -> "SnapshotQueries":
    """The day's snapshots as the API reads them."""
    from shopfeed.commerce.inventory.repository import SnapshotQueries

    return SnapshotQueries(api_table(), cursors())


# What the API's routes depend on: built at init, so a container's first request finds them ready. The
# search engine's client too, where search is configured (decision 240: its import moved from the first
# search to init).
API_PORTS = (
    *(repository, carts, reviews, payments, payment_lists, shipments, shipment_lists, snapshots),
    api_search_index,
)


def reset() -> None:
    """Forget every port built (tests change the environment between tests)."""
    for factory in (
        *(cursors, api_table, repository, carts, reviews, stream_table, search_sync_queue, api_search_index),
        *(relay_ports, sweeper_ports),
        *(payments, payment_lists, payment_queue, payment_worker_ports, payment_redelivery, shipments, shipment_lists),
        *(archiver, snapshot_job, snapshots, email_ports, expiry_job, rebalancer),
    ):
        factory.cache_clear()
