"""Reading a tool input: literals (Python's and JSON's alike) and comma-separated fields. Pure; never raises.

    literal('"Sunol, CA"')                   Written("Sunol, CA", '"Sunol, CA"')
    literal("[true, None, 'x']")             Written([True, None, "x"], ...)
    fields('"Paris", date="20th June", 3')   Field(None, Written("Paris")), Field("date", Written("20th June")),
                                             Field(None, Written(3))
    fields("cats and dogs, limit=3")         Field(None, "cats and dogs"), Field("limit", Written(3))

A literal is a string ('...' or "...", with Python's and JSON's escapes; a backslash before any
other character stays), a number, True/False/None or true/false/null, or a list, tuple or dict of
literals, all written as Python or JSON writes them (and mixed). The reader is a small recursive
descent of its own rather than `ast`: it reads JSON's words, cannot run into a tokenizer's
warnings or comments (`"20th June"`, `"# 1"`, `"C:\\d"`), and costs time linear in the text.

A field is a value, or `name=value`; fields are separated by commas. A value that is a literal
followed by a comma or the end is that literal; otherwise it is the text up to the next comma as
written, stripped, without one pair of quotes around it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["Field", "Written", "fields", "literal", "structured"]

_DEPTH = 100  # nesting deeper than this is not read as a literal
_SPACE = re.compile(r"[ \t\r\n]*+")
_NUMBER = re.compile(r"[-+]?+(?:\d++(?:\.\d*+)?+|\.\d++)(?:[eE][-+]?+\d++)?+")
_WORD = re.compile(r"[^\W\d]\w*+")
_NAME_EQUALS = re.compile(r"([^\W\d]\w*+(?:-\w++)*+)[ \t]*+=(?!=)")  # `first-name=` too
_WORDS: dict[str, object] = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0", "a": "\a"}
_ESCAPES |= {c: c for c in "\\'\"/"}
_CLOSING = {"[": "]", "(": ")", "{": "}"}
_QUOTES = "'\"`"
_HEX = frozenset("0123456789abcdefABCDEF")


@dataclass(frozen=True, slots=True)
class Written:
    """A literal and its source: a text parameter gets `007` as written, not `7`."""

    value: object
    source: str


@dataclass(frozen=True, slots=True)
class Field:
    """One comma-separated field: `name=` (or None), its value, and the field's text as written."""

    name: str | None
    value: object  # a Written literal, or text
    whole: str  # the whole field, stripped (what a name that is no parameter's stands for)
    start: int  # where the field starts in the text


class _NotLiteral(Exception):
    pass


def _skip(text: str, pos: int = 0) -> int:
    """After the spaces, tabs and line breaks at `pos`."""
    space = _SPACE.match(text, pos)
    return space.end() if space is not None else pos


def literal(text: str) -> Written | None:
    """The one literal `text` holds (space around it allowed), or None."""
    start = _skip(text)
    read = _Reader(text).read(start)
    if read is None or _skip(text, read[1]) != len(text):
        return None
    return Written(read[0], text[start : read[1]])


def structured(text: str) -> object:
    """A JSON object or array (or the same written as a Python literal); else None."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        return json.loads(stripped, strict=False)  # strings may hold raw line breaks, as models write them
    except (ValueError, RecursionError):
        pass
    found = literal(stripped)
    return found.value if found is not None and isinstance(found.value, dict | list) else None


def fields(text: str) -> list[Field]:
    """The comma-separated fields of `text` (none in a blank text); a trailing comma ends the last one."""
    if not text.strip():
        return []
    found: list[Field] = []
    reader = _Reader(text)
    pos = 0
    while True:
        start = pos
        at = _skip(text, pos)
        name = None
        named = _NAME_EQUALS.match(text, at)
        if named is not None:
            name = named.group(1)
            at = _skip(text, named.end())
        read = reader.read(at)
        after = _skip(text, read[1]) if read is not None else -1
        if read is not None and (after == len(text) or text[after] == ","):
            found.append(Field(name, Written(read[0], text[at : read[1]]), text[start:after].strip(), start))
            stop = after
        else:
            comma = text.find(",", at)
            stop = len(text) if comma == -1 else comma
            found.append(Field(name, _unquote(text[at:stop].strip()), text[start:stop].strip(), start))
        if stop == len(text):
            break
        pos = stop + 1
    if len(found) > 1 and not found[-1].whole:  # "cats," : a trailing comma
        found.pop()
    return found


def _unquote(value: str) -> str:
    """`value` without one pair of matching quotes (or backticks) around it, when none is inside."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in _QUOTES and value[0] not in value[1:-1]:
        return value[1:-1]
    return value


# --- the literal reader ---------------------------------------------------------------------------


class _Reader:
    """Reads literals out of one text within a budget of steps (a value or an escape each), shared by
    every read of that text: a text whose fields each start a long literal that fails deep inside
    (`[1, [1, [1, ...`) costs time linear in its length; past the budget, fields are text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.steps = len(text) // 2 + 1_000  # reads that succeed take at most a step for two characters

    def read(self, pos: int) -> tuple[object, int] | None:
        """The literal at `pos` and the index after it, or None."""
        try:
            return self._value(pos, 0)
        except _NotLiteral:
            return None

    def _step(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise _NotLiteral

    def _value(self, pos: int, depth: int) -> tuple[object, int]:
        self._step()
        text = self.text
        if depth > _DEPTH or pos >= len(text):
            raise _NotLiteral
        char = text[pos]
        if char in "\"'":
            return self._string(pos)
        if char in _CLOSING:
            return self._container(pos, depth)
        if (number := _NUMBER.match(text, pos)) is not None:
            return _number(number.group()), _bounded(text, number.end())
        if (word := _WORD.match(text, pos)) is not None and word.group() in _WORDS:
            return _WORDS[word.group()], word.end()
        raise _NotLiteral

    def _string(self, pos: int) -> tuple[str, int]:
        text = self.text
        quote = text[pos]
        pieces: list[str] = []
        i = pos + 1
        end = text.find(quote, i)
        while True:
            if end == -1:  # never closed
                raise _NotLiteral
            slash = text.find("\\", i, end)
            if slash == -1:
                pieces.append(text[i:end])
                return "".join(pieces), end + 1
            self._step()
            pieces.append(text[i:slash])
            escaped, i = _escape(text, slash)
            pieces.append(escaped)
            if i > end:  # the escape took the quote that looked like the end
                end = text.find(quote, i)

    def _container(self, pos: int, depth: int) -> tuple[object, int]:
        text = self.text
        opening = text[pos]
        closing = _CLOSING[opening]
        items: list[object] = []
        pairs: dict[object, object] = {}
        commas = 0
        i = _skip(text, pos + 1)
        while not text.startswith(closing, i):
            key, i = self._value(i, depth + 1)
            i = _skip(text, i)
            if opening == "{":
                if not text.startswith(":", i):
                    raise _NotLiteral
                value, i = self._value(_skip(text, i + 1), depth + 1)
                try:
                    pairs[key] = value
                except TypeError:  # an unhashable key
                    raise _NotLiteral from None
                i = _skip(text, i)
            else:
                items.append(key)
            if text.startswith(",", i):
                commas += 1
                i = _skip(text, i + 1)
            elif not text.startswith(closing, i):
                raise _NotLiteral
        if opening == "(" and len(items) == 1 and not commas:  # (x) is x; (x,) a tuple
            return items[0], i + 1
        return (pairs if opening == "{" else items), i + 1


def _bounded(text: str, end: int) -> int:
    """`end`, when what follows cannot continue the token (`20th`, `1.2.3`, `5km` are not literals)."""
    if end < len(text) and (text[end].isalnum() or text[end] in "_."):
        raise _NotLiteral
    return end


def _number(written: str) -> int | float:
    try:
        if any(c in written for c in ".eE"):
            return float(written)
        return int(written)
    except ValueError:  # more digits than int() takes
        raise _NotLiteral from None


def _escape(text: str, slash: int) -> tuple[str, int]:
    """The character a backslash escape at `slash` stands for, and the index after it."""
    code = text[slash + 1 : slash + 2]
    if code in _ESCAPES:
        return _ESCAPES[code], slash + 2
    if code == "\n":  # a line continuation
        return "", slash + 2
    width = {"x": 2, "u": 4, "U": 8}.get(code)
    digits = text[slash + 2 : slash + 2 + width] if width else ""
    if width and len(digits) == width and all(c in _HEX for c in digits):
        point = int(digits, 16)
        end = slash + 2 + width
        low = text[end + 2 : end + 6] if text.startswith("\\u", end) else ""
        if 0xD800 <= point < 0xDC00 and len(low) == 4 and all(c in _HEX for c in low):
            second = int(low, 16)
            if 0xDC00 <= second < 0xE000:  # a JSON surrogate pair
                return chr(0x10000 + ((point - 0xD800) << 10) + (second - 0xDC00)), end + 6
        if point > 0x10FFFF:
            raise _NotLiteral
        return chr(point), end
    return "\\" + code, slash + 1 + len(code)  # any other backslash stays, as Python keeps it
