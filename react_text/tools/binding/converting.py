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

This module is the dispatch: which converter an annotation gets. The converters are `scalars`'s
(one value) and `compound`'s (containers and records).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import inspect
import pathlib
import types
import typing

from react_text.tools.binding.compound import (
    called,
    dataclass_type,
    dict_type,
    named_tuple,
    pydantic,
    sequence_type,
    typed_dict,
)
from react_text.tools.binding.scalars import (
    BOOL_WORDS,
    FROM_TEXT,
    Type,
    Unfit,
    enum_type,
    from_text,
    literal,
    literal_type,
    plain,
    to_bool,
    to_float,
    to_int,
    to_none,
    to_text,
    union,
)

__all__ = ["Type", "Unfit", "literal", "nullable", "plain", "type_of"]

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


def type_of(annotation: object) -> Type:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return type_of(args[0])
    if annotation is inspect.Parameter.empty or annotation is str:
        return Type(to_text, "text", "", text=True)
    if annotation is typing.Any or annotation is object:
        return Type(plain, "any value", "any", mapping=True)
    if annotation is None or annotation is type(None):
        return Type(to_none, "null", "null")
    if origin in (typing.Union, types.UnionType):
        return union([type_of(a) for a in args])
    if origin is typing.Literal:
        return literal_type(args)
    if isinstance(annotation, typing.TypeVar):
        return type_of(annotation.__bound__) if annotation.__bound__ is not None else type_of(typing.Any)
    supertype = getattr(annotation, "__supertype__", None)  # typing.NewType
    if supertype is not None:
        return type_of(supertype)
    base = origin or annotation
    if isinstance(base, type) and base in _SEQUENCES:
        return sequence_type(_SEQUENCES[base], args, type_of)
    if isinstance(base, type) and base in _MAPPINGS:
        return dict_type(args, type_of)
    if typing.is_typeddict(annotation):
        return typed_dict(typing.cast(type, annotation), type_of)
    if isinstance(base, type) and base is not type:  # a class, or a generic alias of one
        return _class_type(base)
    return _unbuildable(annotation)


def _class_type(cls: type) -> Type:
    if issubclass(cls, enum.Enum):
        return enum_type(cls)
    simple = {bool: (to_bool, BOOL_WORDS, "bool"), int: (to_int, "a whole number", "int")}
    if cls in simple:
        convert, wants, shown = simple[cls]
        return Type(convert, wants, shown)
    if cls is float:
        return Type(to_float, "a number", "float")
    if dataclasses.is_dataclass(cls):
        return dataclass_type(cls, type_of)
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return named_tuple(cls, type_of)
    if callable(getattr(cls, "model_validate", None)) and hasattr(cls, "model_fields"):
        return pydantic(cls)
    for kind, build, wants, shown in FROM_TEXT:
        if issubclass(cls, kind):
            return from_text(cls, build, wants, shown)
    if issubclass(cls, pathlib.PurePath):
        return from_text(cls, cls, "a path", "", text=True)
    if issubclass(cls, str):
        return from_text(cls, cls, "text", cls.__name__, text=True)
    return called(cls)


def nullable(t: Type) -> Type:
    """`t`, also taking null (for a parameter whose default is None); shown as `t` is."""
    try:
        t.convert(None)
    except Unfit:
        return dataclasses.replace(union([t, type_of(None)]), shown=t.shown, wants=t.wants + " or null")
    return t


def _unbuildable(annotation: object) -> Type:
    shown = str(annotation).replace("typing.", "")

    def convert(value: object) -> object:
        raise Unfit(f"a {shown}, which cannot be written as text")

    return Type(convert, f"a {shown}, which cannot be written as text", shown)
