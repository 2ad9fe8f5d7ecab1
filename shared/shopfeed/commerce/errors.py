"""Errors of the commerce context, and their problem types (registered with the platform's table)."""

from collections.abc import Sequence
from dataclasses import dataclass
from http import HTTPStatus

from shopfeed.platform import problems
from shopfeed.platform.errors import DomainError


@dataclass(frozen=True)
class StockShortage:
    product_id: str
    requested: int
    available: int


class InsufficientStock(DomainError):
    def __init__(self, shortages: Sequence[StockShortage]) -> None:
        ids = ", ".join(s.product_id for s in shortages)
        super().__init__(f"Not enough stock for {ids}; nothing was ordered.")
        self.shortages = list(shortages)

    def extensions(self) -> dict[str, object]:
        return {
            "products": [
                {"product_id": s.product_id, "requested": s.requested, "available": s.available} for s in self.shortages
            ]
        }


@dataclass(frozen=True)
class PriceChange:
    product_id: str
    quoted: dict[str, object]
    current: dict[str, object]


class PriceChanged(DomainError):
    def __init__(self, changes: Sequence[PriceChange]) -> None:
        ids = ", ".join(c.product_id for c in changes)
        super().__init__(f"The price of {ids} is not the one you quoted; nothing was ordered.")
        self.changes = list(changes)

    def extensions(self) -> dict[str, object]:
        return {
            "products": [
                {"product_id": c.product_id, "quoted_unit_price": c.quoted, "current_unit_price": c.current}
                for c in self.changes
            ]
        }


class StockScattered(DomainError):
    """The stock is there, but spread over more buckets than one order's transaction can take from
    (100 items in all): an order of fewer lines or units passes, or a rebalance gathers it."""

    def __init__(self, product_ids: Sequence[str]) -> None:
        ids = ", ".join(product_ids)
        super().__init__(
            f"The stock of {ids} is spread over more buckets than one order can take from; nothing was ordered."
        )
        self.product_ids = list(product_ids)

    def extensions(self) -> dict[str, object]:
        return {"product_ids": self.product_ids}


class BucketShort(DomainError):
    """A move of stock between buckets found its source bucket short: nothing moved."""

    def __init__(self, product_id: str, warehouse: str, bucket: int, requested: int, available: int) -> None:
        super().__init__(
            f"Bucket {bucket} of product {product_id} in {warehouse} holds {available} units, not {requested}."
        )
        self.product_id, self.warehouse, self.bucket = product_id, warehouse, bucket
        self.requested, self.available = requested, available

    def extensions(self) -> dict[str, object]:
        return {
            "product_id": self.product_id,
            "warehouse": self.warehouse,
            "bucket": self.bucket,
            "requested": self.requested,
            "available": self.available,
        }


# -- reviews ------------------------------------------------------------------------------------


class PurchaseRequired(DomainError):
    """Only a buyer reviews: the caller has no paid order of the product (or every one was cancelled)."""

    def __init__(self, product_id: str) -> None:
        super().__init__(f"Only customers who bought product {product_id} may review it; nothing was written.")
        self.product_id = product_id

    def extensions(self) -> dict[str, object]:
        return {"product_id": self.product_id}


# -----------------------------------------------------------------------------------------------


class UnknownProducts(DomainError):
    def __init__(self, product_ids: Sequence[str]) -> None:
        super().__init__(f"No such product: {', '.join(product_ids)}; nothing was ordered.")
        self.product_ids = list(product_ids)

    def extensions(self) -> dict[str, object]:
        return {"product_ids": self.product_ids}


problems.register(UnknownProducts, HTTPStatus.NOT_FOUND, "unknown-products", "Unknown products")
problems.register(InsufficientStock, HTTPStatus.CONFLICT, "insufficient-stock", "Insufficient stock")
problems.register(PriceChanged, HTTPStatus.CONFLICT, "price-changed", "Price changed")
problems.register(StockScattered, HTTPStatus.CONFLICT, "stock-scattered", "Stock scattered")
problems.register(BucketShort, HTTPStatus.CONFLICT, "bucket-short", "Bucket short")
# 403, not 409: the caller lacks a right (being a buyer), the review does not conflict with anything.
problems.register(PurchaseRequired, HTTPStatus.FORBIDDEN, "purchase-required", "Purchase required")


# -- payments and shipments -----------------------------------------------------------------------


class PaymentInProgress(DomainError):
    """The order has an attempt the provider has not answered yet: one payment at a time, and no
    cancel under it (an approval must never land on a cancelled order)."""

    def __init__(self, order_id: str, attempt_id: str) -> None:
        super().__init__(f"A payment of order {order_id} is in progress; wait for its outcome.")
        self.order_id, self.attempt_id = order_id, attempt_id

    def extensions(self) -> dict[str, object]:
        return {"order_id": self.order_id, "attempt_id": self.attempt_id}


class RefundExceedsCapture(DomainError):
    """A refund would take the payment's refunded total past the amount captured: refused by the
    attempt's condition, nothing written."""

    def __init__(self, order_id: str, attempt_id: str, captured: int, refunded: int) -> None:
        super().__init__(
            f"Payment {attempt_id} of order {order_id} has {captured - refunded} minor units left to refund."
        )
        self.order_id, self.attempt_id, self.captured, self.refunded = order_id, attempt_id, captured, refunded

    def extensions(self) -> dict[str, object]:
        return {
            "order_id": self.order_id,
            "attempt_id": self.attempt_id,
            "captured": self.captured,
            "refunded": self.refunded,
        }


class OrderNotPayable(DomainError):
    def __init__(self, order_id: str, status: str) -> None:
        super().__init__(f"Order {order_id} is {status}; only a Placed order can be paid.")
        self.order_id, self.status = order_id, status

    def extensions(self) -> dict[str, object]:
        return {"order_id": self.order_id, "order_status": self.status}


class PaymentAmountMismatch(DomainError):
    """The client quoted another amount than the order's total: nothing is charged."""

    def __init__(self, order_id: str, quoted: dict[str, object], total: dict[str, object]) -> None:
        super().__init__(f"The amount quoted is not the total of order {order_id}; nothing was charged.")
        self.order_id, self.quoted, self.total = order_id, quoted, total

    def extensions(self) -> dict[str, object]:
        return {"order_id": self.order_id, "quoted_amount": self.quoted, "order_total": self.total}


class OrderNotShippable(DomainError):
    def __init__(self, order_id: str, status: str) -> None:
        super().__init__(f"Order {order_id} is {status}; only a paid order is shipped.")
        self.order_id, self.status = order_id, status

    def extensions(self) -> dict[str, object]:
        return {"order_id": self.order_id, "order_status": self.status}


problems.register(PaymentInProgress, HTTPStatus.CONFLICT, "payment-in-progress", "Payment in progress")
problems.register(OrderNotPayable, HTTPStatus.CONFLICT, "order-not-payable", "Order not payable")
problems.register(PaymentAmountMismatch, HTTPStatus.CONFLICT, "payment-amount-mismatch", "Payment amount mismatch")
problems.register(OrderNotShippable, HTTPStatus.CONFLICT, "order-not-shippable", "Order not shippable")


# -- the cart ---------------------------------------------------------------------------------------


class EmptyCart(DomainError):
    def __init__(self) -> None:
        super().__init__("Your cart is empty; there is nothing to check out.")


class CartFull(DomainError):
    """A cart holds at most ``max_lines`` products: its checkout must fit one transaction."""

    def __init__(self, max_lines: int) -> None:
        super().__init__(f"A cart holds at most {max_lines} products; remove one before adding another.")
        self.max_lines = max_lines

    def extensions(self) -> dict[str, object]:
        return {"max_lines": self.max_lines}


problems.register(EmptyCart, HTTPStatus.CONFLICT, "cart-empty", "Cart empty")
problems.register(CartFull, HTTPStatus.CONFLICT, "cart-full", "Cart full")
problems.register(RefundExceedsCapture, HTTPStatus.CONFLICT, "refund-exceeds-capture", "Refund exceeds capture")


class OrderChanged(Exception):
    """The order moved between the read and the transaction (another shipment's update): read again.
    Not a DomainError (the shipment service retries it); here so that the service need not import the
    repository (decision 214)."""

    def __init__(self, order_id: str) -> None:
        super().__init__(f"order {order_id} changed while one of its shipments was updated")
        self.order_id = order_id
