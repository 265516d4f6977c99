"""What a run sends: the opening, then each step's reply and observation, as the model sees them.

Chat models get a list of messages (the reply as the assistant's, the observation as the user's);
completion models get one transcript that ends with the thought cue (`protocol.THOUGHT_CUE`), which
they continue. Entries are only appended, so what is sent grows at the end and server-side prompt
caches keep hitting, until the history outgrows the model's context window: then the oldest
observations are elided (each replaced by a one-line note), then the oldest replies are cut to
their directive line, then the oldest steps are folded into one pair of messages after the opening
that lists their calls (an elided step still costs two messages; a fold of many costs a few tokens
a step); the opening (instructions and task) and the latest step always stay. Each rewrite makes
what it replaces shorter, or is not made. Each entry's tokens are counted once, when it is written.

A text counts at least its length at the opening's density (its tokens per character): tiktoken
reads some text (a Latin page, long runs of one word) in far fewer tokens a character than the
instructions, where a server's tokenizer may not, and the server has counted only the opening
when the first tool output is sent. Scaled by what the server reports (`budget.Meter`), each text
is then estimated by the larger of its tiktoken count and its length, each at the rate the
server has shown.

The history keeps its own token account, `meter` (budget.Meter): every change to what is sent (a
reply, an observation, a note, an elision, a fold) is told to the meter by the change itself, so the
estimate of the next request in the server's units (`meter.estimate(history.tokens)`) is right after any of them, and
nothing outside has to keep the two in step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from react_text import prompting
from react_text.core.protocol import ACTION_LABEL, THOUGHT_CUE
from react_text.core.types import Message, Role
from react_text.tokens.meter import MESSAGE_OVERHEAD, REPLY_PRIMING, Cut, Meter

__all__ = [
    "History",
]

_NOTE_SEPARATOR = "\n\n"
_Kind = Literal["opening", "reply", "observation", "note", "fold"]


@dataclass(slots=True)
class _Entry:
    kind: _Kind
    role: Role
    text: str  # the message content (chat) or the transcript piece (completion)
    tokens: int  # its local count, framing included
    step: int  # 0 for the opening
    short: str = ""  # a reply's directive line, what is left of it when it is elided
    written: int = 0  # the meter's tick when its text was written (`Meter.holds`)
    server: int | None = None  # a reply's cost by the server's count, when it said (its usage)
    elided: bool = False
    message: Message = field(init=False)  # the text as a chat message, made once
    shrunk: tuple[str, int] | None = field(init=False, default=None)  # its elided text and cost, once made

    def __post_init__(self) -> None:
        self.message = Message(self.role, self.text)

    def rewrite(self, text: str, tokens: int) -> None:
        self.text, self.tokens, self.message = text, tokens, Message(self.role, text)
        self.shrunk = None
        self.server = None  # the server's count was of the text replaced


class History:
    """The conversation of one run, kept as entries with their token counts, and its token account."""

    def __init__(
        self, opening: tuple[Message, ...] | str, count: Callable[[str], int], counted: Mapping[str, int] | None = None
    ) -> None:
        """`counted`: texts whose `count` is known already (the agent's instruction block)."""
        self.chat = not isinstance(opening, str)
        self._count = count
        self._entries: list[_Entry] = []
        texts = [opening] if isinstance(opening, str) else [m.content for m in opening]
        known = counted or {}
        tokens = [known[t] if t in known else count(t) for t in texts]  # each opening text counted once
        chars = sum(len(t) for t in texts)
        self.density = sum(tokens) / chars if chars else 0.0  # the opening's tokens a character
        self._sent: list[Message] = []  # each entry's message, in order: what prompt() copies at C speed
        self._pieces: list[str] = []  # each entry's text, in order (a transcript joins them; a fold rebuilds both)
        self._last: tuple[tuple[str, bool], tuple[str, int]] | None = None  # the last observation priced
        self.meter = Meter()  # what was billed, and the next request in the server's units
        if isinstance(opening, str):
            self._add("opening", "user", opening, 0, tokens=self._framed(opening, tokens[0]))
            self.tokens = count(THOUGHT_CUE)  # the cue every request ends with
        else:
            self.tokens = REPLY_PRIMING
            for message, counted_tokens in zip(opening, tokens, strict=True):
                self._add(
                    "opening", message.role, message.content, 0, tokens=self._framed(message.content, counted_tokens)
                )
        self.tokens += sum(e.tokens for e in self._entries)
        self._folded = 0  # steps 1 to this one are folded into the pair of entries after the opening
        self._fold_calls: tuple[str, ...] = ()  # their calls, oldest first
        self._elided: tuple[int, ...] | None = ()  # `elided`, once made (None: to be made again)

    # --- writing ----------------------------------------------------------------------------------

    def _cost(self, text: str) -> int:
        """The local count of `text`: its tokens, but at least its length at the opening's density."""
        return self._framed(text, self._count(text))

    def _framed(self, text: str, tokens: int) -> int:
        """`_cost` of `text`, whose count is `tokens`."""
        return max(tokens, math.ceil(len(text) * self.density)) + (MESSAGE_OVERHEAD if self.chat else 0)

    def _add(
        self,
        kind: _Kind,
        role: Role,
        text: str,
        step: int,
        short: str = "",
        tokens: int | None = None,
        server: int | None = None,
    ) -> int:
        cost = self._cost(text) if tokens is None else tokens
        entry = _Entry(kind, role, text, cost, step, short, self.meter.clock, server)
        self._entries.append(entry)
        self._sent.append(entry.message)
        self._pieces.append(entry.text)
        return entry.tokens

    def add_reply(self, text: str, step: int, directive: str = "", *, server: int | None = None) -> int:
        """Record what the model wrote (what was acted on); returns its local cost. `directive`
        is its directive line, kept when the reply is elided; `server`, its cost in the server's
        tokens when the server said (its completion tokens, and the framing)."""
        if self.chat:
            piece = text.strip()
        elif text.lstrip().startswith(THOUGHT_CUE):  # the model wrote the label again (after a <think> block)
            piece = f"{text.strip()}\n"
        else:
            piece = f"{THOUGHT_CUE}{text.rstrip()}\n"
        cost = self._add("reply", "assistant", piece, step, directive, server=server)
        self.tokens += cost
        self.meter.appended(cost, server)
        return cost

    def add_observation(self, observation: str, step: int, *, labelled: bool = False) -> int:
        """Record what is fed back after a step; returns its local cost. `labelled`: the text holds
        its own OBSERVATION labels (the calls of one reply, `prompting.observations_message`)."""
        piece, cost = self._priced(observation, labelled)
        self._add("observation", "user", piece, step, tokens=cost)
        self.tokens += cost
        self.meter.appended(cost)
        return cost

    def add_note(self, note: str) -> int:
        """A word from the loop after the last observation (the forced-final request); its cost.

        In a chat it joins the last user message, so user and assistant turns keep alternating
        (some chat templates refuse two user turns in a row).
        """
        last = self._entries[-1]
        if self.chat and last.role == "user":
            text = f"{last.text}{_NOTE_SEPARATOR}{note}"
            cost = self._cost(text) - last.tokens
            self._rewrite(len(self._entries) - 1, text, last.tokens + cost)
        else:
            cost = self._add("note", "user", note if self.chat else f"{note}\n", last.step)
        self.tokens += cost
        self.meter.appended(cost)
        return cost

    def note_cost(self, note: str) -> int:
        """What `add_note(note)` would cost (at most). In a chat whose last message is the user's
        the note joins it: no message's framing, but a token where the two texts meet."""
        joins = self.chat and self._entries[-1].role == "user"
        return self._cost(f"{_NOTE_SEPARATOR}{note}") - (MESSAGE_OVERHEAD - _SEAM if joins else 0)

    def observation_piece(self, observation: str, *, labelled: bool = False) -> str:
        text = observation.strip("\n") if labelled else prompting.observation_message(observation)
        return text if self.chat else f"{text}\n"

    def cost(self, observation: str, *, labelled: bool = False) -> int:
        """What recording this observation would cost, without recording it."""
        return self._priced(observation, labelled)[1]

    def _priced(self, observation: str, labelled: bool) -> tuple[str, int]:
        """The observation as recorded, and its cost: made once for the observation last priced
        (the plan prices an observation, and the warning that may wrap it, before it is recorded)."""
        key = (observation, labelled)
        if self._last is None or self._last[0] != key:
            piece = self.observation_piece(observation, labelled=labelled)
            self._last = (key, (piece, self._cost(piece)))
        return self._last[1]

    # --- reading ----------------------------------------------------------------------------------

    def prompt(self) -> tuple[Message, ...] | str:
        if self.chat:
            return tuple(self._sent)
        return "".join(self._pieces) + THOUGHT_CUE

    def transcript(self) -> tuple[Message, ...] | str:
        if self.chat:
            return tuple(self._sent)
        return "".join(self._pieces)

    def continued(self, partial: str) -> str:
        """The completion prompt continued by `partial` (a reply cut short, to be carried on)."""
        if self.chat:
            raise ValueError("a chat history is not continued: a chat model is asked again")
        return f"{self.prompt()}{partial}"

    @property
    def messages(self) -> int:
        """How many chat messages are sent (0 for a completion model: one transcript)."""
        return len(self._entries) if self.chat else 0

    def last_step(self) -> int:
        """The local tokens of the latest step's reply and observation (0 before the first)."""
        step = self._entries[-1].step
        return sum(e.tokens for e in self._entries if e.step == step and step > 0 and e.kind != "note")

    def floor(self, keep_from: int) -> int:
        """The local count once everything that `elide(0, keep_from)` would elide and fold is: the
        least this history can be made to cost while step `keep_from` and later stay whole."""
        return self._floor(keep_from)[0]

    def floor_estimate(self, keep_from: int, extra_local: int = 0) -> int:
        """The estimate of the prompt (and `extra_local` more local tokens) at `floor(keep_from)`:
        what the meter would say after that elision, without making it."""
        least, cut = self._floor(keep_from)
        return self.meter.after_cut(cut, least, extra_local)

    def _floor(self, keep_from: int) -> tuple[int, Cut]:
        cut = Cut()
        elided = {id(e): min(e.tokens, self._shrunk(e)[1]) for e in self._entries if self._elidable(e, keep_from)}
        least = self.tokens - sum(e.tokens - elided.get(id(e), e.tokens) for e in self._entries)
        folded = self._fold_plan(self._foldable(keep_from))
        replaced: list[_Entry] = []
        if folded is not None:
            fold, replaced, _ = folded
            before = sum(elided.get(id(e), e.tokens) for e in replaced)
            after = sum(e.tokens for e in fold)
            if before - after >= _ELIDE_MIN_SAVING:
                least -= before - after
                self._replaced(cut, replaced, after)
            else:
                replaced = []
        gone = {id(e) for e in replaced}
        for entry in self._entries:
            after = elided.get(id(entry), entry.tokens)
            if id(entry) not in gone and after < entry.tokens:
                cut.add(self.meter.holds(entry.written), entry.tokens, entry.server, after)
        return least, cut

    def _replaced(self, cut: Cut, replaced: list[_Entry], after: int) -> None:
        """Tell `cut` of `replaced` entries that a fold of `after` local tokens replaces: the fold
        counted with the base if any of them is in it (the bound then covers it), else apart."""
        held = any(self.meter.holds(e.written) for e in replaced)
        for entry in replaced:
            cut.add(self.meter.holds(entry.written), entry.tokens, entry.server, 0)
        cut.add(held, 0, None, after)

    def step_floor(self, step: int) -> int:
        """The local cost of step `step` (its reply and observation) elided as far as it can be; 0
        when there is no such step."""
        if step <= 0:
            return 0
        return sum(
            min(e.tokens, self._shrunk(e)[1]) if not e.elided else e.tokens
            for e in self._entries
            if e.step == step and e.kind in ("reply", "observation")
        )

    @property
    def elided(self) -> tuple[int, ...]:
        """The steps something was elided from (a folded step, all of it); made again only after an
        elision or a fold (it is asked before every call)."""
        if self._elided is None:
            steps = {e.step for e in self._entries if e.elided} | set(range(1, self._folded + 1))
            self._elided = tuple(sorted(steps))
        return self._elided

    # --- making room ------------------------------------------------------------------------------

    def elide(self, target: int, keep_from: int) -> bool:
        """Elide the oldest content until the local count is at most `target`; True if anything was.

        Observations go first, oldest first, then replies are cut to their directive line, then the
        oldest steps are folded; nothing of step `keep_from` or later, and nothing of the opening,
        is touched. The meter is told of all of it at once.
        """
        cut = Cut()
        changed = self._elide(target, keep_from, cut)
        if changed:
            self.meter.rewritten(cut, self.tokens)
        return changed

    def _elide(self, target: int, keep_from: int, cut: Cut) -> bool:
        changed = False
        for kind in ("observation", "reply"):
            for index, entry in enumerate(self._entries):
                if self.tokens <= target:
                    return changed
                if entry.kind == kind and self._elidable(entry, keep_from):
                    changed = self._shrink(index, cut) or changed
        for last in range(self._folded + 1, self._foldable(keep_from) + 1):
            if self.tokens <= target:
                return changed
            changed = self._fold(last, cut) or changed
        return changed

    # --- folding: the oldest steps as one pair of messages ------------------------------------------

    def _foldable(self, keep_from: int) -> int:
        """The last step a fold may take in: before `keep_from`, and never the latest step (a note
        may have joined its observation)."""
        return min(keep_from, self._entries[-1].step) - 1

    def _fold_plan(self, last: int) -> tuple[list[_Entry], list[_Entry], tuple[str, ...]] | None:
        """The entries that would fold steps 1 to `last`, those they would replace, and the calls
        they list; None when there is nothing new to fold or a step holds more than its reply and
        observation."""
        if last <= self._folded:
            return None
        replaced = [e for e in self._entries if e.kind == "fold" or (e.kind != "opening" and e.step <= last)]
        if any(e.kind not in ("fold", "reply", "observation") for e in replaced):
            return None
        calls = self._fold_calls + tuple(
            line.removeprefix(f"{ACTION_LABEL} ")
            for e in replaced
            if e.kind == "reply"
            for line in e.short.splitlines()
            if line.strip()
        )
        said = prompting.render("history/folded_steps", first=1, last=last, calls=_calls_words(calls))
        # The fold is counted where what it replaces was (`_replaced`): in the base if any of it is.
        written = min(e.written for e in replaced) if replaced else self.meter.clock
        results = self.observation_piece(prompting.render("history/folded_results"))
        if not self.chat:
            said = f"{THOUGHT_CUE} {said}\n"
        fold = [
            _Entry("fold", "assistant", said, self._cost(said), last, written=written),
            _Entry("fold", "user", results, self._cost(results), last, written=written),
        ]
        return fold, replaced, calls

    def _fold(self, last: int, cut: Cut) -> bool:
        """Fold steps 1 to `last` into one pair of entries after the opening, if that saves tokens."""
        planned = self._fold_plan(last)
        if planned is None:
            return False
        fold, replaced, calls = planned
        saving = sum(e.tokens for e in replaced) - sum(e.tokens for e in fold)
        if saving < _ELIDE_MIN_SAVING:
            return False
        self._replaced(cut, replaced, sum(e.tokens for e in fold))
        gone = {id(e) for e in replaced}
        opening = [e for e in self._entries if e.kind == "opening"]
        self._entries = opening + fold + [e for e in self._entries if e.kind != "opening" and id(e) not in gone]
        self._sent = [e.message for e in self._entries]  # the entries moved: the prompt lists follow them
        self._pieces = [e.text for e in self._entries]
        self.tokens -= saving
        self._folded = last
        self._fold_calls = calls
        self._elided = None
        return True

    def _elidable(self, entry: _Entry, keep_from: int) -> bool:
        return entry.kind in ("observation", "reply") and not entry.elided and 0 < entry.step < keep_from

    def _shrink(self, index: int, cut: Cut) -> bool:
        entry = self._entries[index]
        text, cost = self._shrunk(entry)
        if entry.tokens - cost < _ELIDE_MIN_SAVING:  # a note no shorter than the step: not worth the prefix
            return False
        cut.add(self.meter.holds(entry.written), entry.tokens, entry.server, cost)
        self.tokens += cost - entry.tokens
        self._rewrite(index, text, cost)
        entry.elided = True
        self._elided = None
        return True

    def _rewrite(self, index: int, text: str, tokens: int) -> None:
        entry = self._entries[index]
        entry.rewrite(text, tokens)
        self._sent[index], self._pieces[index] = entry.message, entry.text

    def _shrunk(self, entry: _Entry) -> tuple[str, int]:
        """The entry's text once elided, and its cost (made once: the note depends on nothing that changes)."""
        if entry.shrunk is None:
            entry.shrunk = self._elide_text(entry)
        return entry.shrunk

    def _elide_text(self, entry: _Entry) -> tuple[str, int]:
        if entry.kind == "observation":
            action = next((e.short for e in self._entries if e.kind == "reply" and e.step == entry.step), "")
            source = action.removeprefix(f"{ACTION_LABEL} ") or f"step {entry.step}"
            if len(source) > _DIRECTIVE_MAX:
                source = source[: _DIRECTIVE_MAX - 1] + "…"
            note = prompting.render("history/elided_observation", source=source, tokens=entry.tokens)
            text = self.observation_piece(note)
        else:
            short = entry.short if len(entry.short) <= _DIRECTIVE_MAX else entry.short[: _DIRECTIVE_MAX - 1] + "…"
            text = "\n".join(p for p in (prompting.render("history/elided_reply"), short) if p)
            if not self.chat:
                text = f"{THOUGHT_CUE} {text}\n"
        return text, self._cost(text)


def _calls_words(calls: tuple[str, ...]) -> str:
    """The calls of folded steps, as one line: the latest that fit in `_FOLD_CALLS_MAX` characters,
    and how many earlier ones there were."""
    if not calls:
        return "none"
    kept: list[str] = []
    size = 0
    for call in reversed(calls):
        call = call if len(call) <= _DIRECTIVE_MAX else call[: _DIRECTIVE_MAX - 1] + "…"
        size += len(call) + 2
        if kept and size > _FOLD_CALLS_MAX:
            break
        kept.append(call)
    earlier = len(calls) - len(kept)
    words = ", ".join(reversed(kept))
    return f"{earlier} earlier, then {words}" if earlier else words


_FOLD_CALLS_MAX = 600  # characters of the calls a fold lists (the latest kept): its cost stays bounded
_DIRECTIVE_MAX = 200  # characters of a directive line kept when a reply is elided
_SEAM = 1  # tokens two texts joined may count beyond the two counted apart (a merge where they meet)
_ELIDE_MIN_SAVING = 1  # tokens an elision must save (a note as long as the step would only cost the cache)
