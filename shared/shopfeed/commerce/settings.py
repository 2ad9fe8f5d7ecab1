"""Configuration of the commerce functions, one model per function (read by ``platform.config.settings``)."""

from typing import Annotated, Literal

from pydantic import Field

from shopfeed.platform.config import CursorSettings, OutboxSettings, OutboxSweeperSettings, Settings


class CommerceApiSettings(CursorSettings):
    commerce_table_name: Annotated[str, Field(min_length=3)]


class CommerceOutboxSettings(OutboxSettings):
    """What relaying or re-driving the commerce outbox needs."""

    commerce_table_name: Annotated[str, Field(min_length=3)]


class CommerceStreamSettings(CommerceOutboxSettings):
    # New payment attempts are handed to the payment worker through this queue.
    payment_queue_url: Annotated[str, Field(min_length=1)]


class CommerceSweeperSettings(OutboxSweeperSettings, CommerceOutboxSettings):
    pass


class PaymentWorkerSettings(Settings):
    commerce_table_name: Annotated[str, Field(min_length=3)]
    # Which PaymentProvider settles attempts (bootstrap.payment_provider). Only the sandbox ships; a
    # real provider's adapter adds its name here and its class there.
    payment_provider: Literal["sandbox"] = "sandbox"
    # Failed messages are held back on this queue (the one the worker reads), longer each receive.
    payment_queue_url: Annotated[str, Field(min_length=1)]
    # The first hold-back of a failed message (PaymentRetrySeconds), doubling each receive.
    payment_retry_seconds: Annotated[int, Field(ge=1, le=900)] = 30


class OrderEmailSettings(Settings):
    commerce_table_name: Annotated[str, Field(min_length=3)]
    # The queue the worker reads, where it holds back the emails SES did not take.
    email_queue_url: Annotated[str, Field(min_length=1)]
    # The From address: an SES verified identity (the address, or its domain).
    email_sender: Annotated[str, Field(min_length=3)]
    # How long a claim on an event's email holds before another delivery may take it over: longer than
    # the worker's Timeout (30 s), so a live claim is never taken from a worker still running.
    email_claim_seconds: Annotated[int, Field(ge=31)] = 90


# -- archive (ECOM-011) and inventory snapshots ------------------------------------------------------


class OrderArchiverSettings(Settings):
    commerce_table_name: Annotated[str, Field(min_length=3)]
    archive_bucket_name: Annotated[str, Field(min_length=3)]
    # Orders placed longer ago than this leave the table (and GET /orders/{id}) for the bucket.
    archive_after_days: Annotated[int, Field(ge=1)] = 90
    # A run's bound: it stops taking old orders after this many (the next run goes on).
    archive_max_orders_per_run: Annotated[int, Field(ge=1)] = 5000
    # Orders per batch, so per object: at most 100 (the manifest names each order, and a run that dies
    # rewrites at most one batch's object). Fewer make smaller objects; the tests use it to reach a
    # run's later batches quickly.
    archive_batch_orders: Annotated[int, Field(ge=1, le=100)] = 100
    # No batch is begun with less time left than this: a batch of 100 orders takes seconds, and one
    # cut by the timeout is finished by the next run anyway, but a clean stop keeps the alarm quiet.
    archive_stop_margin_seconds: Annotated[int, Field(ge=0)] = 60


class InventorySnapshotSettings(Settings):
    commerce_table_name: Annotated[str, Field(min_length=3)]
    # Snapshot items expire (TTL) after this many days.
    snapshot_retention_days: Annotated[int, Field(ge=1)] = 90
    # A day's snapshots share one partition (~1,000 writes/s at most): the job stays well below it.
    snapshot_writes_per_second: Annotated[float, Field(gt=0, le=1000)] = 500


class StockRebalancerSettings(Settings):
    commerce_table_name: Annotated[str, Field(min_length=3)]
    # A bucket below this many units is low; the event source mapping's filter lists the levels under
    # it (template.yaml), so only records of low buckets invoke the function.
    rebalance_low_water: Annotated[int, Field(ge=1)] = 5
    # Moves per product per batch: each is a transaction on two buckets that orders are using.
    rebalance_max_moves: Annotated[int, Field(ge=1, le=64)] = 8


class OrderExpirySettings(Settings):
    commerce_table_name: Annotated[str, Field(min_length=3)]
    # An order not paid this long after its placement is expired (template parameter PaymentWindowMinutes).
    payment_window_minutes: Annotated[int, Field(ge=1, le=10080)] = 30
    # A sweep's bound: it stops after this many orders (the next sweep, a minute later, goes on).
    expiry_max_orders_per_run: Annotated[int, Field(ge=1)] = 5000
    # No chunk of 100 orders is begun with less time left than this.
    expiry_stop_margin_seconds: Annotated[int, Field(ge=0)] = 10
    # Orders expired at once (each is a read and a transaction, waiting on the network).
    expiry_workers: Annotated[int, Field(ge=1, le=32)] = 8
