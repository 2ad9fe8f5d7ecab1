"""Bases of the three model families every context declares (domain, API request, API view), and
the page of a list."""

from typing import Self

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    """A domain model: immutable, no unknown fields."""

    # defer_build: a model's validator is built on its first use, not at import; a cold start pays
    # only for the models its first request touches (design §1's import budget).
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Request(BaseModel):
    """An API request body: unknown fields are refused (a typo must not pass silently)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class View(BaseModel):
    """An API response body."""

    model_config = ConfigDict(defer_build=True)

    @classmethod
    def fields_of(cls, model: BaseModel) -> Self:
        """The view of ``model``'s fields that the view has by the same names (a view that shapes its
        fields itself has an ``of`` of its own)."""
        return cls.model_validate(model.model_dump(include=set(cls.model_fields)))


class Page[T](BaseModel):
    """One page of a list and the cursor of the next (None on the last page)."""

    model_config = ConfigDict(defer_build=True)

    items: list[T]
    next_cursor: str | None = None
