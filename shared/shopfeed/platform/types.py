"""Constrained types shared by every model family, declared once."""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    Strict,
    StringConstraints,
    WithJsonSchema,
)
from pydantic_core import core_schema

from shopfeed.platform.currencies import ISO_4217, iso_4217
from shopfeed.platform.identity import MAX_SUBJECT_LENGTH

UserId = Annotated[str, StringConstraints(min_length=1, max_length=MAX_SUBJECT_LENGTH)]  # a token subject

# Text people write and others read. Refused: control characters (NUL and the C0/C1 ranges; a line
# break and a tab only where several lines are meant), the bidirectional embeddings, overrides and
# isolates that can make text read as something else (U+202A-202E, U+2066-2069), and text with no
# visible character (only white space and zero-width characters). Joiners inside emoji stay. The same
# sets make the JSON Schema pattern, so a client (or a fuzzer) sees exactly the rule the service keeps.
_CONTROLS = frozenset(map(chr, [*range(0x00, 0x20), *range(0x7F, 0xA0)]))
_BIDI_CONTROLS = frozenset(map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
# White space (every character str.isspace() accepts, listed: finding them costs 12 ms of import) and
# the zero-width characters.
_WHITE_SPACE = [*range(0x09, 0x0E), *range(0x1C, 0x21), 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B)]
_WHITE_SPACE += [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]
_ZERO_WIDTH = [0x00AD, 0x034F, 0x180E, *range(0x200B, 0x2010), *range(0x2060, 0x2065), 0xFEFF]
_INVISIBLE = frozenset(map(chr, [*_WHITE_SPACE, *_ZERO_WIDTH]))


@dataclass(frozen=True)
class _Text:
    """A text rule on a string type: validated after its constraints, and stated as a pattern."""

    refused: frozenset[str]  # control characters, and the bidirectional ones

    def check(self, value: str) -> str:
        for character in value:
            if character in _BIDI_CONTROLS:
                raise ValueError(f"it holds a bidirectional control character (U+{ord(character):04X})")
            if character in self.refused:
                raise ValueError(f"it holds a control character (U+{ord(character):04X})")
        if value and all(character in _INVISIBLE for character in value):
            raise ValueError("it holds no visible character")
        return value

    def pattern(self) -> str:
        allowed = f"[^{_class(self.refused)}]"
        visible = f"[^{_class(self.refused | _INVISIBLE)}]"
        return f"^({allowed}*{visible}{allowed}*)?$"

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        json_schema: dict[str, Any] = handler(schema)
        json_schema["pattern"] = self.pattern()
        return json_schema


def _class(characters: frozenset[str]) -> str:
    """The characters of a regular-expression class, escaped where a class needs it."""
    return "".join("\\" + c if c in "\\]^-[" else c for c in sorted(characters))


# Add to a request field's type: ``Annotated[PostText, MULTI_LINE]``.
SINGLE_LINE = _Text(_CONTROLS | _BIDI_CONTROLS)
MULTI_LINE = _Text((_CONTROLS - frozenset("\n\t")) | _BIDI_CONTROLS)
EntityId = Annotated[str, StringConstraints(pattern=r"^[0-9A-HJKMNP-TV-Z]{26}$")]  # a ULID


def _integral(value: object) -> object:
    # JSON has one number type: 5.0 is the integer 5 (as JSON Schema's "integer" says), 5.5 is not.
    # Request bodies are parsed with Decimal (platform.request_body), so 499.9999999999999999 arrives
    # as it was written and is refused, never rounded to 500 first.
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else value
    return int(value) if isinstance(value, float) and value.is_integer() else value


# Counts and amounts are Strict() ints read with JSON_INTEGER: never true or "5" (lax mode would store
# them as 1 and 5). The validator comes last so the bounds stay in the JSON schema as minimum/maximum.
JSON_INTEGER = BeforeValidator(_integral)
Version = Annotated[int, Field(ge=1)]
CurrencyCode = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Z]{3}$"),
    AfterValidator(iso_4217),
    WithJsonSchema({"type": "string", "enum": sorted(ISO_4217)}),
]
Email = Annotated[
    str,
    StringConstraints(strip_whitespace=True, to_lower=True, max_length=254, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$"),
]
Month = Annotated[str, StringConstraints(pattern=r"^\d{4}-(0[1-9]|1[0-2])$")]


def _calendar_day(value: object) -> object:
    # Pydantic's lax date also takes numbers ("0" is 1970-01-01) and datetimes: a day is YYYY-MM-DD only.
    if not (isinstance(value, str) and len(value) == 10 and value[4] == value[7] == "-"):
        raise ValueError("a day is written YYYY-MM-DD")
    return value


# A calendar day, ISO 8601 (YYYY-MM-DD), and a real one (2026-02-30 is refused).
Day = Annotated[date, BeforeValidator(_calendar_day)]


MAX_AMOUNT = 10**12  # minor units: ten billion in a two-decimal currency


class Money(BaseModel):
    """An amount in integer minor units (cents) plus its ISO 4217 currency."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    amount: Annotated[int, Strict(), Field(ge=0, le=MAX_AMOUNT), JSON_INTEGER]
    currency: CurrencyCode
