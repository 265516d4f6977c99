"""Reading a server's JSON without trusting it: a field of an SDK object or a mapping, a count, a
short glimpse of what came for an error's words. Shared by the readers beside it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

__all__ = ["NOT_OBJECTS", "count", "field", "glimpse", "ints", "window"]

NOT_OBJECTS = (str, bytes, int, float, bool, list, tuple)


def field(obj: object, name: str) -> Any:
    """A field of an SDK object or a JSON mapping; None when absent or when `obj` is neither."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    if obj is None or isinstance(obj, NOT_OBJECTS):
        return None
    return getattr(obj, name, None)


def count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def window(value: object) -> int | None:
    return value if count(value) and value > 0 else None


def glimpse(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else f"{text[:117]}..."


def ints(value: object) -> tuple[int, ...] | None:
    if isinstance(value, list) and value and all(count(v) for v in value):
        return tuple(value)
    return None
