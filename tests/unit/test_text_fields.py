"""Text people write is text: no control characters (a line break and a tab only where several lines are
meant), no bidirectional overrides, and at least one visible character. Each refusal names its field."""

import random
import re
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from shopfeed.accounts.schemas import RegisterUser, UpdateProfile
from shopfeed.commerce.reviews.schemas import WriteReview
from shopfeed.commerce.schemas import CreateProduct, UpdateProduct
from shopfeed.feed.schemas import CreateComment, CreatePost
from shopfeed.platform import types
from shopfeed.platform.types import MULTI_LINE, SINGLE_LINE

PRODUCT = {"product_id": "P-MUG", "category": "mugs", "price": {"amount": 1200, "currency": "EUR"}}
# (model, the other fields it needs, the field under test, whether it is several lines)
FIELDS: list[tuple[type[BaseModel], dict[str, Any], str, bool]] = [
    (CreatePost, {}, "text", True),
    (CreateComment, {}, "text", True),
    (WriteReview, {"rating": 5}, "title", False),
    (WriteReview, {"rating": 5, "title": "Soft"}, "text", True),
    (RegisterUser, {}, "name", False),
    (RegisterUser, {"name": "Ada"}, "display_name", False),
    (RegisterUser, {"name": "Ada"}, "bio", True),
    (UpdateProfile, {}, "name", False),
    (UpdateProfile, {}, "display_name", False),
    (UpdateProfile, {}, "bio", True),
    (CreateProduct, PRODUCT, "name", False),
    (CreateProduct, PRODUCT | {"name": "Mug"}, "description", True),
    (UpdateProduct, {}, "name", False),
    (UpdateProduct, {}, "description", True),
]
REFUSED = {
    "nul": "tea\x00pot",
    "bell": "tea\x07pot",
    "escape": "tea\x1b[31mpot",
    "c1 control": "tea\x85pot",
    "right-to-left override": "invoice\u202egpj.exe",
    "left-to-right embedding": "tea\u202apot",
    "first strong isolate": "tea\u2068pot",
    "zero-width space only": "\u200b\u200b",
    "word joiner only": "\u2060",
}


@pytest.mark.parametrize(
    ("model", "others", "field", "multi_line"), FIELDS, ids=[f"{m.__name__}.{f}" for m, _, f, _ in FIELDS]
)
@pytest.mark.parametrize("text", REFUSED.values(), ids=REFUSED.keys())
def test_text_that_is_not_text_is_refused_naming_its_field(
    model: type[BaseModel], others: dict[str, Any], field: str, multi_line: bool, text: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        model.model_validate(others | {field: text})
    assert [error["loc"] for error in refused.value.errors()] == [(field,)]


@pytest.mark.parametrize(
    ("model", "others", "field", "multi_line"), FIELDS, ids=[f"{m.__name__}.{f}" for m, _, f, _ in FIELDS]
)
def test_lines_and_tabs_are_kept_where_several_lines_are_meant_and_emoji_joiners_everywhere(
    model: type[BaseModel], others: dict[str, Any], field: str, multi_line: bool
) -> None:
    # given
    lines = "first line\n\tsecond line"
    family = "family: \U0001f468\u200d\U0001f469\u200d\U0001f467"  # joined by zero-width joiners
    # when / then
    assert getattr(model.model_validate(others | {field: family}), field) == family
    if multi_line:
        assert getattr(model.model_validate(others | {field: lines}), field) == lines
    else:
        with pytest.raises(ValidationError):
            model.model_validate(others | {field: lines})


@pytest.mark.parametrize("rule", [SINGLE_LINE, MULTI_LINE], ids=["single line", "multi line"])
def test_the_documented_pattern_accepts_exactly_what_the_rule_accepts(rule: Any) -> None:
    # given texts over controls, spaces, zero-width and bidirectional characters and plain letters
    alphabet = [chr(c) for c in [*range(0x00, 0x250), *range(0x2000, 0x2070), 0xFEFF, 0x1F600]]
    generator = random.Random(7)
    texts = ["".join(generator.choice(alphabet) for _ in range(generator.randint(0, 6))) for _ in range(5_000)]
    # then the OpenAPI pattern and the validator agree on every one
    pattern = re.compile(rule.pattern())
    disagreeing = [text for text in texts if _accepted(rule, text) != bool(pattern.fullmatch(text))]
    assert disagreeing == []


def _accepted(rule: Any, text: str) -> bool:
    try:
        rule.check(text)
    except ValueError:
        return False
    return True


def test_every_white_space_character_counts_as_invisible() -> None:
    # The list in platform.types is written out (finding it at import costs 12 ms): it must stay complete.
    white_space = {chr(c) for c in range(0x110000) if chr(c).isspace()}
    assert white_space <= types._INVISIBLE
