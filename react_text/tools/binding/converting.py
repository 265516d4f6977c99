"""Converting a value read from the text by a parameter's annotation: `type_of(annotation).convert(value)`.

A converter takes text, a `Written` literal or a decoded JSON value, and returns the value the
function gets, or raises `Unfit` saying what the annotation takes ("a whole number"). By
annotation:

- str and unannotated: text (a number or boolean gives its text as written, an object or array
  its JSON; null is refused); int, float; bool (true/false, yes/no, 1/0, any case).
- `X | None` (also from "", "none", "null" when X refuses them); unions in their declared order;
  `Literal[...]` and `Enum` (by value or name: exactly, then ignoring case).
- list, tuple, set, frozenset and their `collections.abc` kin, from a JSON array (or from
  comma-separated text); dict and `Mapping`, from a JSON object; elements converted where typed.
- `TypedDict`, dataclasses, `NamedTuple` and pydantic models: built from a JSON object (a
  NamedTuple also from an array), each field converted by its annotation; a missing required field,
  an unknown one or a value the class's own checks refuse is refused, saying which fields it takes.
- datetime, date and time from ISO 8601 text; Decimal, UUID, Path and str subclasses from text.
- `Any` and `object`: the value as written or decoded. Any other class is called with the text
  (or with a JSON object's members as keywords), as argparse's `type=` does, and refused when it
  raises. An annotation that is no class (`Callable`, ...) refuses every value: nothing is ever
  passed through unconverted.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime
import decimal
import enum
import inspect
import json
import math
import pathlib
import re
import types
import typing
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from react_text.tools.binding.reading import Written, fields, structured

__all__ = ["Type", "Unfit", "literal", "nullable", "plain", "type_of"]

_TRUE = frozenset({"true", "yes", "1"})
_FALSE = frozenset({"false", "no", "0"})
_NULL = frozenset({"", "none", "null"})
_BOOL_WORDS = "true or false (also yes/no, 1/0)"
_SEQUENCES = {
    list: list,
    tuple: tuple,
    set: set,
    frozenset: frozenset,
    collections.abc.Sequence: list,
    collections.abc.MutableSequence: list,
    collections.abc.Iterable: list,
    collections.abc.Collection: list,
    collections.abc.Set: set,
    collections.abc.MutableSet: set,
}
_MAPPINGS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)
# Classes built from their text: (class, how, wants, shown). datetime before date, its base class.
_FROM_TEXT: tuple[tuple[type, Callable[[str], object], str, str], ...] = (
    (datetime.datetime, lambda t: datetime.datetime.fromisoformat(t.strip()), "a date and time (ISO 8601)", "datetime"),
    (datetime.date, lambda t: datetime.date.fromisoformat(t.strip()), "a date (YYYY-MM-DD)", "date"),
    (datetime.time, lambda t: datetime.time.fromisoformat(t.strip()), "a time (HH:MM[:SS])", "time"),
    (decimal.Decimal, lambda t: decimal.Decimal(t.strip()), "a number", "decimal"),
    (uuid.UUID, lambda t: uuid.UUID(t.strip()), "a UUID", "uuid"),
)
_DOTTED = re.compile(r"[\w.]++")  # a dotted name (or a number), whole


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


def type_of(annotation: object) -> Type:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_of(args[0])
    if annotation is inspect.Parameter.empty or annotation is str:
        return Type(_to_text, "text", "", text=True)
    if annotation is typing.Any or annotation is object:
        return Type(plain, "any value", "any", mapping=True)
    if annotation is None or annotation is type(None):
        return Type(_to_none, "null", "null")
    if origin in (typing.Union, types.UnionType):
        return _union([type_of(a) for a in args])
    if origin is typing.Literal:
        return _literal_type(args)
    if isinstance(annotation, typing.TypeVar):
        return type_of(annotation.__bound__) if annotation.__bound__ is not None else type_of(typing.Any)
    supertype = getattr(annotation, "__supertype__", None)  # typing.NewType
    if supertype is not None:
        return type_of(supertype)
    base = origin or annotation
    if isinstance(base, type) and base in _SEQUENCES:
        return _sequence_type(_SEQUENCES[base], args)
    if isinstance(base, type) and base in _MAPPINGS:
        return _dict_type(args)
    if typing.is_typeddict(annotation):
        return _typed_dict(typing.cast(type, annotation))
    if isinstance(base, type) and base is not type:  # a class, or a generic alias of one
        return _class_type(base)
    return _unbuildable(annotation)


def _class_type(cls: type) -> Type:
    if issubclass(cls, enum.Enum):
        return _enum_type(cls)
    simple = {bool: (_to_bool, _BOOL_WORDS, "bool"), int: (_to_int, "a whole number", "int")}
    if cls in simple:
        convert, wants, shown = simple[cls]
        return Type(convert, wants, shown)
    if cls is float:
        return Type(_to_float, "a number", "float")
    if dataclasses.is_dataclass(cls):
        return _dataclass_type(cls)
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return _named_tuple(cls)
    if callable(getattr(cls, "model_validate", None)) and hasattr(cls, "model_fields"):
        return _pydantic(cls)
    for kind, build, wants, shown in _FROM_TEXT:
        if issubclass(cls, kind):
            return _from_text(cls, build, wants, shown)
    if issubclass(cls, pathlib.PurePath):
        return _from_text(cls, cls, "a path", "", text=True)
    if issubclass(cls, str):
        return _from_text(cls, cls, "text", cls.__name__, text=True)
    return _called(cls)


# --- text, numbers, booleans ------------------------------------------------------------------------


def _to_text(value: object) -> str:
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


def _to_none(value: object) -> None:
    value = plain(value)
    if value is None or (isinstance(value, str) and value.strip().casefold() in _NULL):
        return None
    raise Unfit("null")


def _to_bool(value: object) -> bool:
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
    raise Unfit(_BOOL_WORDS)


def _to_int(value: object) -> int:
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


def _to_float(value: object) -> float:
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


def _text_of(value: object) -> str | None:
    """The text a value was written as, for a class built from text; None for an object or array."""
    if isinstance(value, Written):
        return value.value if isinstance(value.value, str) else value.source
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def _from_text(cls: type, build: Callable[[str], object], wants: str, shown: str, *, text: bool = False) -> Type:
    def convert(value: object) -> object:
        if isinstance(plain(value), cls):
            return plain(value)
        written = _text_of(value)
        if written is None:
            raise Unfit(wants)
        try:
            return build(written)
        except (ValueError, TypeError, ArithmeticError):  # what the constructors raise for bad text
            raise Unfit(wants) from None

    return Type(convert, wants, shown, text=text)


# --- unions, closed sets -----------------------------------------------------------------------------


def _union(members: list[Type]) -> Type:
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


def nullable(t: Type) -> Type:
    """`t`, also taking null (for a parameter whose default is None); shown as `t` is."""
    try:
        t.convert(None)
    except Unfit:
        return dataclasses.replace(_union([t, type_of(None)]), shown=t.shown, wants=t.wants + " or null")
    return t


def _literal_type(values: tuple[object, ...]) -> Type:
    return _choice([(v, v, [v if isinstance(v, str) else literal(v)]) for v in values], [literal(v) for v in values])


def _enum_type(cls: type[enum.Enum]) -> Type:
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


# --- containers ----------------------------------------------------------------------------------------


def _items_of(value: object) -> object:
    """A list from a JSON array, or from comma-separated text (`[a, b]` and `a, b` alike)."""
    value = plain(value)
    if not isinstance(value, str):
        return value
    decoded = structured(value)
    if isinstance(decoded, list):
        return decoded
    inner = value.strip()
    if inner[:1] == "[" and inner[-1:] == "]":
        inner = inner[1:-1]
    return [f.value for f in fields(inner)] if inner.strip() else []


def _sequence_type(container: type, args: tuple[object, ...]) -> Type:
    fixed = container is tuple and bool(args) and args[-1] is not Ellipsis
    members = [type_of(a) for a in (args if fixed else args[:1])]
    element = members[0] if members and not fixed else None
    inner = ", ".join(m.shown or "str" for m in members)
    shown = f"list[{inner}]" if inner else "list"
    wants = f"a JSON array of {inner}" if inner else "a JSON array"
    build = typing.cast("Callable[[list[object]], object]", container)

    def convert(value: object) -> object:
        value = _items_of(value)
        if not isinstance(value, list | tuple | set | frozenset):
            raise Unfit(wants)
        items = list(value)
        if fixed:
            if len(items) != len(members):
                raise Unfit(wants)
            try:
                return build([m.convert(v) for m, v in zip(members, items, strict=True)])
            except Unfit:
                raise Unfit(wants) from None
        if element is not None:
            try:
                items = [element.convert(v) for v in items]
            except Unfit:
                raise Unfit(wants) from None
        try:
            return build(items)
        except TypeError:  # an unhashable element of a set
            raise Unfit(wants) from None

    return Type(convert, wants, shown, sequence=True)


def _object_of(value: object) -> dict[object, object] | None:
    value = plain(value)
    if isinstance(value, str):
        value = structured(value)
    return value if isinstance(value, dict) else None


def _dict_type(args: tuple[object, ...]) -> Type:
    key, item = (type_of(args[0]), type_of(args[1])) if len(args) == 2 else (None, None)
    shown = f"dict[{key.shown or 'str'}, {item.shown or 'str'}]" if key and item else "dict"
    wants = f"a JSON object with {item.shown or 'text'} values" if item else "a JSON object"

    def convert(value: object) -> object:
        found = _object_of(value)
        if found is None:
            raise Unfit(wants)
        if key is None or item is None:
            return found
        try:
            return {key.convert(k): item.convert(v) for k, v in found.items()}
        except (Unfit, TypeError):  # TypeError: a key converted to something unhashable
            raise Unfit(wants) from None

    return Type(convert, wants, shown, mapping=True)


# --- records: typed dicts, dataclasses, named tuples, pydantic models -----------------------------------


def _hints(cls: type) -> dict[str, object]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:  # resolving the user's annotations may raise anything: say which
        raise TypeError(f"cannot resolve the annotations of {cls!r}") from exc


@dataclass(frozen=True, slots=True)
class _Fields:
    """The fields of a record class; each field's Type is made when first needed (a record may hold itself)."""

    hints: dict[str, object]
    required: frozenset[str]
    made: dict[str, Type] = dataclasses.field(default_factory=dict)

    def wants(self) -> str:
        shown = (f"{json.dumps(n)}{'' if n in self.required else '?'}: {_name_of(h)}" for n, h in self.hints.items())
        return "a JSON object {" + ", ".join(shown) + "}"

    def convert(self, found: dict[object, object]) -> dict[str, object]:
        if set(found) - set(self.hints) or self.required - set(found):
            raise Unfit(self.wants())
        converted: dict[str, object] = {}
        for key, value in found.items():
            name = str(key)
            if name not in self.made:
                self.made[name] = type_of(self.hints[name])
            converted[name] = self.made[name].convert(value)
        return converted


def _name_of(hint: object) -> str:
    """An annotation in a few characters, without looking inside it: `int`, `list[Point]`, `str | None`."""
    if hint is typing.Any:
        return "any"
    if isinstance(hint, type) and not typing.get_args(hint):
        return hint.__name__
    return _DOTTED.sub(lambda m: m.group() if m.group()[0].isdigit() else m.group().rsplit(".", 1)[-1], str(hint))


def _record(cls: type, spec: _Fields, build: Callable[[dict[str, object]], object], array: bool = False) -> Type:
    wants = spec.wants() + (" (or an array in that order)" if array else "")

    def convert(value: object) -> object:
        if not typing.is_typeddict(cls) and isinstance(plain(value), cls):
            return plain(value)
        found = _object_of(value)
        if found is None and array and isinstance(items := _items_of(value), list) and len(items) <= len(spec.hints):
            found = dict(zip(spec.hints, items, strict=False))
        if found is None:
            raise Unfit(wants)
        try:
            return build(spec.convert(found))
        except Unfit:
            raise Unfit(wants) from None
        except Exception:  # noqa: BLE001 - the class's own checks (__post_init__, validators) refused it
            raise Unfit(wants) from None

    return Type(convert, wants, cls.__name__, mapping=True)


def _typed_dict(cls: type) -> Type:
    spec = _Fields(_hints(cls), frozenset(getattr(cls, "__required_keys__", ())))
    return _record(cls, spec, dict)


def _dataclass_type(cls: type) -> Type:
    hints = _hints(cls)
    made = [f for f in dataclasses.fields(cls) if f.init]
    missing = dataclasses.MISSING
    required = frozenset(f.name for f in made if f.default is missing and f.default_factory is missing)
    spec = _Fields({f.name: hints.get(f.name, typing.Any) for f in made}, required)
    return _record(cls, spec, lambda values: cls(**values))


def _named_tuple(cls: type) -> Type:
    hints = _hints(cls)
    names: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
    defaults: dict[str, object] = getattr(cls, "_field_defaults", {})
    spec = _Fields({n: hints.get(n, typing.Any) for n in names}, frozenset(n for n in names if n not in defaults))
    return _record(cls, spec, lambda values: cls(**values), array=True)


def _pydantic(cls: type) -> Type:
    wants = f"a JSON object (a {cls.__name__})"
    validate: Callable[[object], object] = cls.model_validate  # type: ignore[attr-defined]

    def convert(value: object) -> object:
        found = _object_of(value)
        if found is None:
            raise Unfit(wants)
        try:
            return validate(found)
        except Exception:  # noqa: BLE001 - the model's validation refused it (pydantic's ValidationError)
            raise Unfit(wants) from None

    return Type(convert, wants, cls.__name__, mapping=True)


# --- anything else -----------------------------------------------------------------------------------


def _called(cls: type) -> Type:
    """A class binding does not know: called with the text, or a JSON object's members as keywords."""
    name = cls.__name__
    wants = f"{'an' if name[:1].casefold() in 'aeiou' else 'a'} {name}"

    def convert(value: object) -> object:
        if isinstance(plain(value), cls):
            return plain(value)
        found = _object_of(value)
        try:
            if found is not None:
                return cls(**{str(k): v for k, v in found.items()})
            written = _text_of(value)
            if written is None:
                raise Unfit(wants)
            return cls(written)
        except Unfit:
            raise
        except Exception:  # noqa: BLE001 - the user's class refused the value, in its own way
            raise Unfit(wants) from None

    return Type(convert, wants, name, mapping=True)


def _unbuildable(annotation: object) -> Type:
    shown = str(annotation).replace("typing.", "")

    def convert(value: object) -> object:
        raise Unfit(f"a {shown}, which cannot be written as text")

    return Type(convert, f"a {shown}, which cannot be written as text", shown)


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
