"""The strict canonical form, for `parse(text, strict=True)`: upper-case THOUGHT / ACTION / FINAL
at a line start, no decoration, `tool[input]` with nothing after the closing bracket.
"""

from __future__ import annotations

import re

import regex

from react_text.core.protocol import ACTION, FINAL, THOUGHT
from react_text.core.types import Action, Final, Parsed
from react_text.parser import guard
from react_text.parser.common import Names, error

__all__ = ["read_strict"]

_STRICT_TOOL = re.compile(r"(?P<tool>[A-Za-z_][\w.\-]{0,63})\[")
_STRICT = regex.compile(rf"(?m)^(?P<word>{'|'.join(re.escape(w) for w in (THOUGHT, ACTION, FINAL))}):[ \t]?")


def read_strict(text: str, names: Names | None = None) -> Parsed:
    labels = list(_STRICT.finditer(text))
    thought = ""
    for i, m in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
        body = text[m.end() : end]
        word = m.group("word")
        if word == THOUGHT:
            thought = body.strip()
        elif word == FINAL:
            answer = body.strip()
            stop = m.end() + len(body.rstrip())
            return Final(answer, thought, text[stop:]) if answer else error("empty_answer", thought)
        else:
            tool = _strict_tool(body, names)
            if tool is None:
                return error("bad_action", thought)
            name, open_at = tool
            close = guard.input_end(body, open_at)
            if close is None or body[close:].strip():
                return error("missing_input" if close is None else "bad_action", thought)
            return Action(name, body[open_at + 1 : close - 1], thought, text[m.end() + close :])
    return error("no_directive", thought)


def _strict_tool(body: str, names: Names | None) -> tuple[str, int] | None:
    """The tool name at the start of a strict ACTION body (a registered name exactly as registered,
    or an identifier), and where its "[" is."""
    if names is not None:
        for name in names.longest_first:
            if name and body.startswith(name + "["):
                return name, len(name)
    m = _STRICT_TOOL.match(body)
    return (m.group("tool"), m.end() - 1) if m is not None else None
