"""Read a reply while it arrives: a pure machine, value in, value out, that says only what is certain.

    reader = StreamReader(Reader(chat=True))
    reader, events = reader.feed("THOUGHT: I need the sum\\nACT")   # Delta("label", "THOUGHT:"), ...
    reader, events = reader.feed("ION: add[2, 3]\\nOBSERVATION: 5")  # ..., ActionRead(0, add[2, 3])
    events = reader.finish(Reply(text))                              # what is left, from the final reading

The final word is `read_reply`, the episode's own reading of a complete reply (split the thinking,
cut at the guard, parse), so a streamed and an unstreamed run cannot disagree: the stream runs
behind that reading, never ahead of it. While the reply arrives, text is released once no later
byte can change it:

- a line's cut is decided once the line is complete (every label the guard cuts at is line-local,
  and an input still open only makes the cut of a prefix longer, never shorter); in the last line a
  possible partial label (`Obs`, `**Observation 12`, `OBSERVATION (add[2`) and a possible partial
  think tag (`<thi`) are held back, so a made-up observation is never released, split as it may be;
- a line's kind comes from the protocol's own labels at its start (`THOUGHT:`, `ACTION:`, `FINAL:`
  in any case, decorated, with either colon): "label", then the section's "thought", "action" or
  "answer"; it is decided once the line's start can no longer become one. A reply in another
  dialect streams as thought; its directive is read when the reply is read whole;
- thinking (a `<think>` block, or the server's reasoning channel, `feed(delta, reasoning=True)`)
  is released as "thinking" and never parsed; joined, it is the step's `reasoning`;
- actions are released (`ActionRead`) when the reading is final: the guard has found a made-up
  observation outside any open input (nothing after it is read), or the reply is complete.

One rule reads backwards: everything before a lone `</think>` is thinking (its opening was in the
prompt: Qwen3's template opens it). So visible text before the reply's first label is held until
that label (or the end), unless a `<think>` opened: a reply that thinks first and then closes
streams its thinking as thinking. A lone `</think>` after a label still turns what came before it
into thinking; then `Revised` carries the reading, which replaces what was released. A reply
without a lone `</think>` never gives `Revised`:
for every chunking of a reply, the events, adjacent deltas joined, are the same (tests/test_stream.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, replace
from typing import Literal

from react_text.core import protocol
from react_text.core.types import Action, Actions, Parser, Reading, Reply
from react_text.parser import guard, parse, several

__all__ = [
    "ActionRead",
    "Delta",
    "DeltaKind",
    "Read",
    "Reader",
    "Revised",
    "StreamEvent",
    "StreamReader",
    "Streamed",
    "joined",
    "read_reply",
]

DeltaKind = Literal["thinking", "label", "thought", "action", "answer"]


@dataclass(frozen=True, slots=True)
class Delta:
    """Text of the reply, in the order written: thinking, or kept visible text of a section."""

    kind: DeltaKind
    text: str


@dataclass(frozen=True, slots=True)
class ActionRead:
    """An action of the reply as the parser reads it (`index`: its place among the reply's actions)."""

    index: int
    action: Action


@dataclass(frozen=True, slots=True)
class Revised:
    """What was released of this reply is not what it came to (a lone `</think>`): these deltas replace it."""

    deltas: tuple[Delta, ...]


StreamEvent = Delta | ActionRead | Revised


# --- the reading of a complete reply: the episode's --------------------------------------------------


@dataclass(frozen=True, slots=True)
class Read:
    """A complete reply read: its thinking, its visible text, the guard's cut, what the parser read."""

    reasoning: str
    visible: str
    cut: guard.Cut
    read: str  # what the parser was given (a completion reply after the thought cue)
    parsed: Reading


@dataclass(frozen=True, slots=True)
class Reader:
    """How replies are read (what the episode's spec says): chat or a completion transcript, the
    parser, the tool names, parallel actions and how many."""

    chat: bool = True
    parser: Parser = parse
    tools: Collection[str] = ()
    parallel: bool = False
    most: int = 4


def read_reply(text: str, server_reasoning: str | None, reader: Reader) -> Read:
    """The reading of a complete reply, as a step records it."""
    reasoning, visible = guard.split_reasoning(text)
    reasoning = "\n".join(r for r in (server_reasoning or "", reasoning) if r)
    cut = guard.cut(visible)
    # A completion reply continues the thought cue; one that starts with a label at once
    # ("FINAL: 89") is read as if a space came first. (A prefilled chat reply holds its prefill.)
    cue = protocol.THOUGHT_CUE
    read = cut.kept if reader.chat else cue + ("" if cut.kept[:1].isspace() else " ") + cut.kept
    tools = tuple(reader.tools)
    parsed: Reading = (
        several.parse_several(read, tools=tools, most=reader.most, parser=reader.parser)
        if reader.parallel
        else reader.parser(read, tools=tools)
    )
    return Read(reasoning, visible, cut, read, parsed)


# --- what is certain of a reply so far ----------------------------------------------------------------

_TAGS = (protocol.THINK_OPEN, protocol.THINK_CLOSE)
_DECOR = re.compile(protocol.DECOR)
# The guard's label words at a line start (lower case; separators as one space), and after them what
# may still come before the colon: a number, a call in parentheses, decoration.
_LINE_WORDS = tuple(dict.fromkeys((protocol.OBSERVATION.lower(), "observation", "tool output", "function output")))
_LINE_REST = re.compile(r"[ \t]*+\d{0,4}[ \t]*+(?:\([^\n]{0,300})?[ \t*_\])]{0,8}")
_INLINE_WORDS: tuple[str, ...] = (protocol.OBSERVATION, "Observation")
_INLINE_REST = re.compile(r"[ \t]*+\d{0,4}[ \t*_]{0,4}")
_SEPARATORS = re.compile(r"[ \t_]+")
# The protocol's own labels, as a line's start: the section they open.
_SECTIONS: dict[str, DeltaKind] = {
    protocol.THOUGHT.lower(): "thought",
    protocol.ACTION.lower(): "action",
    protocol.FINAL.lower(): "answer",
}
_SECTION_LABEL = re.compile(
    rf"{protocol.DECOR}(?P<word>{'|'.join(_SECTIONS)})[ \t]*+:",
    re.IGNORECASE,
)


def _held_tag(text: str) -> int:
    """How many characters at the end of `text` could begin a think tag (held back)."""
    for size in range(min(len(text), len(protocol.THINK_CLOSE) - 1), 0, -1):
        tail = text[-size:]
        if any(tag.startswith(tail) for tag in _TAGS):
            return size
    return 0


def _may_become_label(line: str) -> bool:
    """Whether `line` (a line's text so far, without its line break) could still become a label the
    guard cuts at, or a partial one it drops at the end: a decorated prefix of a label word, or a
    word and what may come before its colon."""
    decor = _DECOR.match(line)
    rest = line[decor.end() if decor else 0 :]
    if rest.startswith("["):
        rest = rest[1:]  # "[OBSERVATION 2]": the word after the bracket
    return _word_and_rest(rest, case=False)


def _word_and_rest(text: str, *, case: bool) -> bool:
    """Whether `text` is a prefix of a label word, or a word and what may follow it before the colon
    (`case`: the inline words, in their own case; else the line words in any case)."""
    if case:
        words, rest, pattern = _INLINE_WORDS, text, _INLINE_REST
    else:
        words, rest, pattern = _LINE_WORDS, _SEPARATORS.sub(" ", text.lower()), _LINE_REST
    return any(
        word.startswith(rest) or (rest.startswith(word) and pattern.fullmatch(rest, len(word))) for word in words
    )


def _within(line: str) -> int:
    """Where a label could still begin inside the line so far (not at its start): after a "]"
    (a partial label there is dropped, in any case), or an inline `Observation 2` (cut once its
    colon comes); the index to hold back from, or len(line)."""
    held = len(line)
    at = line.find("]")
    while at != -1:
        decor = _DECOR.match(line, at + 1)
        if _word_and_rest(line[decor.end() if decor else at + 1 :], case=False):
            held = at + 1
            break
        at = line.find("]", at + 1)
    at = line.rfind("O", 0, held)
    while at != -1:
        if _word_and_rest(line[at:], case=True):
            held = at
        at = line.rfind("O", 0, at)
    return held


def _hold(kept: str) -> int:
    """How much of `kept` (the guard's cut of a reply so far) no later byte can take back: the last
    line is held while it may become a label, and with it its line break (the guard drops a partial
    label with the break before it, and then any partial label that this leaves at the end)."""
    pos = len(kept)
    while pos > 0:
        start = kept.rfind("\n", 0, pos) + 1
        line = kept[start:pos]
        if _may_become_label(line):
            pos = max(start - 1, 0)
            continue
        return start + _within(line)
    return 0


def _certain(text: str, reasoning: str) -> tuple[str, str, bool]:
    """Of a reply so far: its thinking and its kept visible text as far as no later byte changes them,
    and whether the guard's cut is certain (a made-up observation outside any open input)."""
    held = text[: len(text) - _held_tag(text)]
    inline, visible = guard.split_reasoning(held)
    thinking = "\n".join(r for r in (reasoning, inline) if r)
    kept = guard.cut(visible).kept
    if guard.is_cut(visible):
        return thinking, kept, True
    return thinking, kept[: _hold(kept)], False


@dataclass(frozen=True, slots=True)
class _Kinds:
    """The kinds of a reply's visible text, as far as they are decided: `marks` says where each kind
    begins; lines before `line` are complete and read, and so is the line at `line` when `open`
    (its kind is decided though it goes on); `section` is the kind in effect at `line`'s end."""

    marks: tuple[tuple[int, DeltaKind], ...] = ()
    line: int = 0
    open: bool = False
    section: DeltaKind = "thought"
    labelled: bool = False  # a label was read

    def read(self, visible: str, *, final: bool) -> tuple[_Kinds, int]:
        """These kinds with the lines of `visible` past them read, and how far kinds are decided."""
        marks, line, opened, section, labelled = list(self.marks), self.line, self.open, self.section, self.labelled
        while line < len(visible):
            end = visible.find("\n", line)
            line_end = len(visible) if end == -1 else end + 1
            if not opened:
                text = protocol.fold_colons(visible[line:line_end])
                label = _SECTION_LABEL.match(text)
                if label is not None:
                    _mark(marks, line, "label")
                    section = _SECTIONS[label.group("word").lower()]
                    _mark(marks, line + label.end(), section)
                    labelled = True
                elif end == -1 and not final and _may_open_section(text):
                    return _Kinds(tuple(marks), line, False, section, labelled), line  # not decided
                else:
                    _mark(marks, line, section)
            if end == -1:
                return _Kinds(tuple(marks), line, True, section, labelled), len(visible)
            line, opened = line_end, False
        return _Kinds(tuple(marks), line, False, section, labelled), len(visible)

    def deltas(self, visible: str, start: int, end: int) -> tuple[Delta, ...]:
        """`visible[start:end]` as deltas, split where a kind begins."""
        out: list[Delta] = []
        for i, (at, kind) in enumerate(self.marks):
            upto = self.marks[i + 1][0] if i + 1 < len(self.marks) else end
            lo, hi = max(at, start), min(upto, end)
            if lo < hi:
                out.append(Delta(kind, visible[lo:hi]))
        return tuple(out)


def _mark(marks: list[tuple[int, DeltaKind]], at: int, kind: DeltaKind) -> None:
    if marks and marks[-1][0] == at:
        marks[-1] = (at, kind)
    elif not marks or marks[-1][1] != kind:
        marks.append((at, kind))


def _may_open_section(line: str) -> bool:
    decor = _DECOR.match(line)
    rest = line[decor.end() if decor else 0 :].lower().rstrip(" \t")
    return any(word.startswith(rest) for word in _SECTIONS) if rest else len(line) <= 12


def _actions(parsed: Reading) -> tuple[Action, ...]:
    if isinstance(parsed, Actions):
        return parsed.actions
    return (parsed,) if isinstance(parsed, Action) else ()


# --- the machine ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StreamReader:
    """One reply being read. `feed` and `finish` return what became certain; nothing is mutated.

    Each delta costs a reading of the reply so far by the guard (linear, in C mostly), and of the
    new lines by the section labels; bench/stream_reader.py measures it."""

    reader: Reader = Reader()
    text: str = ""  # the reply's text so far
    reasoning: str = ""  # the server's reasoning channel so far
    thinking: str = ""  # the thinking released
    shown: str = ""  # the visible text released
    kinds: _Kinds = _Kinds()
    read: str = ""  # the visible text `kinds` were read over (a lone `</think>` can change it: read again)
    actions: int = 0  # actions released

    def feed(self, delta: str, *, reasoning: bool = False) -> tuple[StreamReader, tuple[StreamEvent, ...]]:
        """The reader after `delta` arrived (the server's reasoning channel when `reasoning`), and
        the events it made certain."""
        if not isinstance(delta, str):
            raise TypeError(f"a reply's delta is text, not {type(delta).__name__}")
        if not delta:
            return self, ()
        state = replace(self, reasoning=self.reasoning + delta) if reasoning else replace(self, text=self.text + delta)
        thinking, visible, final = _certain(state.text, state.reasoning)
        return state._release(thinking, visible, final=final)

    def finish(self, reply: Reply) -> tuple[StreamEvent, ...]:
        """What is left to release once the reply is complete (`reply` as the model returned it):
        the final reading's."""
        read = read_reply(reply.text, reply.reasoning, self.reader)
        return self._release(read.reasoning, read.cut.kept, final=True, parsed=read.parsed, end=True)[1]

    def _release(
        self, thinking: str, visible: str, *, final: bool, parsed: Reading | None = None, end: bool = False
    ) -> tuple[StreamReader, tuple[StreamEvent, ...]]:
        """Release what `thinking` and `visible` (certain) hold past what was released. `final`: the
        visible text is the reply's last word (its actions are read); `end`: the reply is complete,
        and what does not extend what was released is revised."""
        if not (visible.startswith(self.shown) and thinking.startswith(self.thinking)):
            if not end:  # not yet certain which way it goes: hold, the end says
                return self, ()
            kinds, _ = _Kinds().read(visible, final=True)
            revised = ((Delta("thinking", thinking),) if thinking else ()) + kinds.deltas(visible, 0, len(visible))
            state = replace(self, thinking=thinking, shown=visible, kinds=kinds, read=visible)
            return state._actions(parsed, [Revised(revised)])
        kinds, decided = (self.kinds if visible.startswith(self.read) else _Kinds()).read(visible, final=final)
        if not final and not kinds.labelled and protocol.THINK_OPEN not in self.text:
            decided = 0  # before the first label, text may yet be thinking whose opening was in the prompt
        events: list[StreamEvent] = (
            [Delta("thinking", thinking[len(self.thinking) :])] if thinking != self.thinking else []
        )
        shown = self.shown
        if decided > len(shown):
            events.extend(kinds.deltas(visible, len(shown), decided))
            shown = visible[:decided]
        state = replace(self, thinking=thinking, shown=shown, kinds=kinds, read=visible)
        return state._actions(parsed, events) if final else (state, tuple(events))

    def _actions(
        self, parsed: Reading | None, events: list[StreamEvent]
    ) -> tuple[StreamReader, tuple[StreamEvent, ...]]:
        if parsed is None:
            parsed = read_reply(self.text, self.reasoning, self.reader).parsed
        actions = _actions(parsed)
        events.extend(ActionRead(i, a) for i, a in enumerate(actions) if i >= self.actions)
        return replace(self, actions=len(actions)), tuple(events)


@dataclass(frozen=True, slots=True)
class Streamed:
    """What a stream of one reply comes to, whatever its chunking: its thinking, its visible text by
    kind (adjacent text of one kind joined), its actions; each `Revised` applied."""

    thinking: str
    visible: tuple[Delta, ...]
    actions: tuple[ActionRead, ...]


def joined(events: tuple[StreamEvent, ...]) -> Streamed:
    thinking = ""
    visible: list[Delta] = []
    actions: list[ActionRead] = []
    for event in events:
        if isinstance(event, Revised):
            thinking = "".join(d.text for d in event.deltas if d.kind == "thinking")
            visible = [d for d in event.deltas if d.kind != "thinking"]
        elif isinstance(event, ActionRead):
            actions.append(event)
        elif event.kind == "thinking":
            thinking += event.text
        elif visible and visible[-1].kind == event.kind:
            visible[-1] = Delta(event.kind, visible[-1].text + event.text)
        elif event.text:
            visible.append(event)
    return Streamed(thinking, tuple(visible), tuple(actions))
