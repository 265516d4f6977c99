"""An MCP tool's input schema as a Python signature (so the one binder reads its input as it reads a
Python function's), and the way back from bound arguments to the JSON the server takes."""

from __future__ import annotations

import functools
import inspect
import keyword
import operator
import re
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from react_text.tools.binding.binder import Key

__all__ = ["Parameters"]

_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
    "null": type(None),
}


@dataclass(frozen=True, slots=True)
class Parameters:
    """A tool's input schema as a Python signature, and the way back to the JSON the server takes.

    Property names that are not Python identifiers (`max-results`, `from`) get one (`max_results`,
    `from_`), annotated with the binder's `Key` so that the tool list shows and the binder reads
    the name as the schema spells it; `keys` maps them back. Required properties come first, in schema order, then the
    optional ones. An optional property without a default defaults to None, which means "not
    sent", so the server applies its own default.
    """

    signature: inspect.Signature
    keys: Mapping[str, str]  # Python name -> property name
    unsent_when_none: frozenset[str]

    @classmethod
    def of(cls, schema: Mapping[str, Any]) -> Parameters:
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        defs = schema.get("$defs") or schema.get("definitions") or {}
        required = [k for k in schema.get("required") or () if isinstance(k, str)]
        order = [k for k in properties if k in required] + [k for k in required if k not in properties]
        order += [k for k in properties if k not in required]
        params: list[inspect.Parameter] = []
        keys: dict[str, str] = {}
        unsent: set[str] = set()
        for key in order:
            sub = properties.get(key, {})
            name = _identifier(key, keys)
            keys[name] = key
            annotation = _annotation(sub, defs)
            default: object = inspect.Parameter.empty
            if key not in required:
                if isinstance(sub, dict) and "default" in sub:
                    default = sub["default"]
                else:
                    default = None
                    unsent.add(name)
                    if not _admits_none(annotation):
                        annotation = annotation | None
            if name != key:  # written as the schema spells it: `class`, `first-name`
                annotation = typing.Annotated[annotation, Key(key)]
            params.append(
                inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotation)
            )
        return cls(inspect.Signature(params, return_annotation=str), keys, frozenset(unsent))

    def arguments(self, args: tuple[object, ...], kwargs: Mapping[str, object]) -> dict[str, object]:
        """The JSON arguments of a call, keyed as the server named them."""
        if not self.signature.parameters:
            return {}  # a tool that takes nothing ignores what it was given (`count[]`, `count[now]`)
        bound = self.signature.bind(*args, **kwargs)
        return {
            self.keys[name]: value
            for name, value in bound.arguments.items()
            if not (value is None and name in self.unsent_when_none)
        }


_NOT_WORD = re.compile(r"\W")


def _identifier(key: str, taken: Iterable[str]) -> str:
    name = _NOT_WORD.sub("_", key) or "_"
    if name[0].isdigit():
        name = f"_{name}"
    if keyword.iskeyword(name):
        name += "_"
    while name in taken:
        name += "_"
    return name


def _annotation(schema: object, defs: Mapping[str, Any], depth: int = 0) -> Any:
    """The Python type of a JSON Schema: str, int, float, bool, list[...], dict, X | None, Literal."""
    if not isinstance(schema, dict) or depth > 8:
        return Any
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1]) if ref.startswith(("#/$defs/", "#/definitions/")) else None
        return _annotation(target, defs, depth + 1)
    if isinstance(schema.get("enum"), list) or "const" in schema:
        choices = schema["enum"] if isinstance(schema.get("enum"), list) else [schema["const"]]
        values = tuple(c for c in choices if c is not None)
        if values and all(isinstance(c, str | int | float | bool) for c in values):
            return _union([typing.cast(Any, Literal)[values], *([None] if None in choices else [])])
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return _union([_annotation(option, defs, depth + 1) for option in schema[key]])
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if isinstance(kind, str) else []
    if not kinds:
        return dict if "properties" in schema else Any
    made = []
    for k in kinds:
        if k == "array" and isinstance(schema.get("items"), dict):
            inner = _annotation(schema["items"], defs, depth + 1)
            made.append(list if inner is Any else list[inner])  # type: ignore[valid-type]
        else:
            made.append(_JSON_TYPES.get(k, Any))
    return _union(made)


def _union(options: list[Any]) -> Any:
    unique = list(dict.fromkeys(None if o is type(None) else o for o in options))
    if Any in unique or not unique:
        return Any
    types = [o for o in unique if o is not None] + ([type(None)] if None in unique else [])
    return functools.reduce(operator.or_, types) if len(types) > 1 else types[0]


def _admits_none(annotation: Any) -> bool:
    return annotation is Any or annotation is type(None) or type(None) in typing.get_args(annotation)
