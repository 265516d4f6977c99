"""The stop guard: keep the model from writing its own observation.

Every reply is cut here, because many servers and models ignore `stop` (and some reject it). What
is cut is everything from the first made-up observation on:

    an `Observation` label at the start of a line       ...]\\n**Observation 1:** 42
      and Bee's `Tool Output:` (BeeAI's `Function       ...}\\nTool Output: {"results": 3}
      Output:`) and Semantic Kernel's `[OBSERVATION]`   ...}\\n[OBSERVATION]
    a capitalised `Observation:` later on a line        ACTION: add[2, 3] Observation: 5
    a partial label at the very end, at a line start    ACTION: add[2, 3]\\nObs
      or right after a closing bracket                  ACTION: add[2, 3] Observ

and never what the model wrote on purpose:

    an observation label that opens the reply (after    Observation: 89\\nThought: now the hotel
      any thinking or a fence's first line): the
      model echoing the last observation before its
      own Thought and Action (a made-up observation
      follows the model's own words, it does not
      open them)
    the inside of a <think> block, or of an unclosed    <think>the Observation: will say</think>
      <think> that runs to the end (and all before a lone </think>: its opening was in the prompt)
    the inside of a bracketed action input that closes  ACTION: python[print('Observation: done')]
    a label later on a line that is an answer or an     FINAL: the log said Observation: none
      Action Input                                      Action Input: print('Observation: done')
    a word at the end of a sentence                     FINAL: Streaming software: OBS

An input that never closes is cut like any other text: the parser then reads it as not closed
(`Action.closed` is False), and the loop does not run a truncated input. After passing over 64
labels written on purpose, the guard cuts at the next one: a reply that quotes the label that
often is junk, and the cost stays linear.

`protocol.STOP_SEQUENCES`, sent to servers as `stop`: a server cuts at them blindly, inside an input or an
answer alike, and what it cuts is lost for good; the guard here is the real cut and `stop` only
saves tokens. So each sequence is a whole observation label at the start of a line, where the
guard would cut too: the protocol's own `OBSERVATION:`, LangChain's `Observation:` and its bold
markdown form. The bare `Observation:` of earlier versions fired inside inputs and answers
(`python[print('Observation: done')]` ran as `print('`), and a prefix without its colon
("\\nObservation") fires on a line that starts with "Observations show"; a numbered label
("Observation 2:") is left to the guard. Three, under the Chat API's limit of four. (The one place
a server stops where the guard would not: a reply whose first line is blank and whose second echoes
the last observation. A reply that opens with the echo has no line break before it.) Bee's `Tool
Output:` and Semantic Kernel's `[OBSERVATION]` are left to the guard too.

All functions are pure and run in time linear in the input.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

import regex

from react_text.core import protocol
from react_text.core.protocol import DECOR, THINK_CLOSE, THINK_OPEN, fold_colons
from react_text.parser import quoted, windows

__all__ = [
    "SHORT",
    "Cut",
    "cut",
    "input_end",
    "is_cut",
    "split_reasoning",
    "stopped_in_thinking",
    "thinking",
]

# The observation words the guard cuts at, in any case: the protocol's and LangChain's ("Observation").
_WORD = protocol.OBSERVATION.casefold()
_OTHER = "" if _WORD == "observation" else "observation"  # LangChain's, when the protocol's is another word
_WORDS = (_WORD, _OTHER) if _OTHER else (_WORD,)
_OBSERVATION = "|".join("".join(f"[{c.upper()}{c}]" for c in w) for w in _WORDS)  # (?i) would make every search slow
if len(_WORDS) > 1:
    _OBSERVATION = f"(?:{_OBSERVATION})"
_INITIALS = "".join(f"{c.upper()}{c}" for c in [*sorted({w[0] for w in _WORDS}), "t", "f"])
# Searched in the text with full-width colons made ASCII (`protocol.fold_colons`).
_OUTPUT = "(?:[Tt][Oo][Oo][Ll]|[Ff][Uu][Nn][Cc][Tt][Ii][Oo][Nn])[ \t_]{1,3}[Oo][Uu][Tt][Pp][Uu][Tt]"
# "OBSERVATION (weather[Athens]):" names the call it answers (parallel actions).
_CALL = r"(?:[ \t]*+\([^\n]{0,300}?\))?"
# At a line start: the decoration is taken whole (no label starts with one of its characters), and
# only a line that goes on with a label's first letter is read further.
_LINE_LABEL = rf"(?m:^{DECOR}(?=[{_INITIALS}])(?:{_OBSERVATION}|{_OUTPUT})(?:[ \t]*\d{{1,4}})?{_CALL}[ \t*_]{{0,6}}:)"
_BRACKET_LABEL = rf"(?m:^{DECOR}\[{_OBSERVATION}(?:[ \t]*\d{{1,4}})?\])"
_INLINE_LABEL = rf"(?:{protocol.OBSERVATION}|Observation)(?:[ \t]*\d{{1,4}})?[ \t*_]{{0,4}}:"
# Three patterns, not one alternation, each searched only in its window (see `windows`), on `re`:
# faster than the regex module on these, short reply or long.
_LABELS = (
    windows.Window(re.compile(_LINE_LABEL), ":", ":", lines=True),
    windows.Window(re.compile(_INLINE_LABEL), ":", ":", lines=False),
    windows.Window(re.compile(_BRACKET_LABEL), "[", "]", lines=True),
)
SHORT = 4096  # characters: a reply up to this long may take the parser's canonical fast path
# A line whose text is an answer or an input: a label later on it is part of what was written.
_WRITTEN_LINE = re.compile(
    rf"(?i){DECOR}(?:{protocol.FINAL.casefold()}(?:[ \t_]+answer)?|answer|(?:action|tool|function)[ \t_]+input)"
    r"(?:[ \t]*\d{1,4})?[ \t*_]{0,6}[:：]"
)
# A label the stop sequence cut short, or the model stopped in the middle of: "Obs", "OBSERV" (a
# word's first three letters or more).
_PREFIXES = "|".join(f"{w[0]}(?:{'|'.join(w[1:n] for n in range(3, len(w) + 1))})" for w in _WORDS)
_PARTIAL = regex.compile(  # searched in reverse ((?r)): it is anchored at the end
    rf"(?r)(?:^|\n|\]){DECOR}(?i:{_PREFIXES})[ \t]*\d{{0,4}}[ \t*_]{{0,6}}$"
)
_BLANK = re.compile(r"\s*+")
_FENCE_LINE = re.compile(r"(?:`{3,}+|~{3,}+)[^\n`]{0,40}\n")
_TAIL = 64  # the partial pattern never spans more than this many characters
_STEM, _OTHER_STEM = _WORD[:3], _OTHER[:3]  # the least of a partial label
_SKIPS = 64  # labels passed over (in thinking, in inputs, in answers) before the guard cuts anyway
# Where a bracketed action input opens: an action label, a few words, then "[" or "(".
_INPUT_OPEN = windows.Window(
    re.compile(
        rf"(?:{protocol.ACTION}|Action|action|TOOL|Tool|tool)(?:[ \t]*\d{{1,4}})?[ \t*_]{{0,6}}:[^\[(\n:]{{0,80}}+[\[(]"
    ),
    first="[(",
    last="[(",
    lines=False,
)
# Each alternative opens with its bracket, so `re` skips to the brackets fast ("\[+|\]+" tries every place).
_BLOCK = 4096  # brackets are counted a block at a time; a block that cannot close the input is not scanned
_BRACKET_RUNS = {"[": re.compile(r"\[\[*+|\]\]*+"), "(": re.compile(r"\(\(*+|\)\)*+")}
_FENCE_OPEN = re.compile(r"[ \t]*\n?(?P<fence>`{3,})")
# Possessive: the runs of spaces on either side of the optional line break take all they can, so a
# long run of tabs is not split in every possible way before the closer is found missing.
_CLOSE_AFTER_FENCE = {c: re.compile(rf"[ \t]*+\n?+[ \t]*+{re.escape(c)}") for c in "])"}


@dataclass(frozen=True, slots=True)
class Cut:
    kept: str
    dropped: str  # "" when nothing was cut


def cut(text: str) -> Cut:
    """Cut `text` at the first made-up observation. Idempotent: cut(cut(t).kept) keeps the same."""
    spans = thinking(text)
    end = _first_label(fold_colons(text), 0, spans, pending=False)
    # Drop partial labels at the very end until none is left (each pass removes at least 3 chars).
    while not _inside(spans, end - 1) and _stem_in(text, end):
        tail = _PARTIAL.search(text, max(0, end - _TAIL), end)
        if tail is None:
            break
        # Keep a closing bracket that the partial pattern used as its left anchor.
        end = tail.start() + (1 if text[tail.start()] == "]" else 0)
    return Cut(text[:end], text[end:])


def is_cut(text: str, since: int = 0) -> bool:
    """Whether a full observation label begins in `text` at or after `since` (for streaming).

    Streaming callers pass `since` a little before the new chunk so each check costs the chunk's
    length, not the whole reply's. Thinking is ignored, and so is an action input still open (it
    may yet close).
    """
    return _first_label(fold_colons(text), max(0, since), thinking(text), pending=True) < len(text)


def split_reasoning(text: str) -> tuple[str, str]:
    """(the text inside think blocks, joined by newlines; the text with the blocks removed).

    An unclosed <think> runs to the end; everything before a lone </think> is reasoning.
    """
    inner: list[str] = []
    outer: list[str] = []
    pos = 0
    for start, end in thinking(text):
        outer.append(text[pos:start])
        body_start = start + len(THINK_OPEN) if text.startswith(THINK_OPEN, start) else start
        body_end = end - len(THINK_CLOSE) if text.endswith(THINK_CLOSE, 0, end) else end
        if body := text[body_start:body_end].strip():
            inner.append(body)
        pos = end
    outer.append(text[pos:])
    return "\n".join(inner), "".join(outer)


def stopped_in_thinking(text: str) -> bool:
    """Whether `text` ends inside an unclosed <think> block (the reply stopped mid-thought)."""
    opened = text.rfind(THINK_OPEN)
    return opened != -1 and text.find(THINK_CLOSE, opened) == -1


def thinking(text: str) -> list[tuple[int, int]]:
    """The (start, end) spans of the think blocks in `text`, tags included, in order.

    A block that never closes runs to the end; a lone </think> before any <think> makes a block of
    everything before it.
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    first_close = text.find(THINK_CLOSE)
    if first_close != -1:
        first_open = text.find(THINK_OPEN, 0, first_close)
        if first_open == -1:
            pos = first_close + len(THINK_CLOSE)
            spans.append((0, pos))
    while (start := text.find(THINK_OPEN, pos)) != -1:
        close = text.find(THINK_CLOSE, start + len(THINK_OPEN))
        if close == -1:
            spans.append((start, len(text)))
            break
        pos = close + len(THINK_CLOSE)
        spans.append((start, pos))
    return spans


def input_end(text: str, open_at: int, limit: int | None = None) -> int | None:
    """The index just past the bracket that closes the one at `open_at`, or None if none does.

    Brackets of the same kind are balanced; a fenced input (tool[```...```]) may hold unbalanced
    ones, and so may a quoted value (`quoted`: say["a]b"]). Only text before `limit` is read.
    """
    limit = len(text) if limit is None else limit
    opener = text[open_at]
    closer = "]" if opener == "[" else ")"
    pos = open_at + 1
    fence = _FENCE_OPEN.match(text, pos, min(limit, pos + 64))
    if fence is not None:
        ticks = fence.group("fence")
        end_fence = text.find("\n" + ticks, fence.end(), limit)
        if end_fence != -1:
            after = end_fence + 1 + len(ticks)
            m = _CLOSE_AFTER_FENCE[closer].match(text, after, limit)
            if m is not None:
                return int(m.end())
    end = _balanced_end(text, open_at, limit)
    if any(text.find(q, pos, limit if end is None else end) != -1 for q in quoted.QUOTES):
        found = quoted.quoted_end(text, open_at, limit)
        if found != quoted.UNREAD:
            return found
    return end


def _balanced_end(text: str, open_at: int, limit: int) -> int | None:
    """Just past the bracket that closes the one at `open_at`, brackets balanced as if there were no quotes."""
    opener = text[open_at]
    closer = "]" if opener == "[" else ")"
    pos = open_at + 1
    if text.find(closer, pos, limit) == -1:  # the common case of a 100 KB "[[[[": no scan
        return None
    depth = 1
    while pos < limit:
        end = min(limit, pos + _BLOCK)
        closers = text.count(closer, pos, end)
        if closers < depth:  # too few closers here to close it, whatever their order: step over
            depth += text.count(opener, pos, end) - closers
            pos = end
            continue
        for run in _BRACKET_RUNS[opener].finditer(text, pos, end):  # a run of brackets at a time
            size = run.end() - run.start()
            if text[run.start()] == opener:
                depth += size
            elif size >= depth:
                return int(run.start()) + depth
            else:
                depth -= size
        pos = end
    return None


def _stem_in(text: str, end: int) -> bool:
    """Whether the first three letters of an observation word, in any case, are in the last _TAIL
    characters before `end` (a partial label there may be)."""
    tail = text[max(0, end - _TAIL) : end].lower()
    return _STEM in tail or bool(_OTHER_STEM and _OTHER_STEM in tail)


def _inside(spans: list[tuple[int, int]], pos: int) -> bool:
    """Whether `pos` lies in one of the (sorted, disjoint) spans."""
    i = bisect.bisect_right(spans, pos, key=_start) - 1
    return i >= 0 and spans[i][0] <= pos < spans[i][1]


def _start(span: tuple[int, int]) -> int:
    return span[0]


def _inputs(text: str, spans: list[tuple[int, int]]) -> Iterator[tuple[int, int | None]]:
    """The bracketed action inputs, in order: (where the bracket opens, just past where it closes,
    or None for an input that never closes, which is the last one)."""
    pos = 0
    lasts: dict[str, int] = {}
    while (m := windows.search(_INPUT_OPEN, text, pos, lasts)) is not None:
        if _inside(spans, m.start()):
            pos = m.end()
            continue
        end = input_end(text, m.end() - 1)
        yield m.end() - 1, end
        if end is None:
            return
        pos = end


def _opening(text: str, spans: list[tuple[int, int]]) -> int:
    """Where the reply's own text begins: past leading whitespace, think blocks and the opening
    line of a fence around the reply."""
    pos = 0
    for start, end in spans:
        pos = _skip_blank(text, pos)
        if start > pos:
            break
        pos = end
    pos = _skip_blank(text, pos)
    fence = _FENCE_LINE.match(text, pos)
    return _skip_blank(text, fence.end()) if fence is not None else pos


def _skip_blank(text: str, pos: int) -> int:
    m = _BLANK.match(text, pos)
    return m.end() if m is not None else pos


def _first_label(text: str, since: int, spans: list[tuple[int, int]], *, pending: bool) -> int:
    """Where the first observation label at or after `since` starts that the guard cuts at, or len(text).

    `pending`: an input that has not closed (yet) protects what follows its bracket.
    """
    lowered = text[since:].lower()
    if _WORD not in lowered and "output" not in lowered and not (_OTHER and _OTHER in lowered):  # no label at all
        return len(text)
    found: list[tuple[int, re.Match[str] | None]] = [(-1, None)] * len(_LABELS)
    lasts: dict[str, int] = {}
    opening = _opening(text, spans)
    inputs: Iterator[tuple[int, int | None]] | None = None
    current: tuple[int, int | None] | None = None
    pos = since
    for _ in range(_SKIPS + 1):
        starts: list[tuple[int, int]] = []
        for i, label in enumerate(_LABELS):
            origin, m = found[i]
            if origin == -1 or (m is not None and m.start() < pos):  # a pattern that found none stays done
                m = windows.search(label, text, pos, lasts)
                found[i] = (pos, m)
            if m is not None:
                starts.append((m.start(), m.end()))
        if not starts:
            return len(text)
        at, label_end = min(starts)
        # Inside thinking: go on after the block.
        if _inside(spans, at):
            pos = spans[bisect.bisect_right(spans, at, key=_start) - 1][1]
            continue
        # The label that opens the reply echoes the last observation: go on after it.
        if at <= opening:  # (leading whitespace and thinking only before it)
            pos = label_end
            opening = -1
            continue
        # Later on a line that is an answer or an Action Input: go on at the next line.
        line_start = text.rfind("\n", 0, at) + 1
        if line_start < at and _WRITTEN_LINE.match(text, line_start, at):
            next_line = text.find("\n", at)
            pos = len(text) if next_line == -1 else next_line
            continue
        # Inside a bracketed input that closes (or, when pending, that has not closed yet).
        if inputs is None:
            inputs = _inputs(text, spans)
            current = next(inputs, None)
        while current is not None and current[1] is not None and current[1] <= at:
            current = next(inputs, None)
        if current is not None and current[0] < at:
            if current[1] is not None:
                pos = current[1]
                continue
            if pending:
                return len(text)
        return at
    return at  # past _SKIPS labels written on purpose, the next one is cut at: such a reply is junk
