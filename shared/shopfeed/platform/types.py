"""Constrained types shared by every model family, declared once."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

UserId = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_\-.:@]+$")]
EntityId = Annotated[str, StringConstraints(pattern=r"^[0-9A-HJKMNP-TV-Z]{26}$")]  # a ULID
Version = Annotated[int, Field(ge=1)]
CurrencyCode = Annotated[str, StringConstraints(pattern=r"^[A-Z]{3}$")]
Email = Annotated[
    str,
    StringConstraints(strip_whitespace=True, to_lower=True, max_length=254, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$"),
]
Month = Annotated[str, StringConstraints(pattern=r"^\d{4}-(0[1-9]|1[0-2])$")]


MAX_AMOUNT = 10**12  # minor units: ten billion in a two-decimal currency


class Money(BaseModel):
    """An amount in integer minor units (cents) plus its ISO 4217 currency."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    amount: Annotated[int, Field(ge=0, le=MAX_AMOUNT)]
    currency: CurrencyCode
