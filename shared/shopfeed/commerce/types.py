"""Constrained types of the commerce context, declared once (the shared ones are in platform.types)."""

from typing import Annotated

from pydantic import Field, StringConstraints

ProductId = Annotated[str, StringConstraints(min_length=2, max_length=64, pattern=r"^[A-Z0-9][A-Z0-9\-_]*$")]
Quantity = Annotated[int, Field(ge=1, le=1000)]
StockLevel = Annotated[int, Field(ge=0)]
