"""Turn a tool input into arguments (a stand-in until the binder of issue 12 lands)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from .tools import Tool, arguments


@dataclass(frozen=True, slots=True)
class Refusal:
    message: str


def bind(tool: Tool, text: str) -> inspect.BoundArguments | Refusal:
    try:
        values = arguments(tool, text)
        return inspect.signature(tool.fn).bind(*values)
    except (TypeError, ValueError) as exc:
        return Refusal(f"{tool.form}: {exc}")
