"""Where a bracketed input ends when it holds quoted values: a bracket inside quotes is the value's.

    say["a]b"]                               the input is "a]b" (not "a)
    say[{"text": "a]b", "times": 2}]         the whole JSON object
    say[text="smile :]", times=2]            both fields

The binder reads a quoted value as one value (tools/binding/reading.py); the guard and the parser
must find the same end, or an input is cut inside a string and read as whole. A quote opens a value
only where a value starts: right after the input's bracket, a "(", "{", "[", ",", "=" or ":" (spaces
between allowed), so an apostrophe in a word (`the cat's toy`) is text. A quote closes only where a
value can end: before a ",", ":", a closing bracket, a line break or the end (spaces between
allowed); elsewhere it is a character of the value (`'it's'` is one value). Inside a quote a
backslash escapes the next character (outside one it is text: `path[C:\\]`).

`quoted_end` answers in three ways: the index just past the input's closing bracket; None when the
text ends inside a quoted value (with no other such quote in it) or with the bracket still open: the
input was cut; or `UNREAD` when a quote runs into a line break (a JSON string or a quoted field
never does), or to the end past a quote of its kind that could not close it (`["hello" world]`):
the quote was text, and brackets are balanced as if there were no quotes. Pure, linear in the input.
"""

from __future__ import annotations

import re
from typing import Final, Literal

__all__ = ["QUOTES", "UNREAD", "quoted_end"]

QUOTES = "\"'`"
_Unread = Literal["unread"]
UNREAD: Final[_Unread] = "unread"
_ENDS_VALUE = frozenset(",:])}\n")
_SPACES = " \t"
# What the scan stops at outside a quote: a quote that opens a value (after one of _OPENS_VALUE and
# spaces: the group `quote`), or a bracket of the input's kind. A quote anywhere else is a character
# and is not stopped at: a reply of 100 KB of "```" lines costs one search, not one step a quote.
# The quote's alternative comes first: an opening bracket followed by a quote is both.
_OUTSIDE = {
    "[": re.compile(r"[\[({,=:][ \t]*+(?P<quote>[\"'`])|[\[\]]"),
    "(": re.compile(r"[\[({,=:][ \t]*+(?P<quote>[\"'`])|[()]"),
}
_FIRST_QUOTE = re.compile(r"[ \t]*+[\"'`]")  # a quote that opens the input's first value
# Inside a quote: that quote, a backslash or a line break.
_INSIDE = {q: re.compile(rf"[{re.escape(q)}\\\n]") for q in QUOTES}


def quoted_end(text: str, open_at: int, limit: int) -> int | _Unread | None:
    """Just past the bracket that closes the one at `open_at`, reading quoted values as one value;
    None when `text[:limit]` ends first; UNREAD when a quote meets a line break."""
    opener = text[open_at]
    closer = "]" if opener == "[" else ")"
    outside = _OUTSIDE[opener]
    depth = 1
    pos = open_at + 1
    first = _FIRST_QUOTE.match(text, pos, limit)
    if first is not None:  # right after the input's own bracket
        end = _quote_end(text, first.end() - 1, limit)
        if end is None or end == UNREAD:
            return end
        pos = end
    while True:
        found = outside.search(text, pos, limit)
        if found is None:
            return None
        at = found.start()
        char = text[at]
        if char == opener:
            depth += 1
        if found.group("quote") is not None:  # a quote that opens a value (an apostrophe in a word does not)
            end = _quote_end(text, found.end() - 1, limit)
            if end is None or end == UNREAD:
                return end
            pos = end
        elif char == closer:
            depth -= 1
            pos = at + 1
            if depth == 0:
                return pos
        else:
            pos = at + 1


def _quote_end(text: str, at: int, limit: int) -> int | _Unread | None:
    """Just past the quote that closes the one at `at`; None at `limit` (UNREAD if a quote of its
    kind that could not close it came first); UNREAD at a line break."""
    quote = text[at]
    inside = _INSIDE[quote]
    pos = at + 1
    seen = False  # a quote of this kind that could not close the value: perhaps it was never one
    while True:
        found = inside.search(text, pos, limit)
        if found is None:
            return UNREAD if seen else None
        stop = found.start()
        char = text[stop]
        if char == "\n":
            return UNREAD
        if char == "\\":
            pos = stop + 2
            continue
        after = stop + 1
        while after < limit and text[after] in _SPACES:
            after += 1
        if after >= limit or text[after] in _ENDS_VALUE:
            return stop + 1
        seen = True
        pos = stop + 1
