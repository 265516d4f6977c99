"""One upstream reply read as an assistant message: tool calls, a final answer, or why it cannot be
read (and what to tell the model when it is asked again). Pure.

    THOUGHT: I need the weather.                 tool_calls [get_weather {"city": "Paris"}]
    ACTION: get_weather[Paris]                   finish_reason "tool_calls"

    THOUGHT: It is mild.                         content "18 C and sunny", finish_reason "stop"
    FINAL: 18 C and sunny                        ("length" when the reply was cut at its allowance)

The reply goes the loop's way: thinking split off (never parsed; it becomes `reasoning_content`),
the guard's cut at a made-up observation, the tolerant parser (several actions when parallel
tool calls are on), then the one binder against each tool's schema. What the loop would feed back
as a correction (no directive, an unknown tool, an input the tool cannot take, an input never
closed, and here also a reply that does not do what tool_choice asked, or several actions when
parallel tool calls are off) makes an `Answer` with
`unread` set: the endpoint asks again with `correction`, and at the last try returns the reply's
text as content, saying why.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from react_text import prompting
from react_text.core import protocol
from react_text.core.types import Action, Actions, Final, ParseError, Reply
from react_text.parser import guard, parse
from react_text.parser.several import parse_several
from react_text.tools import binding

from . import schemas
from .functions import Function, arguments
from .requests import Choice

__all__ = ["Answer", "FinishReason", "How", "ToolCall", "read"]

FinishReason = Literal["stop", "tool_calls", "length"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # a JSON object, as text


@dataclass(frozen=True, slots=True)
class How:
    """How a request's replies are read."""

    functions: tuple[Function, ...]
    api_chat: bool = True
    choice: Choice = "auto"
    named: str | None = None
    parallel: bool = False
    most: int = 4  # actions of one reply, when parallel
    stop: tuple[str, ...] = ()  # the client's stop sequences, applied to a final answer
    allowance: int = 512  # the reply's tokens at most


@dataclass(frozen=True, slots=True)
class Answer:
    """What a reply came to. `unread`: why it could not be read (its text is then `content`);
    `correction`: what the model is told when asked again; `read`: the reply as it was read (cut
    by the guard; from the thought cue on, for a completion upstream), as it goes back then."""

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: FinishReason = "stop"
    reasoning: str | None = None
    unread: str | None = None
    correction: str | None = None
    read: str = ""
    cut: str = ""  # what the guard cut: a made-up observation


def read(reply: Reply, how: How, call_id: Callable[[int], str]) -> Answer:
    """The answer in `reply`; `call_id(i)` names the i-th tool call."""
    thought, visible = guard.split_reasoning(reply.text)
    reasoning = "\n".join(r for r in (reply.reasoning or "", thought) if r) or None
    cut = guard.cut(visible)
    kept = cut.kept
    text = kept if how.api_chat else f"{protocol.THOUGHT_CUE}{'' if kept[:1].isspace() else ' '}{kept}"
    names = tuple(f.name for f in how.functions)
    parsed = parse_several(text, tools=names, most=how.most) if how.parallel else parse(text, tools=names)
    truncated = reply.finish_reason == "length"
    base = Answer(None, reasoning=reasoning, read=text, cut=cut.dropped)

    def unread(reason: str, correction: str) -> Answer:
        content = kept.strip()
        finish: FinishReason = "length" if truncated else "stop"
        return Answer(content, (), finish, reasoning, reason, correction, text, cut.dropped)

    if isinstance(parsed, ParseError):
        return unread(parsed.reason, prompting.render("corrections/format_error", problem=parsed.message))
    if isinstance(parsed, Final):
        if how.choice in ("required", "named"):
            return unread("no_tool_call", _call_now(how))
        answer = _stopped(parsed.answer, how.stop)
        cut_off = truncated and not parsed.discarded.strip()
        return Answer(answer, (), "length" if cut_off else "stop", reasoning, read=text, cut=cut.dropped)
    actions = parsed.actions[: how.most] if isinstance(parsed, Actions) else (parsed,)
    if not all(a.closed for a in actions):
        if truncated:
            return unread("reply_cut", prompting.render("corrections/reply_cut", tokens=how.allowance))
        return unread("input_open", prompting.render("corrections/input_open"))
    if how.choice == "none":
        return unread("tool_call_refused", prompting.render("serving/wrong_action"))
    if (
        not how.parallel
        and isinstance(parsed, Action)
        and isinstance(parse_several(text, tools=names, most=1), Actions)
    ):
        return unread("several_actions", prompting.render("serving/one_action"))  # parallel_tool_calls: false
    calls, problems = _bound(actions, how, call_id)
    if problems:
        return unread(problems[0][0], "\n".join(words for _, words in problems))
    return Answer(None, calls, "tool_calls", base.reasoning, read=text, cut=cut.dropped)


def _bound(
    actions: tuple[Action, ...], how: How, call_id: Callable[[int], str]
) -> tuple[tuple[ToolCall, ...], list[tuple[str, str]]]:
    by_name = {f.name: f for f in how.functions}
    folded = {f.name.casefold(): f for f in reversed(how.functions)}
    calls: list[ToolCall] = []
    problems: list[tuple[str, str]] = []
    for action in actions:
        chosen = by_name.get(action.tool) or folded.get(action.tool.casefold())
        if chosen is None:
            problems.append(("unknown_tool", _unknown(action.tool, tuple(by_name))))
            continue
        if how.choice == "named" and chosen.name != how.named:
            problems.append(("wrong_tool", prompting.render("serving/wrong_tool", tool=how.named, called=chosen.name)))
            continue
        bound = binding.bind(chosen.tool, action.input)
        if isinstance(bound, binding.Refusal):
            problems.append(("bad_input", bound.message))
            continue
        values = arguments(chosen, bound)
        if broken := schemas.problems(values, chosen.schema):  # what binding does not see: nested, bounds
            words = prompting.render(
                "corrections/bad_input", tool=chosen.name, problem="; ".join(broken), form=chosen.tool.form
            )
            problems.append(("bad_input", words))
            continue
        calls.append(ToolCall(call_id(len(calls)), chosen.name, json.dumps(values, ensure_ascii=False)))
    return tuple(calls), problems


def _call_now(how: How) -> str:
    if how.choice == "named":
        return prompting.render("serving/choice_named", tool=how.named)
    return prompting.render("serving/wrong_final")


def _unknown(name: str, names: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, names, n=1)
    suggestion = prompting.render("corrections/unknown_tool_suggestion", closest=close[0]) if close else ""
    return prompting.render("corrections/unknown_tool", tool=name, suggestion=suggestion, tools=", ".join(names))


def _stopped(answer: str, stops: tuple[str, ...]) -> str:
    """The answer up to the first of the client's stop sequences (a server may ignore them)."""
    ends = [answer.find(s) for s in stops if s in answer]
    return answer[: min(ends)] if ends else answer
