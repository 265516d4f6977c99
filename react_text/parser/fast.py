"""The fast paths: the common shapes of a reply, each read in one anchored match, exactly as the full
reading reads them (`read(text, names)`, or None: then the full reading reads it).

    THOUGHT: I need the price.                  the canonical reply (any indentation the labels
    ACTION: lookup[train ticket]                  allow, blank lines between)
    Thought: ... / Action: lookup[x]            the same in title case, or in bold ("**Thought:**",
    **Final Answer:** 234                         "**Action:**", "**Final Answer:**"), at line starts
    Thought: ... / Action: lookup               LangChain's ReAct: the name, then its input on an
    Action Input: train ticket                    `Action Input:` line
    FINAL: 234\\n\\nThe answer is 234 because...   chatter after a blank line below a one-line answer
    ...ACTION: lookup[x]\\nObservation: 50 ...   a made-up observation: the guard cuts there
    <think>...</think>THOUGHT: ...              one think block in front, dropped

Why each reads as the full reading does (tests/test_readings.py compares them on every corpus reply
and on generated ones): nothing a fast path reads can hold a label, an observation label, a tag,
a fence, a bracket, a call or a code action of any family (the thought, the input and the answer
hold none of `:`, `[`, `]`, `<`, a backtick; chatter none of those nor braces, parentheses, "#",
"~" or the letters "obs"), so the full reading finds the same sections, the guard cuts nowhere
(or exactly at the observation line), and the values are taken as the full reading takes them: the
same strip, the same quotes rule (`_plain`), a registered name as `Names.at` finds it, and
`directive` for the tool's kind. A value with whitespace the strip would treat otherwise, or a
leading "*" or "_" that a label takes as decoration, falls back to the full reading.
"""

from __future__ import annotations

import re

from react_text.core.protocol import ACTION_LABEL, FINAL_LABEL, STOP_SEQUENCES, THINK_CLOSE, THINK_OPEN, THOUGHT_LABEL
from react_text.core.types import Action, Final
from react_text.parser.common import Names
from react_text.parser.fences import QUOTES
from react_text.parser.guard import SHORT
from react_text.parser.tolerant import directive

__all__ = ["read"]

_THOUGHT, _ACTION, _FINAL = (re.escape(label) for label in (THOUGHT_LABEL, ACTION_LABEL, FINAL_LABEL))
_VALUE = r"[^\n:：<\[\]`]*+"  # a thought or an answer: no label, tag, bracket or fence can be in it
_INPUT = r"[^\[\]\n:：<`]*+"  # a bracketed input
_CHATTER = r"(?P<chat>[^:：\[\]<>{}()`#~\r\n][^:：\[\]<>{}()`#~\r]*+)?"  # after a blank line below an answer
# The canonical reply (the `re` module: faster than `regex` for this). Labels in capitals, up to 12
# spaces or tabs before them (more, and a label is no line label: `protocol.DECOR`).
_CANONICAL = re.compile(
    rf"[ \t\n]*+(?<![ \t]{{13}})(?:{_THOUGHT}[ \t]*+(?P<thought>{_VALUE})\n[ \t\n]*+(?<![ \t]{{13}}))?"
    rf"(?:{_ACTION}[ \t]*+(?P<tool>[A-Za-z_][\w.\-]{{0,63}})\[(?P<input>{_INPUT})\]"
    rf"|{_FINAL}[ \t]*+(?P<answer>{_VALUE}))(?P<rest>[ \t\n]*+){_CHATTER}\Z"
)
# The dialects models drift into most: title-case and bold labels at the very start of their lines,
# LangChain's `Action:` / `Action Input:` pair.
_DIALECT = re.compile(
    rf"\n*+(?:(?:{_THOUGHT}|Thought:|\*\*Thought:\*\*)[ \t]*+(?P<thought>{_VALUE})\n++)?"
    rf"(?:(?:{_ACTION}|Action:|\*\*Action:\*\*)[ \t]*+(?P<tool>[A-Za-z_][\w.\-]{{0,63}})"
    rf"(?:\[(?P<input>{_INPUT})\]|[ \t]*+\nAction Input:[ \t]*+(?P<value>[^\n:：<\[\]`{{]*+))"
    rf"|(?:{_FINAL}|Final Answer:|\*\*Final Answer:\*\*)[ \t]*+(?P<answer>{_VALUE}))(?P<rest>[ \t\n]*+){_CHATTER}\Z"
)


def read(text: str, names: Names | None, *, cut: bool = True) -> Action | Final | None:
    """The reading of a reply of a common shape, or None for any other (the full reading reads it).

    `cut`: as `reading.parse` (False for a reply the guard has cut: no made-up observation is read
    as one then, as the full reading reads none)."""
    if len(text) > SHORT:  # a longer reply takes the full reading: a match never costs more than a scan
        return None
    if text.startswith(THINK_OPEN):  # one think block in front: the reply is what follows it
        close = text.find(THINK_CLOSE)
        if close == -1 or text.find(THINK_OPEN, close) != -1:
            return None
        return _read(text[close + len(THINK_CLOSE) :], names, cut)
    return _read(text, names, cut)


def _read(text: str, names: Names | None, cut: bool) -> Action | Final | None:
    m = _CANONICAL.match(text) or _DIALECT.match(text)
    if m is not None:
        return _reading(text, m, names)
    # A made-up observation: the guard cuts at its line, and the reading is that of what is before it.
    if not cut:
        return None
    at = min((at for at in (text.find(stop) for stop in STOP_SEQUENCES) if at != -1), default=-1)
    if at == -1 or "think>" in text:
        return None
    head = text[: at + 1]
    m = _CANONICAL.match(head) or _DIALECT.match(head)
    if m is None:
        return None
    parsed = _reading(head, m, names)
    if parsed is None:
        return None
    discarded = text[len(head) - len(parsed.discarded) :]
    if isinstance(parsed, Final):
        return Final(parsed.answer, parsed.thought, discarded)
    return Action(parsed.tool, parsed.input, parsed.thought, discarded, parsed.closed)


def _reading(text: str, m: re.Match[str], names: Names | None) -> Action | Final | None:
    thought = _plain(m.group("thought") or "")
    if thought is None:
        return None
    chat = m.group("chat")
    if (raw := m.group("answer")) is not None:
        answer = _plain(raw)
        if not answer or answer[-1] in QUOTES:
            return None
        # Chatter: the answer ends at the blank line, and what follows is discarded.
        if chat is not None and (
            answer[0] in QUOTES or not m.group("rest").startswith("\n\n") or "obs" in chat.lower()
        ):
            return None
        return Final(answer, thought, text[m.start("answer") + len(raw.rstrip(" \t")) :])
    if chat is not None:
        return None
    tool = m.group("tool")
    if names is not None:  # the registered name the full reading finds there, and only that
        found = names.at(text, m.start("tool"))
        if found is None or found[1] != m.end("tool"):
            return None
        tool = found[0]
    if (raw := m.group("input")) is not None:
        value = _plain(raw)
        if value is None or value[:1] in QUOTES or value[-1:] in QUOTES:
            return None
        return directive(tool, value, thought, m.group("rest"), True, names)
    value = _plain(m.group("value"))  # `Action Input:` up to the end of its line
    if value is None:
        return None
    stop = m.start("value") + len(value)
    discarded = text[stop:]
    return directive(tool, value, thought, discarded, "\n" in discarded, names)


def _plain(raw: str) -> str | None:
    """`raw` without its spaces and tabs around, or None when the full reading could differ (other
    whitespace around it; a leading "*" or "_" that a label may take as decoration)."""
    value = raw.strip(" \t")
    return value if value == value.strip() and value[:1] not in ("*", "_") else None
