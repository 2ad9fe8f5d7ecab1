"""HTTP request and response models of the review routes (the OpenAPI document is generated from them)."""

from typing import Annotated

from pydantic import Field, StringConstraints

from shopfeed.commerce.types import Rating
from shopfeed.platform.models import Request, View
from shopfeed.platform.types import MULTI_LINE, SINGLE_LINE

# Bounded so a review stays a small item: 4,000 characters are at most 16 KB of UTF-8, and the
# three review indexes hold a copy each.
MAX_REVIEW_TEXT = 4000
ReviewTitle = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120)]
ReviewText = Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_REVIEW_TEXT)]


class WriteReview(Request):
    """A review as the author writes it; PUT replaces all three fields (a text left out is cleared)."""

    rating: Annotated[Rating, Field(description="Stars, an integer from 1 to 5")]
    title: Annotated[ReviewTitle, SINGLE_LINE]
    text: Annotated[ReviewText, MULTI_LINE] = ""


class ReviewView(View):
    product_id: str
    user_id: str
    rating: int
    title: str
    text: str
    created_at: str
    updated_at: str


class ReviewPage(View):
    items: list[ReviewView]
    next_cursor: str | None
