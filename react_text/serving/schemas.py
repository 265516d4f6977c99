"""A tool call's arguments checked against the tool's JSON schema, all the way down: what breaks it,
said the way the model is told (the phrases are `prompts/serving/schema/*.txt`). Pure.

    problems({"guest": {"age": -1}}, schema)  ->  ("guest.name is missing", "guest.age is at least 0, not -1")

The subset checked (the keywords docs/how-to/serve.md promises): `type` (one or a list),
`properties`, `required`, `additionalProperties: false`, `items` (one schema for every item),
`enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`,
`maxLength`, `pattern`, `minItems`, `maxItems`, `anyOf` / `oneOf` (some choice fits), and `$ref`
to the schema's own `$defs` / `definitions`. Any other keyword is not checked (the client's tool
sees the value as the model wrote it). A `pattern` that is not a Python regular expression is not
checked either.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Mapping
from typing import Any

from react_text import prompting

__all__ = ["problems"]

_WANTS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "object": "a JSON object",
    "array": "a JSON array",
    "null": "null",
}
_PREVIEW = 60
_DEPTH = 32


def problems(value: object, schema: Mapping[str, Any]) -> tuple[str, ...]:
    """What in `value` (the arguments, as JSON decodes them) breaks `schema`; () when nothing does."""
    found: list[str] = []
    defs = schema.get("$defs") or schema.get("definitions") or {}
    _check(value, schema, "", defs if isinstance(defs, Mapping) else {}, found, 0)
    return tuple(dict.fromkeys(found))


def _say(name: str, at: str, **values: object) -> str:
    return prompting.render(f"serving/schema/{name}", at=at or "the input", **values)


def _check(value: object, schema: object, at: str, defs: Mapping[str, Any], found: list[str], depth: int) -> None:
    if not isinstance(schema, Mapping) or depth > _DEPTH:
        return
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(("#/$defs/", "#/definitions/")):
        _check(value, defs.get(ref.rsplit("/", 1)[-1]), at, defs, found, depth + 1)
    for key in ("anyOf", "oneOf"):
        choices = schema.get(key)
        if isinstance(choices, list) and choices and not any(_fits(value, c, defs, depth) for c in choices):
            found.append(_say("no_form", at, value=_preview(value)))
            return
    kinds = schema.get("type")
    kinds = (
        [kinds]
        if isinstance(kinds, str)
        else [k for k in kinds if isinstance(k, str)]
        if isinstance(kinds, list)
        else []
    )
    if kinds and not any(_is(value, k) for k in kinds):
        wants = " or ".join(dict.fromkeys(_WANTS.get(k, k) for k in kinds))
        found.append(_say("type", at, wants=wants, value=_preview(value)))
        return
    choices = (
        schema["enum"] if isinstance(schema.get("enum"), list) else [schema["const"]] if "const" in schema else None
    )
    if choices is not None and not any(_same(value, c) for c in choices):
        shown = ", ".join(_preview(c) for c in choices)
        found.append(_say("choice", at, choices=shown, value=_preview(value)))
        return
    if isinstance(value, int | float) and not isinstance(value, bool):
        _bounds(value, schema, at, found)
    elif isinstance(value, str):
        _text(value, schema, at, found)
    elif isinstance(value, list):
        _items(value, schema, at, defs, found, depth)
    elif isinstance(value, dict):
        _properties(value, schema, at, defs, found, depth)


def _fits(value: object, schema: object, defs: Mapping[str, Any], depth: int) -> bool:
    broken: list[str] = []
    _check(value, schema, "", defs, broken, depth + 1)
    return not broken


def _bounds(value: float, schema: Mapping[str, Any], at: str, found: list[str]) -> None:
    for key, name, breaks in (
        ("minimum", "minimum", operator.lt),
        ("maximum", "maximum", operator.gt),
        ("exclusiveMinimum", "exclusive_minimum", operator.le),
        ("exclusiveMaximum", "exclusive_maximum", operator.ge),
    ):
        bound = schema.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool) and breaks(value, bound):
            found.append(_say(name, at, limit=_preview(bound), value=_preview(value)))


def _text(value: str, schema: Mapping[str, Any], at: str, found: list[str]) -> None:
    for key, name, breaks in (
        ("minLength", "min_length", operator.lt),
        ("maxLength", "max_length", operator.gt),
    ):
        bound = schema.get(key)
        if isinstance(bound, int) and not isinstance(bound, bool) and breaks(len(value), bound):
            unit = "character" if bound == 1 else "characters"
            found.append(_say(name, at, limit=bound, unit=unit, value=_preview(value)))
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            matched = re.search(pattern, value) is not None
        except re.error:
            return  # a pattern Python cannot read is not checked
        if not matched:
            found.append(_say("pattern", at, pattern=pattern, value=_preview(value)))


def _items(
    value: list[object], schema: Mapping[str, Any], at: str, defs: Mapping[str, Any], found: list[str], depth: int
) -> None:
    for key, name, breaks in (
        ("minItems", "min_items", operator.lt),
        ("maxItems", "max_items", operator.gt),
    ):
        bound = schema.get(key)
        if isinstance(bound, int) and not isinstance(bound, bool) and breaks(len(value), bound):
            found.append(_say(name, at, limit=bound, unit="item" if bound == 1 else "items", count=len(value)))
    items = schema.get("items")
    if isinstance(items, Mapping):
        for i, item in enumerate(value):
            _check(item, items, f"{at or 'the input'}[{i}]", defs, found, depth + 1)


def _properties(
    value: dict[Any, object], schema: Mapping[str, Any], at: str, defs: Mapping[str, Any], found: list[str], depth: int
) -> None:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    for key in schema.get("required") or ():
        if isinstance(key, str) and key not in value:
            found.append(_say("missing", _join(at, key)))
    for key, item in value.items():
        if key in properties:
            _check(item, properties[key], _join(at, str(key)), defs, found, depth + 1)
        elif schema.get("additionalProperties") is False:
            known = ", ".join(properties) or "none"
            found.append(_say("unknown_key", at, key=_preview(str(key)), known=known))
        elif isinstance(schema.get("additionalProperties"), Mapping):
            _check(item, schema["additionalProperties"], _join(at, str(key)), defs, found, depth + 1)


def _join(at: str, key: str) -> str:
    return f"{at}.{key}" if at else key


def _is(value: object, kind: str) -> bool:
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    wanted = {"string": str, "boolean": bool, "object": dict, "array": list, "null": type(None)}.get(kind)
    return wanted is None or isinstance(value, wanted)


def _same(value: object, choice: object) -> bool:
    """JSON equality: 1 and 1.0 are one value, true and 1 are not."""
    if isinstance(value, bool) or isinstance(choice, bool):
        return type(value) is type(choice) and value == choice
    return value == choice


def _preview(value: object) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    return shown if len(shown) <= _PREVIEW else shown[:_PREVIEW] + "..."
