"""Compound values, built from a JSON array or object: containers (list, tuple, set, frozenset, dict
and their `collections.abc` kin, elements converted where typed) and records (typed dicts,
dataclasses, named tuples, pydantic models, and any other class, called with the text or a JSON
object's members as keywords). Each builder is handed `type_of`, converting's dispatch, for the
annotations inside (elements, fields), so that this module needs nothing of converting's."""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass

from react_text.tools.binding.reading import fields, structured
from react_text.tools.binding.scalars import Type, Unfit, plain, text_of

__all__ = ["called", "dataclass_type", "dict_type", "named_tuple", "pydantic", "sequence_type", "typed_dict"]

_DOTTED = re.compile(r"[\w.]++")  # a dotted name (or a number), whole
TypeOf = Callable[[object], Type]


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


def sequence_type(container: type, args: tuple[object, ...], type_of: TypeOf) -> Type:
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


def dict_type(args: tuple[object, ...], type_of: TypeOf) -> Type:
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
    type_of: TypeOf
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
                self.made[name] = self.type_of(self.hints[name])
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


def typed_dict(cls: type, type_of: TypeOf) -> Type:
    spec = _Fields(_hints(cls), frozenset(getattr(cls, "__required_keys__", ())), type_of)
    return _record(cls, spec, dict)


def dataclass_type(cls: type, type_of: TypeOf) -> Type:
    hints = _hints(cls)
    made = [f for f in dataclasses.fields(cls) if f.init]
    missing = dataclasses.MISSING
    required = frozenset(f.name for f in made if f.default is missing and f.default_factory is missing)
    spec = _Fields({f.name: hints.get(f.name, typing.Any) for f in made}, required, type_of)
    return _record(cls, spec, lambda values: cls(**values))


def named_tuple(cls: type, type_of: TypeOf) -> Type:
    hints = _hints(cls)
    names: tuple[str, ...] = cls._fields  # type: ignore[attr-defined]
    defaults: dict[str, object] = getattr(cls, "_field_defaults", {})
    spec = _Fields(
        {n: hints.get(n, typing.Any) for n in names}, frozenset(n for n in names if n not in defaults), type_of
    )
    return _record(cls, spec, lambda values: cls(**values), array=True)


def pydantic(cls: type) -> Type:
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


def called(cls: type) -> Type:
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
            written = text_of(value)
            if written is None:
                raise Unfit(wants)
            return cls(written)
        except Unfit:
            raise
        except Exception:  # noqa: BLE001 - the user's class refused the value, in its own way
            raise Unfit(wants) from None

    return Type(convert, wants, name, mapping=True)
