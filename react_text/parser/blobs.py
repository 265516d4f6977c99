"""JSON action blobs, and small Python-literal ones: `{"action": "search", "action_input": "q"}`,
bare, fenced, or nested one level down ({"function": {"name", "arguments"}}); see the package's
docstring for the keys read. A few tries per reply, each decoding at most a few kilobytes more
than the reply holds.
"""

from __future__ import annotations

import ast
import json
import re
from typing import NamedTuple

from react_text.core.types import Action, Final, Parsed
from react_text.parser.common import Names, error, finishes, made_action
from react_text.parser.labels import SEPARATORS

__all__ = ["decoded_blob", "json_directive", "skip_space"]

_FENCE_TAIL = re.compile(r"[ \t]*+\n?+[ \t]*+(?:`{3,}+|~{3,}+)")
_JSON_TRIES = 8  # at most this many "{" are tried as the start of a JSON blob
_JSON_NESTED = 2048  # a JSON object up to this size is also searched inside for a blob


# Keys are compared casefolded, with spaces and hyphens as underscores ("Action Input" is action_input).
_NAME_KEYS = ("action", "tool", "tool_name", "name", "function", "api_name", "action_name", "function_name")
# An object under one of these holds the call: {"function": {"name", "arguments"}}, {"tool_call": {...}},
# AutoGPT's {"command": {"name", "args"}}, SuperAGI's {"tool": {"name", "args"}}.
_WRAPPERS = ("function", "tool_call", "function_call", "command", "tool")
_INPUT_KEYS = (
    "action_input", "tool_input", "input", "arguments", "args", "parameters", "action_variables", "query",
)  # fmt: skip
_FINAL_KEYS = ("final_answer", "answer", "final")
# Members that say something about a call but are no part of its arguments.
_NOTE_KEYS = frozenset({"thought", "thoughts", "reasoning", "plan", "criticism", "speak", "explanation", "id", "type"})
_DECODER = json.JSONDecoder(strict=False)  # strings may hold raw line breaks, as models write them
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_LITERAL_SIZE = 4096  # a Python-literal blob ({'action': 'x'}) is read up to this size
_LITERAL_TRIES = 2  # and at most this many are tried in a reply
_LITERAL_START = re.compile(r"\{\s{0,16}'")
# What may come before a blob that makes up the whole reply: a fence opener, ModelScope's marker.
_BLOB_LEAD = re.compile(r"(?:<\|startofthink\|>)?[ \t\n]*+(?:(?:`{3,}|~{3,})[\w-]{0,20})?[ \t\n]*+")


class _Object(NamedTuple):
    """A decoded object and its text exactly as written (JSON, or a Python literal). Immutable; a
    NamedTuple, made in a third of a frozen dataclass's time (one is made for every blob read)."""

    value: dict[str, object]
    source: str
    python: bool

    def keys(self) -> dict[str, str]:
        """Normalised key -> the key as written (the first of any that normalise alike)."""
        keyed: dict[str, str] = {}
        for key in self.value:
            folded = key.strip().casefold()
            if " " in folded or "\t" in folded or "-" in folded or "__" in folded:  # else the same
                folded = SEPARATORS.sub("_", folded)
            keyed.setdefault(folded, key)
        return keyed

    def written(self, key: str) -> str:
        """The text of member `key`'s value, as written."""
        if self.python:
            body = ast.parse(self.source, mode="eval").body
            if isinstance(body, ast.Dict):
                for k, v in zip(body.keys, body.values, strict=True):
                    if isinstance(k, ast.Constant) and k.value == key:
                        return ast.get_source_segment(self.source, v) or ""
            return ""
        start, end = _members(self.source, 0)[key]
        return self.source[start:end]

    def inner(self, key: str) -> _Object:
        value = self.value[key]
        return _Object(value if isinstance(value, dict) else {}, self.written(key), self.python)


def json_directive(text: str, thought: str, names: Names | None, *, thinking: bool) -> Parsed | None:
    """The first JSON object in `text` that names a tool or an answer (few tries, linear).

    A blob in prose must look like a call (a name and its input); one with a name and members that
    are no input is a record the model quotes, not a call. A blob that is the whole reply is read as
    one under an Action label is. `thinking`: the reply has a Thought label, and a blob that starts
    in the middle of a line ("...called with a blob like {...}") is quoted in the thought, not a call.
    """
    pos = 0
    literals = _LITERAL_TRIES
    for _ in range(_JSON_TRIES):
        brace = text.find("{", pos)
        if brace == -1:
            return None
        decoded = _decode(text, brace, literals > 0)
        if decoded is None:
            literals -= _LITERAL_START.match(text, brace) is not None
            pos = brace + 1
            continue
        obj, stop = decoded
        if thinking and _mid_line(text, brace):
            pos = stop
            continue
        alone = _BLOB_LEAD.fullmatch(text, 0, brace) is not None
        found = _blob(text, obj, stop, thought, names, prose=not alone)
        if found is not None:
            return found
        # Look inside a small object ({"tool_calls": [{...}]}); step over a large one, so the
        # tries decode at most a few kilobytes more than the reply holds.
        pos = brace + 1 if stop - brace <= _JSON_NESTED else stop
    return None


def _mid_line(text: str, brace: int) -> bool:
    """Whether words come before `brace` on its line (a fence opener or marker does not count)."""
    line_start = text.rfind("\n", max(0, brace - 200), brace) + 1
    if line_start == 0 and brace > 200:
        return True
    return _BLOB_LEAD.fullmatch(text, line_start, brace) is None


def decoded_blob(text: str, brace: int, thought: str, names: Names | None) -> Parsed | None:
    """The directive of the object at `brace` under an Action label, or None if there is none."""
    decoded = _decode(text, brace, True)
    if decoded is None:
        return None
    obj, stop = decoded
    return _blob(text, obj, stop, thought, names, prose=False)


def _decode(text: str, brace: int, literal: bool) -> tuple[_Object, int] | None:
    """The object at `brace` and the index after it: JSON, or (when `literal`) a small Python literal."""
    try:
        value, stop = _DECODER.raw_decode(text, brace)
    except (ValueError, RecursionError):
        return _literal(text, brace) if literal and _LITERAL_START.match(text, brace) else None
    return (_Object(value, text[brace:stop], False), stop) if isinstance(value, dict) else None


def _literal(text: str, brace: int) -> tuple[_Object, int] | None:
    """A Python dict literal ({'action': 'search'}) at `brace`, up to _LITERAL_SIZE characters."""
    stop = _literal_end(text, brace, min(len(text), brace + _LITERAL_SIZE))
    if stop is None:
        return None
    source = text[brace:stop]
    try:
        value = ast.literal_eval(source)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return None
    return _Object(value, source, True), stop


def _literal_end(text: str, start: int, limit: int) -> int | None:
    """Just past the brace that closes the one at `start`, skipping quoted strings, or None."""
    depth = 0
    quote = ""
    pos = start
    while pos < limit:
        char = text[pos]
        if quote:
            if char == "\\":
                pos += 1
            elif char == quote:
                quote = ""
            elif char == "\n":
                return None
        elif char in "'\"":
            quote = char
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    return None


def _blob(text: str, obj: _Object, stop: int, thought: str, names: Names | None, *, prose: bool) -> Parsed | None:
    """The directive of a decoded object that ends at `stop`, or None if it is not one.

    `prose`: the object sits in free text, so one that is not plainly a call is no directive. Not
    in prose, a tool named with members that are no input it can read is an error: a call is never
    made with less than the model wrote.
    """
    fence = _FENCE_TAIL.match(text, stop)
    discarded = text[fence.end() if fence is not None else stop :]
    keys = obj.keys()
    for wrapper in _WRAPPERS:
        if wrapper in keys and isinstance(obj.value[keys[wrapper]], dict):
            obj = obj.inner(keys[wrapper])
            keys = obj.keys()
            break
    named = None
    for key in _NAME_KEYS:  # a loop, not next() over a generator: this runs on every blob
        if key in keys and isinstance(obj.value[keys[key]], str):
            named = key
            break
    if named is None:
        for key in _FINAL_KEYS:
            if key in keys and isinstance(obj.value[keys[key]], str | int | float):
                return Final(_answer_text(obj, keys[key]), thought, discarded)
        return None
    name = str(obj.value[keys[named]]).strip()
    if not name:
        return None
    tool = names.lookup(name) if names is not None else name
    given = None
    for key in _INPUT_KEYS:
        if key in keys:
            given = key
            break
    given = given or next((k for k in keys if k.endswith("_input")), None)  # Dify: any key holding "input"
    if given is None:
        unread = [k for k in keys if k != named and k not in _NOTE_KEYS]
        if unread:
            return None if prose else error("unread_arguments", thought)
        return Final("", thought, discarded) if finishes(tool, names) else Action(tool, "", thought, discarded)
    if finishes(tool, names):
        return Final(_answer_text(obj, keys[given]), thought, discarded)
    return made_action(tool, _input_text(obj, keys[given]), thought, discarded, True)


def _input_text(obj: _Object, key: str) -> str:
    """A blob's input as tool input text: a string's text; any other value as written."""
    value = obj.value[key]
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return obj.written(key)


def _answer_text(obj: _Object, key: str) -> str:
    """A blob's final answer: as _input_text, and a one-key object gives its value ({"answer": x})."""
    value = obj.value[key]
    if isinstance(value, dict) and len(value) == 1:
        inner = next(iter(value.values()))
        return inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False)
    return _input_text(obj, key)


def _members(text: str, brace: int) -> dict[str, tuple[int, int]]:
    """Where each member's value of the (valid) JSON object at `brace` is written: key -> (start, end)."""
    spans: dict[str, tuple[int, int]] = {}
    pos = skip_space(text, brace + 1)
    while text.startswith('"', pos):
        key, pos = _DECODER.raw_decode(text, pos)
        start = skip_space(text, skip_space(text, pos) + 1)  # after the colon
        _, end = _DECODER.raw_decode(text, start)
        spans[key] = (start, end)
        pos = skip_space(text, end)
        if text.startswith(",", pos):
            pos = skip_space(text, pos + 1)
    return spans


def skip_space(text: str, pos: int) -> int:
    m = _JSON_SPACE.match(text, pos)
    return m.end() if m is not None else pos
