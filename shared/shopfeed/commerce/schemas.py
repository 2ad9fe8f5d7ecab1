"""HTTP request and response models of the commerce API (the OpenAPI document is generated from them)."""

from typing import Annotated

from pydantic import Field, Strict, StringConstraints

from shopfeed.commerce.models import (
    MAX_ORDER_LINES,
    InventoryLevel,
    Order,
    OrderLine,
    OrderStatus,
    OrderSummary,
    Product,
    ProductSummary,
    Restocked,
)
from shopfeed.commerce.types import ProductId, Quantity, StockLevel
from shopfeed.platform.models import Request, View
from shopfeed.platform.search import SearchHit
from shopfeed.platform.types import JSON_INTEGER, Money

MAX_RESTOCK = 1_000_000
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
Text = Annotated[str, StringConstraints(max_length=4000)]
Category = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9\-]*$")]


class CreateProduct(Request):
    product_id: ProductId
    name: Name
    description: Text = ""
    category: Category
    price: Money
    available: StockLevel = 0


class UpdateProduct(Request):
    name: Name | None = None
    description: Text | None = None
    category: Category | None = None
    price: Money | None = None


class Restock(Request):
    quantity: Annotated[int, Strict(), Field(ge=1, le=MAX_RESTOCK), JSON_INTEGER]


class OrderLineRequest(Request):
    product_id: ProductId
    quantity: Quantity
    unit_price: Annotated[Money, Field(description="The price the customer was shown; the order fails if it changed.")]


class PlaceOrder(Request):
    lines: Annotated[list[OrderLineRequest], Field(min_length=1, max_length=MAX_ORDER_LINES)]


class ProductView(View):
    product_id: str
    name: str
    description: str
    category: str
    price: Money
    available: int
    updated_at: str

    @classmethod
    def of(cls, product: Product) -> "ProductView":
        return cls.model_validate(product.model_dump(include=set(cls.model_fields)))


class ProductPage(View):
    items: list[ProductSummary]
    next_cursor: str | None


class ProductHit(View):
    """A search result: what a result row shows. Stock is not indexed: GET /products/{id} has it."""

    product_id: str
    name: str
    description: str
    category: str
    price: Money
    score: float

    @classmethod
    def of(cls, hit: SearchHit) -> "ProductHit":
        return cls.model_validate({**hit.body, "score": hit.score})


class ProductSearchPage(View):
    items: list[ProductHit]
    next_cursor: str | None


class RestockView(View):
    product_id: str
    quantity_added: int
    restocked_at: str

    @classmethod
    def of(cls, restocked: Restocked) -> "RestockView":
        return cls.model_validate(restocked.model_dump())


class OrderLineView(View):
    line_no: int
    product_id: str
    quantity: int
    unit_price: Money
    line_total: Money

    @classmethod
    def of(cls, line: OrderLine) -> "OrderLineView":
        return cls(**line.model_dump(), line_total=line.line_total)


class OrderView(View):
    order_id: str
    user_id: str
    status: OrderStatus
    placed_at: str
    updated_at: str
    total: Money
    lines: list[OrderLineView]

    @classmethod
    def of(cls, order: Order) -> "OrderView":
        return cls(
            **order.model_dump(include={"order_id", "user_id", "status", "placed_at", "updated_at", "total"}),
            lines=[OrderLineView.of(line) for line in order.lines],
        )


class OrderLinePage(View):
    items: list[OrderLineView]
    next_cursor: str | None


class OrderPage(View):
    items: list[OrderSummary]
    next_cursor: str | None


class SnapshotPage(View):
    """A page of one day's inventory snapshot."""

    date: str
    items: list[InventoryLevel]
    next_cursor: str | None
