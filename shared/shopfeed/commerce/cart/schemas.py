"""HTTP request and response models of the cart (the OpenAPI document is generated from them)."""

from datetime import UTC, datetime
from typing import Annotated

from pydantic import Field, Strict

from shopfeed.commerce.models import MAX_CART_QUANTITY, Cart, CartLine
from shopfeed.platform.clock import iso
from shopfeed.platform.models import Request, View
from shopfeed.platform.types import JSON_INTEGER, Money

CartQuantity = Annotated[int, Strict(), Field(ge=1, le=MAX_CART_QUANTITY), JSON_INTEGER]


class PutCartLine(Request):
    quantity: Annotated[CartQuantity, Field(description="How many; the line takes the product's price now")]


class CartLineView(View):
    product_id: str
    quantity: int
    unit_price: Annotated[Money, Field(description="The price when the line was last put; checkout orders at it")]
    line_total: Money
    added_at: str
    updated_at: str

    @classmethod
    def of(cls, line: CartLine) -> "CartLineView":
        return cls(**line.model_dump(exclude={"expires_at"}), line_total=line.line_total)


class CartView(View):
    version: Annotated[int, Field(description="The cart's ETag; 0 before its first change")]
    updated_at: str | None
    expires_at: Annotated[str | None, Field(description="When the cart expires unless it changes again")]
    lines: list[CartLineView]
    total: Money | None

    @classmethod
    def of(cls, cart: Cart) -> "CartView":
        lines = [CartLineView.of(line) for line in cart.lines]
        total = None
        if lines:
            total = Money(amount=sum(line.line_total.amount for line in lines), currency=lines[0].unit_price.currency)
        return cls(
            version=cart.version,
            updated_at=cart.updated_at if lines else None,
            expires_at=iso(datetime.fromtimestamp(cart.expires_at, UTC)) if lines and cart.expires_at else None,
            lines=lines,
            total=total,
        )
