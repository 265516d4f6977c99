"""One model call of a run, and the reading of its reply: what the episode does between deciding to
ask the model and knowing what it wrote.

    asked = yield from asker.ask(number, allowance, forced=False)   # Asked, Ending or WINDOW

The request (the history as sent, the stop sequences, the grammar for this call: the forced call's
admits only FINAL, under `act_first` the first calls only an ACTION), the one retry of a request
refused as too long (the token account plans it), a reply that a stop sequence cut inside its
thinking carried on, and the reply read: its thinking apart, cut once by the guard at a made-up
observation (the parser reads what was kept and does not cut again), parsed, and recorded as the
model's turn. It performs no I/O: it yields `Send` and is sent what came of it.
"""

from __future__ import annotations

import typing
from collections.abc import Collection, Generator
from dataclasses import dataclass

from react_text.core import protocol
from react_text.core.commands import Command, Event, Failed, Replied, Send
from react_text.core.errors import ContextLengthError, scrub
from react_text.core.rules import RULES
from react_text.core.spec import EpisodeSpec
from react_text.core.types import (
    Action,
    Actions,
    Final,
    Message,
    Parsed,
    Parser,
    Reading,
    Reply,
    Request,
    Step,
    StopReason,
    Usage,
)
from react_text.grammar.protocol import protocol_grammar
from react_text.parser import guard, parse, several
from react_text.parser.baselines import parse_strict
from react_text.parser.reading import parse_cut
from react_text.tokens.account import WINDOW, Account, Window

__all__ = [
    "Asked",
    "Asker",
    "Ending",
]


@dataclass(frozen=True, slots=True)
class Asked:
    """What asking the model for one step came to: the step, the reply read, whether it was cut off."""

    step: Step
    parsed: Reading
    truncated: bool  # the reply hit its allowance


@dataclass(frozen=True, slots=True)
class Ending:
    """How a run ends, before its result is made of the steps taken: why, the answer, and whether
    the forced final call gave it."""

    reason: StopReason
    answer: str | None = None
    forced: bool = False
    error: str | None = None


class Asker:
    """Asks the model for the steps of one run, as `spec` says, and records each reply in `account`."""

    def __init__(self, spec: EpisodeSpec, account: Account, seed: int | None) -> None:
        self.spec = spec
        self.account = account
        self.seed = seed
        self.limits = spec.limits
        self.chat = spec.api == "chat"
        self.names = tuple(t.name for t in spec.tools)
        self.parser = _READS_CUT.get(spec.parser, spec.parser)
        self.send_stop = True  # until a stop sequence fires inside a chat model's thinking
        style = spec.prompting
        self.parallel = style.parallel
        actions = self.limits.actions if self.parallel else 1
        # A chat model that continues a turn already begun has it begun with the thought cue, as a
        # completion transcript ends with it; either way the grammar starts after the cue.
        self.prefill = protocol.THOUGHT_CUE if self.chat and spec.prefill else ""
        cued = not self.chat or bool(self.prefill)
        # each tool's input constrained by what it takes (grammar_inputs)
        tools, use_grammar = spec.tools, spec.grammar
        self.grammar = protocol_grammar(tools, after_cue=cued, actions=actions) if use_grammar else None
        self.first_grammar = (
            protocol_grammar(tools, after_cue=cued, final=False, actions=actions)
            if use_grammar and style.act_first
            else self.grammar
        )
        self.final_grammar = protocol_grammar((), after_cue=cued) if use_grammar else None

    def ask(
        self, number: int, allowance: int, *, forced: bool, first: bool = False
    ) -> Generator[Command, Event, Asked | Ending | Window]:
        """Ask the model for step `number` (`first`: before any tool has run), with one retry of a
        request refused as too long: the step, or how the run ends (the model failed). WINDOW: a
        normal call was refused and no retry of it fits, but the forced final call does (the server
        counted the latest step longer than we could know: its text was of a kind it had not
        counted yet)."""
        elided = self.account.elided
        seconds = 0.0
        retried = False
        while True:
            self.account.asking()
            request = self._request(allowance, forced=forced, first=first)
            event = typing.cast("Replied | Failed", (yield Send(request)))  # as checked
            seconds += event.seconds
            if isinstance(event, Replied):
                break
            if isinstance(event.error, ContextLengthError) and not retried:
                retried = True
                again = self.account.refused(number, forced=forced, allowance=allowance, error=event.error)
                if again is not None:
                    elided, allowance = self.account.elided, again
                    continue
                ends = not forced and self.limits.force_final and self.account.window is not None
                if ends and self.account.forced(number, WINDOW, squeeze=True)[0] is not None:
                    return WINDOW
            return Ending("model_error", error=scrub(str(event.error)))
        reply = event.reply
        usage = self.account.bill(reply)
        reply, usage, seconds = yield from self._recover_thinking(reply, usage, seconds, allowance, forced, first)
        reasoning, visible = guard.split_reasoning(reply.text)
        reasoning = "\n".join(r for r in (reply.reasoning or "", reasoning) if r)
        # A completion reply continues the thought cue; one that starts with a label at once
        # ("FINAL: 89") is read as if a space came first. (A prefilled chat reply holds its prefill.)
        cue = protocol.THOUGHT_CUE
        written = visible if self.chat else cue + ("" if visible[:1].isspace() else " ") + visible
        cut = guard.cut(written)  # the reply's one cut: what it keeps is read, and not cut again
        read = cut.kept
        parser = self.parser
        parsed: Reading = (
            several.parse_several(read, tools=self.names, most=self.limits.actions, parser=parser)
            if self.parallel
            else parser(read, tools=self.names)
        )
        acted = _acted(read, parsed)
        if not self.chat:
            acted = acted.removeprefix(cue)
        if self.spec.prompting.reasoning == "keep" and reasoning:
            acted = f"{protocol.THINK_OPEN}\n{reasoning}\n{protocol.THINK_CLOSE}\n{acted.lstrip()}"
        directive = protocol.directive_line(parsed)
        self.account.add_reply(acted, number, directive, usage=usage, reported=reply.usage is not None)
        step = Step(
            number=number,
            reply=reply.text,
            parsed=parsed,
            observation=None,
            usage=usage,
            total_usage=self.account.billed,
            seconds=seconds,
            cut=cut.dropped,
            forced=forced,
            reasoning=reasoning,
            finish_reason=reply.finish_reason,
            elided=elided,
        )
        return Asked(step, parsed, reply.finish_reason == "length")

    def _recover_thinking(
        self, reply: Reply, usage: Usage, seconds: float, allowance: int, forced: bool, first: bool
    ) -> Generator[Command, Event, tuple[Reply, Usage, float]]:
        """A `stop` sequence that fired inside the model's thinking cut the reply short: carry on.

        A completion model continues the same text, with no stop sequences; a chat model is asked
        again, and `stop` is not sent again in this run (the client-side cut still applies).
        """
        if reply.finish_reason == "length" or not self.send_stop:
            return reply, usage, seconds
        # (the reply split into thinking and the rest only when the server sent reasoning apart)
        blank = bool(reply.reasoning) and not guard.split_reasoning(reply.text)[1].strip()
        if not (blank or guard.stopped_in_thinking(reply.text)):
            return reply, usage, seconds
        self.send_stop = False
        prompt = self.account.prompt() if self.chat else self.account.continued(reply.text)
        room = self.account.resume(allowance, forced=forced, written=0 if self.chat else usage.completion_tokens)
        if room is None:
            return reply, usage, seconds
        request = self._request(room, forced=forced, first=first, prompt=prompt)
        event = typing.cast("Replied | Failed", (yield Send(request)))  # as checked
        seconds += event.seconds
        if isinstance(event, Failed):
            return reply, usage, seconds
        again = event.reply
        more = self.account.bill(again)
        if self.chat:
            return again, usage + more, seconds
        reasoning = "\n".join(r for r in (reply.reasoning, again.reasoning) if r) or None
        return Reply(reply.text + again.text, again.usage, again.finish_reason, reasoning), usage + more, seconds

    def _request(
        self, allowance: int, *, forced: bool, first: bool, prompt: tuple[Message, ...] | str | None = None
    ) -> Request:
        # The forced final call admits only FINAL; under act_first, the first calls only an ACTION.
        grammar = self.final_grammar if forced else self.first_grammar if first else self.grammar
        stop = (
            (protocol.STOP_SEQUENCES + protocol.PARALLEL_STOP if self.parallel else protocol.STOP_SEQUENCES)
            if self.send_stop
            else ()
        )
        return Request(
            self.account.prompt() if prompt is None else prompt,
            stop,
            allowance,
            grammar,
            self.seed,
            self.prefill,
            RULES,
        )


def _strict_cut(text: str, *, tools: Collection[str] = ()) -> Parsed:
    return parse_cut(text, strict=True, tools=tools)


# The parsers that cut a reply themselves, and each as it reads a reply the guard has cut already
# (another parser is handed the cut reply as it is).
_READS_CUT: dict[Parser, Parser] = {parse: parse_cut, parse_strict: _strict_cut}


def _acted(text: str, parsed: Reading) -> str:
    """The reply up to the end of its first directive (its last action, for Actions): what is
    recorded as the model's turn."""
    if isinstance(parsed, Action | Actions | Final) and parsed.discarded and text.endswith(parsed.discarded):
        return text[: len(text) - len(parsed.discarded)]
    return text
