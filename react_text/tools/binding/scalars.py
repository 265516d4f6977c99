"""Values binding converts one at a time: text, numbers, booleans, null, unions, closed sets (`Literal`,
`Enum`) and the classes built from their text (dates, times, Decimal, UUID, paths, str subclasses),
beside what every converter shares: `Type` (what binding knows about one annotation), `Unfit` (the
refusal a converter raises, saying what the annotation takes) and `literal` (a value as the model
would write it). Which converter an annotation gets is `converting`'s."""

from __future__ import annotations

import datetime
import decimal
import enum
import json
import math
import pathlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from react_text.tools.binding.reading import Written

__all__ = [
    "BOOL_WORDS",
    "FROM_TEXT",
    "Type",
    "Unfit",
    "enum_type",
    "from_text",
    "literal",
    "literal_type",
    "plain",
    "text_of",
    "to_bool",
    "to_float",
    "to_int",
    "to_none",
    "to_text",
    "union",
]

_TRUE = frozenset({"true", "yes", "1"})
_FALSE = frozenset({"false", "no", "0"})
_NULL = frozenset({"", "none", "null"})
BOOL_WORDS = "true or false (also yes/no, 1/0)"
# Classes built from their text: (class, how, wants, shown). datetime before date, its base class.
FROM_TEXT: tuple[tuple[type, Callable[[str], object], str, str], ...] = (
    (datetime.datetime, lambda t: datetime.datetime.fromisoformat(t.strip()), "a date and time (ISO 8601)", "datetime"),
    (datetime.date, lambda t: datetime.date.fromisoformat(t.strip()), "a date (YYYY-MM-DD)", "date"),
    (datetime.time, lambda t: datetime.time.fromisoformat(t.strip()), "a time (HH:MM[:SS])", "time"),
    (decimal.Decimal, lambda t: decimal.Decimal(t.strip()), "a number", "decimal"),
    (uuid.UUID, lambda t: uuid.UUID(t.strip()), "a UUID", "uuid"),
)


class Unfit(Exception):
    """A value an annotation refuses; `wants` says what it takes ("a whole number")."""

    def __init__(self, wants: str) -> None:
        super().__init__(wants)
        self.wants = wants


_Convert = Callable[[object], object]


@dataclass(frozen=True, slots=True)
class Type:
    """What binding knows about one annotation."""

    convert: _Convert  # raises Unfit
    wants: str  # for a refusal: "a whole number"
    shown: str  # for the listing: "int"; "" for text
    text: bool = False  # takes text as written (str, unannotated)
    sequence: bool = False  # list, tuple, set
    mapping: bool = False  # a JSON object may be its value (dict, Any, typed dicts, classes)


def plain(value: object) -> object:
    """A Written literal's value; anything else as it is."""
    return value.value if isinstance(value, Written) else value


# --- text, numbers, booleans ------------------------------------------------------------------------


def to_text(value: object) -> str:
    if isinstance(value, Written):
        if value.value is None:
            raise Unfit("text")
        return value.value if isinstance(value.value, str) else value.source
    if isinstance(value, str):
        return value
    if value is None:
        raise Unfit("text")
    if isinstance(value, bool | int | float | list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def to_none(value: object) -> None:
    value = plain(value)
    if value is None or (isinstance(value, str) and value.strip().casefold() in _NULL):
        return None
    raise Unfit("null")


def to_bool(value: object) -> bool:
    value = plain(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().casefold()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    raise Unfit(BOOL_WORDS)


def to_int(value: object) -> int:
    value = plain(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:  # also a string of more digits than int() takes
            try:
                value = float(value.strip())
            except ValueError:
                raise Unfit("a whole number") from None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise Unfit("a whole number")


def to_float(value: object) -> float:
    value = plain(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise Unfit("a number") from None
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise Unfit("a number")


def text_of(value: object) -> str | None:
    """The text a value was written as, for a class built from text; None for an object or array."""
    if isinstance(value, Written):
        return value.value if isinstance(value.value, str) else value.source
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def from_text(cls: type, build: Callable[[str], object], wants: str, shown: str, *, text: bool = False) -> Type:
    def convert(value: object) -> object:
        if isinstance(plain(value), cls):
            return plain(value)
        written = text_of(value)
        if written is None:
            raise Unfit(wants)
        try:
            return build(written)
        except (ValueError, TypeError, ArithmeticError):  # what the constructors raise for bad text
            raise Unfit(wants) from None

    return Type(convert, wants, shown, text=text)


# --- unions, closed sets -----------------------------------------------------------------------------


def union(members: list[Type]) -> Type:
    def convert(value: object) -> object:
        for member in members:
            try:
                return member.convert(value)
            except Unfit:
                continue
        raise Unfit(wants)

    wants = " or ".join(m.wants for m in members)
    shown = " | ".join(m.shown or "str" for m in members)
    return Type(
        convert,
        wants,
        shown,
        text=any(m.text for m in members),
        sequence=any(m.sequence for m in members),
        mapping=any(m.mapping for m in members),
    )


def literal_type(values: tuple[object, ...]) -> Type:
    return _choice([(v, v, [v if isinstance(v, str) else literal(v)]) for v in values], [literal(v) for v in values])


def enum_type(cls: type[enum.Enum]) -> Type:
    members = list(cls)
    by_value = all(isinstance(m.value, str) for m in members)
    forms = [(m, m.value, [m.value if isinstance(m.value, str) else literal(m.value), m.name]) for m in members]
    return _choice(forms, [literal(m.value) if by_value else m.name for m in members])


def _choice(options: Sequence[tuple[object, object, list[str]]], names: list[str]) -> Type:
    """A closed set (Literal values, Enum members): an option, its raw value, or a written form of it
    (exactly, then ignoring case). `options` holds (option, raw value, written forms)."""
    wants = "one of " + ", ".join(names)
    exact: dict[str, object] = {}
    folded: dict[str, object] = {}
    for option, _, written in options:
        for form in written:
            exact.setdefault(form, option)
            folded.setdefault(form.casefold(), option)

    def convert(value: object) -> object:
        value = plain(value)
        for option, raw in ((o, r) for o, r, _ in options):
            if option is value or (type(raw) is type(value) and raw == value):
                return option
        if isinstance(value, str):
            word = value.strip()
            if word in exact:
                return exact[word]
            if word.casefold() in folded:
                return folded[word.casefold()]
        raise Unfit(wants)

    return Type(convert, wants, " | ".join(names))


# --- words ---------------------------------------------------------------------------------------------


def literal(value: object) -> str:
    """A value as the model would write it: JSON where JSON has a form for it."""
    if isinstance(value, enum.Enum):
        return literal(value.value) if isinstance(value.value, str) else value.name
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, pathlib.PurePath):
        return json.dumps(str(value), ensure_ascii=False)
    if value is None or isinstance(value, str | int | float | bool):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, tuple):
        value = list(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return _shown(value)


def _shown(value: object) -> str:
    """A value JSON has no form for, as Python shows it, but never with its memory address: the
    tool listing would change from one process to the next (and a server's prompt cache miss)."""
    if callable(value) and hasattr(value, "__qualname__"):  # a function, a method, a class
        return f"<{'class' if isinstance(value, type) else 'function'} {value.__qualname__}>"
    if type(value).__repr__ is object.__repr__:
        return f"<{type(value).__qualname__} object>"
    return repr(value)
