"""Writing an action so that `parse` reads back exactly its tool and input."""

from __future__ import annotations

import re

from react_text.core.protocol import action_line
from react_text.parser import guard
from react_text.parser.fences import unwrap

__all__ = ["render_action"]

_BACKTICKS = re.compile(r"`+")


def render_action(tool: str, value: str) -> str:
    """`ACTION: tool[value]`, written so that `parse` reads back exactly `tool` and `value`.

    A value that the tolerant reading would change (surrounding space, several lines, unbalanced
    brackets, fences) goes in a code fence longer than any run of backticks in it.
    Values holding an observation label or a <think> tag are beyond any text protocol: the guard
    cuts the first, the parser drops the second.
    """
    plain = action_line(tool, value)
    closes_at_end = guard.input_end(plain, len(plain) - len(value) - 2) == len(plain)
    if "\n" not in value and "```" not in value and unwrap(value) == value and closes_at_end:
        return plain
    longest = max((len(m) for m in _BACKTICKS.findall(value)), default=0)
    fence = "`" * max(3, longest + 1)
    return action_line(tool, f"{fence}\n{value}\n{fence}")
