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
    ```json\n{"action": ..., ...}\n```            a JSON blob, bare or in a fence, that no label, call
                                                  or code action of any family can be in (`_plain_blob`)

Why each reads as the full reading does (tests/test_readings.py compares them on every corpus reply
and on generated ones): nothing a fast path reads can hold a label, an observation label, a tag,
a fence, a bracket, a call or a code action of any family (the thought, the input and the answer
hold none of `:`, `[`, `]`, `<`, a backtick; chatter none of those nor braces, parentheses, "#",
"~" or the letters "obs"), so the full reading finds the same sections, the guard cuts nowhere
(or exactly at the observation line), and the values are taken as the full reading takes them: the
same strip (a value holds no whitespace but spaces and tabs, so stripping those strips all), the
same quotes rule, a registered name as `Names.at` finds it, and `directive` for the tool's kind; a
blob is read by the very function the full reading ends in (`blobs.json_directive`). A value with a
leading "*" or "_" that a label takes as decoration, or quotes at its edges, falls back to the full
reading.
"""

from __future__ import annotations

import re

from react_text.core.protocol import ACTION_LABEL, FINAL_LABEL, STOP_SEQUENCES, THINK_CLOSE, THINK_OPEN, THOUGHT_LABEL
from react_text.core.types import Action, Final, Parsed, ParseError
from react_text.parser.blobs import json_directive
from react_text.parser.common import Names, finishes, made_action, made_final
from react_text.parser.fences import QUOTES, fenced_reply
from react_text.parser.guard import SHORT
from react_text.parser.tolerant import directive

__all__ = ["read"]

_THOUGHT, _ACTION, _FINAL = (re.escape(label) for label in (THOUGHT_LABEL, ACTION_LABEL, FINAL_LABEL))
# Whitespace that `str.strip` takes and a strip of spaces and tabs does not: never read fast.
_WS = "\\x0b\\x0c\\r\\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
_PLAIN = rf"\n:：<\[\]`{_WS}"  # no label, tag, bracket or fence can be in a value without these
# A thought or an answer: it starts with no "*" or "_" (a label would take them as decoration).
_VALUE = rf"[^*_ \t{_PLAIN}][^{_PLAIN}]*+"
_INPUT = rf"[^{_PLAIN}]*+"  # a bracketed input
_CHATTER = rf"(?P<chat>[^:：\[\]<>{{}}()`#~\n{_WS}][^:：\[\]<>{{}}()`#~{_WS}]*+)?"  # below an answer
_FENCES = "`~ \t\n"  # what a reply in a fence may open with
_FINISH_INITIALS = "fFaA"  # of the names `common.finishes` knows (the tool's first letter is ASCII)
_EDGES = QUOTES + "*_"  # an input that starts with one of these is left to the full reading
# A made-up observation at a line start (where the stop sequences are): the guard cuts there, and
# the reading is that of what comes before it.
_MADE_UP = rf"(?:(?<=\n)(?={'|'.join(re.escape(stop[1:]) for stop in STOP_SEQUENCES)})(?P<tail>[\s\S]*+))?"
_LINE = r"(?<![ \t]{13})"  # at most 12 spaces or tabs before a label (more, and it is none: `protocol.DECOR`)
_BOLD = r"(?<![ \t]{11})\*\*"  # and at most 10 before a bold one
# The canonical reply, and the dialects models drift into most: title-case and bold labels at
# their line starts, LangChain's `Action:` / `Action Input:` pair. One match (on `re`: faster than
# `regex` for this); every repeat possessive or bounded.
_REPLY = re.compile(
    rf"[ \t\n]*+{_LINE}(?:(?:{_THOUGHT}|Thought:|{_BOLD}Thought:\*\*)[ \t]*+(?P<thought>{_VALUE})?\n[ \t\n]*+{_LINE})?"
    rf"(?:(?:{_ACTION}|Action:|{_BOLD}Action:\*\*)[ \t]*+(?P<tool>[A-Za-z_][\w.\-]{{0,63}})"
    rf"(?:\[(?P<input>{_INPUT})\]|[ \t]*+\nAction Input:[ \t]*+(?P<value>[^*_ \t{{{_PLAIN}][^{{{_PLAIN}]*+)?)"
    rf"|(?:{_FINAL}|Final Answer:|{_BOLD}Final Answer:\*\*)[ \t]*+(?P<answer>{_VALUE}))"
    rf"(?P<rest>[ \t\n]*+){_CHATTER}{_MADE_UP}\Z"
)
_BLOB_LINE_STARTS = '"{}]'  # what a line of a blob read fast may open with


def read(text: str, names: Names | None, *, cut: bool = True) -> Parsed | None:
    """The reading of a reply of a common shape, or None for any other (the full reading reads it).

    `cut`: as `reading.parse` (False for a reply the guard has cut: no made-up observation is read
    as one then, as the full reading reads none)."""
    if len(text) > SHORT:  # a longer reply takes the full reading: a match never costs more than a scan
        return None
    m = _REPLY.match(text)
    if m is not None:
        return _reading(text, m, names, cut)
    if text.startswith(THINK_OPEN):  # one think block in front: the reply is what follows it
        close = text.find(THINK_CLOSE)
        if close == -1 or text.find(THINK_OPEN, close) != -1:
            return None
        return _read(text[close + len(THINK_CLOSE) :], names, cut)
    if text[:1] in _FENCES and (body := fenced_reply(text)) is not None:  # a fence around the whole reply
        start, end = body
        parsed = _read(text[start:end], names, cut)
        if parsed is None or isinstance(parsed, ParseError):
            return parsed
        # The closing fence belongs to the directive's reply, unless words came after the directive.
        return with_discarded(parsed, text[end - len(parsed.discarded) :] if parsed.discarded.strip() else "")
    return _others(text, names)


def with_discarded(parsed: Action | Final, discarded: str) -> Action | Final:
    """`parsed` with another `discarded`."""
    if discarded == parsed.discarded:
        return parsed
    if isinstance(parsed, Final):
        return made_final(parsed.answer, parsed.thought, discarded)
    return made_action(parsed.tool, parsed.input, parsed.thought, discarded, parsed.closed)


def _read(text: str, names: Names | None, cut: bool) -> Parsed | None:
    m = _REPLY.match(text)
    return _reading(text, m, names, cut) if m is not None else _others(text, names)


def _others(text: str, names: Names | None) -> Parsed | None:
    """A JSON blob."""
    if "{" in text and "<" not in text and "\r" not in text and "[TOOL_CALLS]" not in text:
        return json_directive(text, "", names, thinking=False) if _plain_blob(text) else None
    return None


def _plain_blob(text: str) -> bool:
    """Whether no label, call or code action of any family can be in `text`: no line opens with
    anything but JSON's punctuation, and no colon follows anything but a string's closing quote
    (and spaces). A scan by `str.find` from colon to colon and line to line: a blob holds few."""
    if "：" in text:
        return False
    line = -1
    while True:  # each line, the first included
        start = line + 1
        while start < len(text) and text[start] in " \t":
            start += 1
        if start < len(text) and text[start] != "\n" and text[start] not in _BLOB_LINE_STARTS:
            return False
        line = text.find("\n", start)
        if line == -1:
            break
    colon = text.find(":")
    while colon != -1:
        before = colon - 1
        while before >= 0 and text[before] in " \t":
            before -= 1
        if before >= 0 and text[before] not in '"\n':
            return False
        colon = text.find(":", colon + 1)
    return True


# The groups of _REPLY, by number (faster than by name).
_THOUGHT_G, _TOOL_G, _INPUT_G, _VALUE_G, _ANSWER_G, _REST_G, _CHAT_G, _TAIL_G = range(1, 9)


def _reading(text: str, m: re.Match[str], names: Names | None, cut: bool) -> Action | Final | None:
    """The reading of what `m` matched, from the start of `text` (up to a made-up observation, or
    all of it): `discarded` runs to the end of `text`."""
    thought, tool, raw_input, raw_value, raw_answer, rest, chat, tail = m.groups()
    if tail is not None and (not cut or "think>" in tail):  # the guard would not cut, or see a think block
        return None
    thought = thought.rstrip(" \t") if thought is not None else ""
    if raw_answer is not None:
        answer = raw_answer.rstrip(" \t")
        if answer[-1] in QUOTES:
            return None
        # Chatter: the answer ends at the blank line, and what follows is discarded.
        if chat is not None and (answer[0] in QUOTES or not rest.startswith("\n\n") or "obs" in chat.lower()):
            return None
        return made_final(answer, thought, text[m.start(_ANSWER_G) + len(answer) :])
    if chat is not None:
        return None
    if names is not None:  # the registered name the full reading finds there, and only that
        found = names.at(text, m.start(_TOOL_G))
        if found is None or found[1] != m.end(_TOOL_G):
            return None
        tool = found[0]
    if raw_input is not None:
        value = raw_input.strip(" \t")
        if value[:1] in _EDGES or value[-1:] in QUOTES:
            return None
        stop = m.start(_REST_G)
        closed = True
    else:  # `Action Input:` up to the end of its line
        value = raw_value.rstrip(" \t") if raw_value is not None else ""
        stop = m.start(_VALUE_G) + len(value) if raw_value is not None else m.start(_REST_G)
        closed = text.find("\n", stop, m.end(_REST_G)) != -1
    if tool[0] in _FINISH_INITIALS and finishes(tool, names):  # `Finish[x]`, `final_answer[x]`: the answer
        return directive(tool, value, thought, text[stop:], closed, names)
    return made_action(tool, value, thought, text[stop:], closed)
