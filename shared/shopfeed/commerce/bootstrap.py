"""The composition root of the commerce context: settings, clients, repository, outbox, publisher,
search index and queues wired in one place. Routes, consumers and the sweeper ask it; nothing else builds a port.

Everything is built on first use and kept for the container's life (clients come from the
platform's per-container factories); ``reset`` forgets it (tests switch environments between tests).
"""

from datetime import timedelta
from functools import cache
from typing import TYPE_CHECKING

from shopfeed.commerce import items
from shopfeed.commerce.cart.repository import CartRepository
from shopfeed.commerce.inventory.repository import SnapshotQueries, SnapshotRepository
from shopfeed.commerce.inventory.snapshots import SnapshotPorts
from shopfeed.commerce.inventory.stock import StockRepository
from shopfeed.commerce.orders.repository import CommerceRepository, ExpiryRepository
from shopfeed.commerce.payments.provider import SANDBOX, PaymentProvider, SandboxProvider
from shopfeed.commerce.payments.repository import PaymentQueries, PaymentRepository
from shopfeed.commerce.payments.services import PaymentTask
from shopfeed.commerce.reviews.repository import ReviewRepository
from shopfeed.commerce.settings import (
    CommerceApiSettings,
    CommerceOutboxSettings,
    CommerceStreamSettings,
    CommerceSweeperSettings,
    InventorySnapshotSettings,
    OrderArchiverSettings,
    OrderEmailSettings,
    OrderExpirySettings,
    PaymentWorkerSettings,
    StockRebalancerSettings,
)
from shopfeed.commerce.shipments.repository import ShipmentQueries, ShipmentRepository
from shopfeed.platform import clients, dynamo
from shopfeed.platform.config import settings
from shopfeed.platform.cursors import CursorCodec, signing_keys
from shopfeed.platform.publisher import EventBridgePublisher
from shopfeed.platform.search import engine as search_engine

if TYPE_CHECKING:
    from shopfeed.commerce.archive.archiver import ArchivePorts
    from shopfeed.commerce.emails.worker import EmailPorts
    from shopfeed.commerce.inventory.rebalancer import RebalancePorts
    from shopfeed.commerce.orders.expiry import ExpiryPorts
    from shopfeed.platform.outbox_relay import OutboxRepository
    from shopfeed.platform.queues import Backoff, SqsTaskQueue
    from shopfeed.platform.search.sync import IndexWrite


@cache
def cursors() -> CursorCodec:
    """The API's cursor signer (its key is read once per container)."""
    return CursorCodec(signing_keys(settings(CommerceApiSettings)))


@cache
def api_table() -> dynamo.Table:
    """CommerceTable as the API's repositories share it."""
    return dynamo.Table(clients.dynamodb(), settings(CommerceApiSettings).commerce_table_name)


@cache
def repository() -> CommerceRepository:
    """CommerceTable for the API: the repository its routes depend on."""
    return CommerceRepository(api_table(), cursors())


def stock() -> StockRepository:
    """Stock buckets for the API (the repository's own: orders and inventory share its layouts)."""
    return repository().stock


@cache
def carts() -> CartRepository:
    """Carts for the API; a checkout places its order through the orders' repository."""
    return CartRepository(api_table(), repository())


@cache
def reviews() -> ReviewRepository:
    """CommerceTable's reviews for the API (their own repository: the write repository stays small)."""
    return ReviewRepository(api_table(), cursors())


@cache
def stream_table() -> dynamo.Table:
    """CommerceTable as the stream consumer's counters write it (the product rating counters)."""
    return dynamo.Table(clients.dynamodb(), settings(CommerceStreamSettings).commerce_table_name)


# Search, once per container (None when the stack has none: search is off): the engine as the API's
# routes ask it (its budget, behind a breaker), and the queue the stream consumer puts index writes on.
api_search_index = cache(search_engine.for_api)


@cache
def search_sync_queue() -> "SqsTaskQueue[IndexWrite] | None":
    """The queue the stream consumer puts index writes on (None when search is off)."""
    # Imported here, as every consumer-side port below: the API functions import this module, and the
    # task queues and the relay bring the stream-record machinery (Powertools' data classes) an API
    # never runs (decision 206).
    from shopfeed.platform.search import sync

    return sync.queue()


def _outbox_ports(config: CommerceOutboxSettings) -> "tuple[EventBridgePublisher, OutboxRepository]":
    from shopfeed.platform.outbox_relay import OutboxRepository

    table = dynamo.Table(clients.dynamodb(), config.commerce_table_name)
    return (
        EventBridgePublisher(clients.eventbridge(), config.event_bus_name),
        OutboxRepository(table, items.OUTBOX, timedelta(days=config.outbox_retention_days)),
    )


@cache
def relay_ports() -> "tuple[EventBridgePublisher, OutboxRepository]":
    """The bus and the outbox as the stream relay uses them."""
    return _outbox_ports(settings(CommerceStreamSettings))


@cache
def sweeper_ports() -> "tuple[EventBridgePublisher, OutboxRepository, timedelta]":
    """The bus, the outbox and the sweep threshold as the scheduled sweeper uses them."""
    config = settings(CommerceSweeperSettings)
    return (*_outbox_ports(config), timedelta(seconds=config.outbox_sweep_after_seconds))


# -- payments ------------------------------------------------------------------------------------


@cache
def payments() -> PaymentRepository:
    """Payment attempts as the API starts them."""
    return PaymentRepository(api_table())


@cache
def payment_lists() -> PaymentQueries:
    """ECOM-006 and ECOM-007 for the API."""
    return PaymentQueries(api_table(), cursors())


@cache
def payment_queue() -> "SqsTaskQueue[PaymentTask]":
    """The payment queue, as the stream consumer fills it."""
    from shopfeed.platform.queues import SqsTaskQueue

    return SqsTaskQueue(clients.sqs(), settings(CommerceStreamSettings).payment_queue_url)


@cache
def payment_worker_ports() -> tuple[PaymentRepository, PaymentProvider]:
    """The payment worker's attempts and the provider the configuration names."""
    config = settings(PaymentWorkerSettings)
    table = dynamo.Table(clients.dynamodb(), config.commerce_table_name)
    return PaymentRepository(table), payment_provider(config.payment_provider, table)


@cache
def payment_redelivery() -> "tuple[SqsTaskQueue[PaymentTask], Backoff]":
    """The payment queue, as the worker holds failed messages back on it, and for how long."""
    from shopfeed.platform.queues import Backoff, SqsTaskQueue

    config = settings(PaymentWorkerSettings)
    # commerce.payments.worker.BACKOFF with the template's first wait (not imported: the API uses this module).
    backoff = Backoff(base=config.payment_retry_seconds, cap=900)
    return SqsTaskQueue(clients.sqs(), config.payment_queue_url), backoff


def payment_provider(name: str, table: dynamo.Table) -> PaymentProvider:
    """The PaymentProvider called ``name``. A real provider's adapter is one more case here."""
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
    from shopfeed.platform.queues import SqsTaskQueue

    config = settings(OrderEmailSettings)
    table = dynamo.Table(clients.dynamodb(), config.commerce_table_name)
    return EmailPorts(
        repository=EmailRepository(table, timedelta(seconds=config.email_claim_seconds)),
        sender=SesSender(clients.sesv2(), config.email_sender),
        # Only its retry_after is used: the rule puts the messages there, the worker holds failed ones back.
        redelivery=SqsTaskQueue[Notice](clients.sqs(), config.email_queue_url),
    )


# -- shipments -----------------------------------------------------------------------------------


@cache
def shipments() -> ShipmentRepository:
    """Shipments as the API creates and moves them."""
    return ShipmentRepository(api_table())


@cache
def shipment_lists() -> ShipmentQueries:
    """ECOM-008 and ECOM-010 for the API."""
    return ShipmentQueries(api_table(), cursors())


# -- archive (ECOM-011) and inventory snapshots ------------------------------------------------------


@cache
def archiver() -> "ArchivePorts":
    """The archive job's table, bucket and bounds."""
    # Imported here: the API functions import this module and never run the job.
    from shopfeed.commerce.archive.archiver import ArchivePolicy, ArchivePorts
    from shopfeed.commerce.archive.repository import ArchiveRepository
    from shopfeed.platform.objects import S3Objects

    config = settings(OrderArchiverSettings)
    return ArchivePorts(
        store=ArchiveRepository(dynamo.Table(clients.dynamodb(), config.commerce_table_name)),
        objects=S3Objects(clients.s3(), config.archive_bucket_name),
        policy=ArchivePolicy(
            after=timedelta(days=config.archive_after_days),
            max_orders=config.archive_max_orders_per_run,
            stop_margin=timedelta(seconds=config.archive_stop_margin_seconds),
        ),
    )


@cache
def expiry_job() -> "ExpiryPorts":
    """The payment-window sweeper's table and policy."""
    # Imported here, as the archive's: the API functions import this module and never run the job.
    from shopfeed.commerce.orders.expiry import ExpiryPolicy, ExpiryPorts

    config = settings(OrderExpirySettings)
    return ExpiryPorts(
        store=ExpiryRepository(dynamo.Table(clients.dynamodb(), config.commerce_table_name)),
        policy=ExpiryPolicy(
            window=timedelta(minutes=config.payment_window_minutes),
            max_orders=config.expiry_max_orders_per_run,
            stop_margin=timedelta(seconds=config.expiry_stop_margin_seconds),
            workers=config.expiry_workers,
        ),
    )


@cache
def snapshot_job() -> SnapshotPorts:
    """The snapshot job's table, retention and write rate."""
    config = settings(InventorySnapshotSettings)
    return SnapshotPorts(
        store=SnapshotRepository(dynamo.Table(clients.dynamodb(), config.commerce_table_name)),
        retention=timedelta(days=config.snapshot_retention_days),
        writes_per_second=config.snapshot_writes_per_second,
    )


@cache
def rebalancer() -> "RebalancePorts":
    """The rebalancer's stock buckets and its policy (low-water mark, moves per product)."""
    # Imported here, as the archive's: the API functions import this module and never rebalance.
    from shopfeed.commerce.inventory.rebalancer import RebalancePolicy, RebalancePorts
    from shopfeed.commerce.inventory.stock import StockRepository

    config = settings(StockRebalancerSettings)
    return RebalancePorts(
        stock=StockRepository(dynamo.Table(clients.dynamodb(), config.commerce_table_name)),
        policy=RebalancePolicy(low_water=config.rebalance_low_water, max_moves=config.rebalance_max_moves),
    )


@cache
def snapshots() -> SnapshotQueries:
    """The day's snapshots as the API reads them."""
    return SnapshotQueries(api_table(), cursors())


# What the API's routes depend on: built at init, so a container's first request finds them ready.
API_PORTS = (repository, carts, reviews, payments, payment_lists, shipments, shipment_lists, snapshots)


def reset() -> None:
    """Forget every port built (tests change the environment between tests)."""
    for factory in (
        *(cursors, api_table, repository, carts, reviews, stream_table, search_sync_queue, api_search_index),
        *(relay_ports, sweeper_ports),
        *(payments, payment_lists, payment_queue, payment_worker_ports, payment_redelivery, shipments, shipment_lists),
        *(archiver, snapshot_job, snapshots, email_ports, expiry_job, rebalancer),
    ):
        factory.cache_clear()
