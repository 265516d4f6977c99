"""A request's conversation as the text protocol writes it, for a chat or a completion upstream. Pure.

    system  "Be brief."                            the instruction block (protocol, tool list, worked
    user    "Weather in Paris?"                    example, the tool_choice note), then the client's
    assistant tool_calls get_weather {"city":..}   system text; QUESTION: Weather in Paris?
    tool    "18 C" (its tool_call_id)              ACTION: get_weather[{"city": "Paris"}]
                                                   OBSERVATION: 18 C

An assistant message with tool_calls is written back as the ACTION lines the model would have
written (its text, if any, as the THOUGHT before them); the tool messages after it as their
OBSERVATION, matched to its calls by tool_call_id and written in the order of the calls (labelled
with their call when there are several, as parallel actions are); an assistant message of text
as the FINAL answer it was; a user message as the task is (`QUESTION: ...`). A chat upstream gets
these as messages (consecutive ones of one role joined, so turns alternate), a completion upstream
as one transcript ending with the cue the model continues.
"""

from __future__ import annotations

import json

from react_text import prompting
from react_text.core import protocol
from react_text.core.types import Action, Message, Role
from react_text.parser import render_action
from react_text.prompting import InstructionsIn
from react_text.tools import listing

from .requests import Called, ChatRequest, Invalid, Result, Said

__all__ = ["Prompt", "continued", "instruction_block", "prompt"]

Prompt = tuple[Message, ...] | str


def instruction_block(chat: ChatRequest, *, example: str | None, most: int) -> str:
    """The protocol, the request's tools, a worked example ("auto": chosen for the tools), and
    what its tool_choice asks of this reply."""
    tools = [f.tool for f in chat.functions]
    parallel = chat.parallel and chat.choice != "none" and most > 1
    if example == "auto":
        example = prompting.example_for(tools, parallel=parallel)
    elif example is not None and prompting.example_name(example) == "generic":
        example = prompting.generic_example(tools)
    block = prompting.instructions(listing(tools), example=example, parallel=most if parallel else None)
    if chat.choice == "named":
        return f"{block}\n\n{prompting.render('serving/choice_named', tool=chat.named)}"
    if chat.choice in ("none", "required"):
        return f"{block}\n\n{prompting.render(f'serving/choice_{chat.choice}')}"
    return block


def prompt(
    chat: ChatRequest, block: str, *, api_chat: bool, instructions_in: InstructionsIn = "system"
) -> Prompt | Invalid:
    """The conversation for the upstream: messages (`api_chat`) or a transcript ending with the
    thought cue; Invalid when a tool message answers no call of the assistant message before it."""
    system = "\n\n".join(t.text for t in chat.messages if isinstance(t, Said) and t.role == "system")
    turns: list[tuple[Role, str]] = []  # (role, text), in order
    calls: dict[str, tuple[int, str]] = {}  # the calls of the last assistant message: id -> (place, call line)
    results: dict[int, str] = {}  # their results so far, by place
    for i, turn in enumerate(chat.messages):
        if isinstance(turn, Result):
            if turn.call_id not in calls or calls[turn.call_id][0] in results:
                return Invalid(f"messages[{i}].tool_call_id", f"{turn.call_id!r} answers no open tool call before it")
            results[calls[turn.call_id][0]] = turn.text
            continue
        if len(results) < len(calls):
            return _unanswered(calls, results, f"messages[{i}]")
        if results:
            turns.append(("user", _observations(calls, results)))
        calls, results = {}, {}
        if isinstance(turn, Said) and turn.role == "user":
            turns.append(("user", prompting.render("task", task=turn.text)))
        elif isinstance(turn, Said) and turn.role == "assistant":
            turns.append(("assistant", f"{protocol.FINAL_LABEL} {turn.text.strip()}"))
        elif isinstance(turn, Called):
            turns.append(("assistant", _actions(turn)))
            calls = {
                c.id: (k, protocol.call_line(Action(c.name, _input(c.arguments)))) for k, c in enumerate(turn.calls)
            }
    if len(results) < len(calls):
        return _unanswered(calls, results, "messages")
    if results:
        turns.append(("user", _observations(calls, results)))
    head = f"{block}\n\n{system}" if system else block
    return _messages(head, turns, instructions_in) if api_chat else _transcript(head, turns)


def _unanswered(calls: dict[str, tuple[int, str]], results: dict[int, str], where: str) -> Invalid:
    missing = ", ".join(repr(c) for c, (place, _) in calls.items() if place not in results)
    return Invalid(
        where, f"an assistant message with tool_calls must be followed by a tool message for each: {missing}"
    )


def continued(before: Prompt, reply: str, correction: str, *, api_chat: bool) -> Prompt:
    """The conversation asked again: the reply as it was read, then the correction as an observation
    (as the loop feeds one back)."""
    observation = prompting.observation_message(correction)
    if api_chat and isinstance(before, tuple):
        return (*before, Message("assistant", reply.strip()), Message("user", observation))
    text = str(before).removesuffix(protocol.THOUGHT_CUE)  # `reply` is read from the cue on
    return f"{text}{reply.strip()}\n{observation}\n{protocol.THOUGHT_CUE}"


def _input(arguments: str) -> str:
    """A call's JSON arguments as the action's input: compact JSON ({} for none)."""
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        return arguments.strip()
    return json.dumps(value, ensure_ascii=False)


def _actions(turn: Called) -> str:
    lines = [f"{protocol.THOUGHT_LABEL} {' '.join(turn.text.split())}"] if turn.text.strip() else []
    lines += [render_action(c.name, _input(c.arguments)) for c in turn.calls]
    return "\n".join(lines)


def _observations(calls: dict[str, tuple[int, str]], results: dict[int, str]) -> str:
    lines = dict(calls.values())
    if len(calls) == 1 and len(results) == 1:
        return prompting.observation_message(next(iter(results.values())))
    return prompting.observations_message((lines[place], results[place]) for place in sorted(results))


def _messages(head: str, turns: list[tuple[Role, str]], instructions_in: InstructionsIn) -> tuple[Message, ...]:
    joined: list[Message] = []
    for role, text in turns:
        if joined and joined[-1].role == role:
            joined[-1] = Message(role, f"{joined[-1].content}\n\n{text}")
        else:
            joined.append(Message(role, text))
    if instructions_in == "user" and joined and joined[0].role == "user":
        return (Message("user", f"{head}\n\n{joined[0].content}"), *joined[1:])
    return (Message("system", head), *joined)


def _transcript(head: str, turns: list[tuple[Role, str]]) -> str:
    return f"{head}\n\n" + "".join(f"{text}\n" for _, text in turns) + protocol.THOUGHT_CUE
