"""`parse`: one reply, from the text as written to what a reader reads, and back.

A reply of a common shape takes the fast paths (`fast`); otherwise CRLF line ends are read as LF
(and the fast paths tried again), a fence around the whole reply is unwrapped, thinking is dropped
and the guard cuts at a made-up observation; then the strict or the tolerant reader reads what is
left, and `discarded` is mapped back to the reply as written.
"""

from __future__ import annotations

from collections.abc import Collection

from react_text.core.protocol import THINK_CLOSE, THINK_OPEN
from react_text.core.types import Action, Final, Parsed, ParseError
from react_text.parser import guard
from react_text.parser.common import Names, error, tool_names
from react_text.parser.fast import read as read_fast
from react_text.parser.fast import with_discarded
from react_text.parser.fences import fenced_reply
from react_text.parser.strict import read_strict
from react_text.parser.tolerant import read_tolerant

__all__ = ["parse", "parse_cut", "parse_full"]


def parse(text: str, *, strict: bool = False, tools: Collection[str] = ()) -> Parsed:
    """Read one reply. Returns a ParseError (never raises) for a reply it cannot read.

    `tools`: the registered tool names, matched wherever a name is expected.
    """
    names = tool_names((tools,) if isinstance(tools, str) else tuple(tools)) if tools else None
    if not strict and (quick := read_fast(text, names)) is not None:  # a reply of a common shape
        return quick
    return _read(text, strict, names, cut=True, fast=False)


def parse_full(text: str, *, strict: bool = False, tools: Collection[str] = ()) -> Parsed:
    """`parse` without the fast paths: what they are tested against (tests/test_readings.py)."""
    names = tool_names((tools,) if isinstance(tools, str) else tuple(tools)) if tools else None
    return _read(text, strict, names, cut=True, fast=False, crlf_fast=False)


def parse_cut(text: str, *, strict: bool = False, tools: Collection[str] = ()) -> Parsed:
    """`parse` for a reply the guard has cut already (`guard.cut(reply).kept`): the engine cuts
    each reply once, keeps what it cut, and reads the rest here. It reads as `parse` does (the
    guard's cut is idempotent), without cutting again."""
    names = tool_names((tools,) if isinstance(tools, str) else tuple(tools)) if tools else None
    if not strict and (quick := read_fast(text, names, cut=False)) is not None:
        return quick
    return _read(text, strict, names, cut=False, fast=False)


def _read(text: str, strict: bool, names: Names | None, *, cut: bool, fast: bool, crlf_fast: bool = True) -> Parsed:
    """`fast`: whether the fast paths are tried on `text` (not when tried already); `crlf_fast`:
    on the text with its CRLF line ends made LF."""
    if "\r\n" in text and text.count("\n") == text.count("\r\n"):
        # A reply written with CRLF line ends is read with "\n" ones (its input and answer too);
        # `discarded` stays the reply's own text. Mixed line ends are read as they are.
        parsed = _parse(text.replace("\r\n", "\n"), strict, names, cut=cut, fast=crlf_fast)
        if isinstance(parsed, ParseError) or not parsed.discarded:
            return parsed
        # Every "\n" of the discarded suffix was a "\r\n": the suffix as written is that much longer.
        written = len(parsed.discarded) + parsed.discarded.count("\n")
        return with_discarded(parsed, text[len(text) - written :])
    return _parse(text, strict, names, cut=cut, fast=fast)


def _parse(
    text: str, strict: bool, names: Names | None, *, fenced: bool = True, cut: bool = True, fast: bool = True
) -> Parsed:
    if fast and not strict and (quick := read_fast(text, names, cut=cut)) is not None:
        return quick
    if not strict and fenced and (body := fenced_reply(text)) is not None:  # a fence around the reply
        start, end = body
        # One fence, not a nest of them.
        parsed = _parse(text[start:end], strict, names, fenced=False, cut=cut, fast=fast)
        if isinstance(parsed, ParseError):
            return parsed
        # The closing fence belongs to the directive's reply, unless words came after the directive.
        return with_discarded(parsed, text[end - len(parsed.discarded) :] if parsed.discarded.strip() else "")
    readable, pieces = _readable(text, cut=cut)
    if not readable.strip():
        return error("empty")
    parsed = read_strict(readable, names) if strict else read_tolerant(readable, names)
    if isinstance(parsed, ParseError) or readable == text:
        return parsed
    # `discarded` is a suffix of what was read; make it the same suffix of the reply as written.
    discarded = text[_position(pieces, len(readable) - len(parsed.discarded)) :]
    if isinstance(parsed, Final):
        return Final(parsed.answer, parsed.thought, discarded)
    return Action(parsed.tool, parsed.input, parsed.thought, discarded, parsed.closed)


def _readable(text: str, *, cut: bool = True) -> tuple[str, list[tuple[int, int]]]:
    """The reply without its thinking and cut by the guard (`cut`: unless it was cut before), and
    the (start, end) pieces of `text` it is made of.

    Closed think blocks go, and all before a lone </think>; of an unclosed <think> only the tag
    goes (a small model that opens a block and never closes it writes its protocol there).
    """
    pieces: list[tuple[int, int]] = []
    pos = 0
    if THINK_OPEN in text or THINK_CLOSE in text:
        for start, end in guard.thinking(text):
            pieces.append((pos, start))
            closed = text.endswith(THINK_CLOSE, 0, end)
            pos = end if closed else start + len(THINK_OPEN)
    pieces.append((pos, len(text)))
    readable = text if pos == 0 else "".join(text[a:b] for a, b in pieces)
    return (guard.cut(readable).kept if cut else readable), pieces


def _position(pieces: list[tuple[int, int]], index: int) -> int:
    """Where `index` of the readable text lies in the reply."""
    seen = 0
    for start, end in pieces:
        if index <= seen + end - start:
            return start + index - seen
        seen += end - start
    return pieces[-1][1]
