"""What the model's actions come to: the tool found (by name, else ignoring case, else a suggestion
of the closest), a repeat answered from the earlier call, a risky call put to the approver, the
input bound to arguments, and what the call came to, cut to its allowance, as the observation.

    acted = yield from actor.act(action, number)          # (observation, seconds), or None: stop
    acted = yield from actor.act_all(actions, number)     # (Framed observations, seconds), or None

A pure tool's successful call (or an idempotent one's, while nothing with side effects ran since)
is remembered: a repeat of it is answered with the earlier result, in words, and not run again.
Several actions of one reply run at once (`InvokeAll`); a repeat within the reply is answered from
its twin. It performs no I/O: it yields `Approve`, `Invoke` and `InvokeAll`.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Generator, Sequence

from react_text import prompting
from react_text.core import protocol
from react_text.core.commands import (
    Approval,
    Approve,
    Command,
    Decided,
    Deny,
    Edit,
    Event,
    Invoke,
    InvokeAll,
    Ran,
    RanAll,
)
from react_text.core.repeats import Call, Streak
from react_text.core.spec import EpisodeSpec
from react_text.core.types import Action, Actions
from react_text.tokens.account import Account
from react_text.tokens.truncation import Framed
from react_text.tools import binding
from react_text.tools.tool import Tool

__all__ = [
    "Actor",
]


class Actor:
    """Carries out the actions of one run, as `spec` says; results are cut by `account`."""

    def __init__(self, spec: EpisodeSpec, account: Account) -> None:
        self.spec = spec
        self.account = account
        self.limits = spec.limits
        tools = spec.tools
        self.names = tuple(t.name for t in tools)
        self.by_name = {t.name.casefold(): t for t in reversed(tools)} | {t.name: t for t in tools}
        self.done: dict[tuple[str, str], tuple[int, str]] = {}  # successful calls of pure tools: repeats
        self.tool_calls = 0
        self.streak = Streak(self.limits.repeats)  # identical calls in a row (repeats.py)
        self.in_a_row: tuple[int, ...] = ()  # of the reply being acted on: each call's place in its run
        self.edited: list[Invoke] = []  # calls an approver edited: not what the model wrote, so not remembered

    def act(self, action: Action, number: int) -> Generator[Command, Event, tuple[str, float] | None]:
        """Run the action, or say why not: the observation and the tool's time; None to stop the run."""
        prepared = yield from self._prepare(action)
        if not isinstance(prepared, Invoke):
            return None if prepared is None else (prepared, 0.0)
        ran = typing.cast("Ran", (yield prepared))  # as checked (commands.check)
        return self._noted(self._settle(prepared, action, ran, number), prepared, action, 0), ran.seconds

    def _prepare(self, action: Action) -> Generator[Command, Event, Invoke | str | None]:
        """The call to make for `action`, or the observation that says why none is made; None to stop."""
        chosen = self._tool(action.tool)
        if chosen is None:
            return self._unknown(action.tool)
        key = (chosen.name, action.input)
        if _remembered(chosen) and key in self.done:  # a tool with side effects runs again: that may be the point
            step, result = self.done[key]
            return prompting.render(
                "corrections/repeated_action", tool=chosen.name, input=action.input, step=step, result=result
            )
        arguments = binding.bind(chosen, action.input)
        if isinstance(arguments, binding.Refusal):
            return arguments.message
        if chosen.risky:
            decision: Approval = False
            if self.spec.asks_approval:
                decided = typing.cast("Decided", (yield Approve(chosen, action)))  # as checked
                decision = decided.approval
            if isinstance(decision, Deny):  # a no with a reason (a decision made later, say)
                return prompting.render(
                    "corrections/denied", tool=chosen.name, input=action.input, reason=decision.reason
                )
            if isinstance(decision, Edit):  # a yes to the call with the approver's input
                arguments = binding.bind(chosen, decision.input)
                if isinstance(arguments, binding.Refusal):
                    return arguments.message
            elif decision == "stop":
                return None
            elif not decision:
                return prompting.render("corrections/declined", tool=chosen.name, input=action.input)
        limit = chosen.timeout if chosen.timeout is not None else self.limits.tool_seconds
        invoke = Invoke(chosen, arguments, limit)
        if chosen.risky and isinstance(decision, Edit):
            self.edited.append(invoke)
        return invoke

    def _settle(self, invoke: Invoke, action: Action, ran: Ran, number: int) -> str:
        """What a call came to, as fed back; a success is remembered, to catch a repeat."""
        self.tool_calls += 1
        text = self.account.cut(ran.outcome.text)
        if not invoke.tool.pure:  # it may have changed what a pure tool reads: no earlier result stands
            self.done.clear()
        edited = any(invoke is e for e in self.edited)
        if (
            _remembered(invoke.tool) and ran.outcome.kind == "ok" and not edited
        ):  # an idempotent call stands until another
            self.done[(invoke.tool.name, action.input)] = (number, text)
        return text

    def act_all(self, parsed: Actions, number: int) -> Generator[Command, Event, tuple[Framed, float] | None]:
        """Run the actions of one reply at once, each prepared as `act` prepares one (unknown tools,
        repeats, refusals and approvals per call): each call's observation in the frame that labels
        them (cut to an allowance, each call keeps its label), and the wall time of the calls; None
        to stop the run."""
        most = self.limits.actions
        actions = parsed.actions[:most]
        texts: list[str | None] = []
        invokes: list[Invoke] = []
        slot: dict[int, int] = {}  # action index -> its call in `invokes`
        twin: dict[int, int] = {}  # action index -> the earlier action of this reply it repeats
        seen: dict[tuple[str, str], int] = {}
        for index, action in enumerate(actions):
            chosen = self._tool(action.tool)
            key = (chosen.name, action.input) if chosen is not None else None
            if chosen is not None and chosen.pure and key in seen and key not in self.done:
                twin[index] = seen[key]
                texts.append(None)
                continue
            prepared = yield from self._prepare(action)
            if prepared is None:
                return None
            if isinstance(prepared, Invoke):
                slot[index] = len(invokes)
                invokes.append(prepared)
                if key is not None:
                    seen[key] = index
                texts.append(None)
            else:
                texts.append(prepared)
        seconds = 0.0
        if invokes:
            ran = typing.cast("RanAll", (yield InvokeAll(tuple(invokes))))  # as checked: one Ran a call
            seconds = ran.seconds
            for index, at in slot.items():
                settled = self._settle(invokes[at], actions[index], ran.ran[at], number)
                texts[index] = self._noted(settled, invokes[at], actions[index], index)
            if not all(i.tool.pure for i in invokes):  # ran at once with a tool with side effects
                self.done.clear()
            kinds = {index: ran.ran[at].outcome.kind for index, at in slot.items()}
            # A twin of a call that failed is a retry: errors are not remembered. One a round for each call.
            while retries := {twin[i]: i for i in reversed(twin) if kinds[twin[i]] != "ok"}:
                again = typing.cast("RanAll", (yield InvokeAll(tuple(invokes[slot[e]] for e in retries))))
                seconds += again.seconds
                for (earlier, index), redone in zip(retries.items(), again.ran, strict=True):
                    slot[index], kinds[index] = slot[earlier], redone.outcome.kind
                    texts[index] = self._settle(invokes[slot[index]], actions[index], redone, number)
                    del twin[index]
                    twin.update({i: index for i, e in twin.items() if e == earlier})  # later twins follow the retry
        for index, earlier in twin.items():
            action = actions[index]
            texts[index] = prompting.render(
                "corrections/repeated_action",
                tool=invokes[slot[earlier]].tool.name if earlier in slot else action.tool,
                input=action.input,
                step=number,
                result=texts[earlier],
            )
        each = tuple(t or "" for t in texts)
        calls = [protocol.call_line(a) for a in actions]
        note = ""
        if len(parsed.actions) > most:
            skipped = parsed.actions[most]
            note = prompting.render("corrections/too_many_actions", most=most, skipped=protocol.call_line(skipped))

        def labelled(results: Sequence[str]) -> str:
            observation = prompting.observations_message(zip(calls, results, strict=True))
            return f"{observation}\n{note}" if note else observation

        return Framed(each, labelled), seconds

    def calls(self, parsed: Action | Actions) -> tuple[Call, ...]:
        """The calls of a reply acted on, as counted for repeats: each tool's name (as registered,
        when known) and its input as written."""
        actions = parsed.actions[: self.limits.actions] if isinstance(parsed, Actions) else (parsed,)
        return tuple(((t.name if (t := self._tool(a.tool)) else a.tool), a.input) for a in actions)

    def see(self, calls: tuple[Call, ...]) -> None:
        """Count the calls of the reply about to be acted on (each call's place in its run of repeats)."""
        self.in_a_row = self.streak.see(calls)

    def braked(self, calls: tuple[Call, ...]) -> str:
        """What the model is told of the call that was one too many in a row (none of the reply's ran)."""
        times, (tool, input_) = max(zip(self.streak.counts(calls), calls, strict=True))
        return prompting.render("corrections/repeats_limit", tool=tool, input=input_, times=times)

    def _noted(self, text: str, invoke: Invoke, action: Action, index: int) -> str:
        """A call of a tool with side effects that repeats the one before it ran again: the model is told."""
        times = self.in_a_row[index] if index < len(self.in_a_row) else 1
        if times < 2 or _remembered(invoke.tool):
            return text
        return prompting.render(
            "corrections/repeated_call", result=text, tool=invoke.tool.name, input=action.input, times=times
        )

    def _tool(self, name: str) -> Tool | None:
        return self.by_name.get(name) or self.by_name.get(name.casefold())

    def _unknown(self, name: str) -> str:
        close = difflib.get_close_matches(name, self.names, n=1)
        suggestion = prompting.render("corrections/unknown_tool_suggestion", closest=close[0]) if close else ""
        return prompting.render(
            "corrections/unknown_tool", tool=name, suggestion=suggestion, tools=", ".join(self.names)
        )


def _remembered(chosen: Tool) -> bool:
    """A tool whose repeat is answered from its earlier call (while `done` holds it): a pure one, or
    an idempotent one (a repeat adds no effect; any call with side effects, its own too, clears `done`)."""
    return chosen.pure or chosen.idempotent
