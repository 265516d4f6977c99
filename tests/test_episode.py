"""The episode driven by hand, with no driver and no model, as h11's tests drive its state machine
(h11/tests/test_state.py): every command and the event it takes, every wrong event refused with
nothing changed, runs to a final answer, the limits, elision, the forced final call, tool errors.

The oracle of "nothing changed" is a twin: an episode sent a wrong event and then the right ones
gives the very commands that an episode sent only the right ones gives."""

from __future__ import annotations

import ast
import inspect
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from react_text import Agent, Limits, Message, ModelError, Prompting, ScriptedModel, Usage, tool
from react_text.core.commands import EXPECTS, check
from react_text.core.episode import (
    Approve,
    Command,
    Decided,
    Done,
    Emit,
    Episode,
    EpisodeSpec,
    Event,
    Failed,
    Invoke,
    InvokeAll,
    Ran,
    RanAll,
    Replied,
    Send,
)
from react_text.core.errors import ContextLengthError, EventError
from react_text.core.types import Outcome, Reply, RunResult
from react_text.prompting import render

TASK = "What does a train ticket cost?"


def count(text: str) -> int:
    """A counter of our own: a token every four characters (what the tiktoken estimate is near)."""
    return (len(text) + 3) // 4


@tool
def lookup(item: str) -> str:
    """Look up the price of an item."""
    return {"train ticket": "89"}.get(item, "unknown")


@tool(risky=True)
def pay(amount: str) -> str:
    """Pay an amount."""
    return f"paid {amount}"


@tool(pure=True)
def square(x: int) -> int:
    """Square a number."""
    return x * x


def spec(**changes: Any) -> EpisodeSpec:
    base = EpisodeSpec("You answer with the protocol.", count, tools=(lookup, pay, square))
    return replace(base, **changes)


def replied(text: str, usage: Usage | None = None, finish: str | None = "stop") -> Replied:
    return Replied(Reply(text, usage, finish), 0.01)


def ran(text: str, kind: str = "ok") -> Ran:
    return Ran(Outcome(kind, text), 0.002)  # type: ignore[arg-type]


def play(episode: Episode, events: list[Event]) -> list[Command]:
    """Start the episode and send it `events` in turn: every command it gave."""
    commands = [episode.start()]
    for event in events:
        commands.append(episode.send(event))
    return commands


def messages(command: Command) -> tuple[Message, ...]:
    """A Send's prompt (chat)."""
    assert isinstance(command, Send)
    prompt = command.request.prompt
    assert isinstance(prompt, tuple)
    return prompt


def last(command: Command) -> str:
    """The last message of a Send's prompt (chat)."""
    return messages(command)[-1].content


# --- every command, and the event it takes ---------------------------------------------------------


def test_every_command_expects_its_event() -> None:
    episode = Episode(spec(asks_approval=True, prompting=Prompting(parallel=True)), TASK)
    assert episode.command is None and episode.expecting == ()

    send = episode.start()
    assert isinstance(send, Send) and episode.command is send
    assert episode.expecting == (Replied, Failed)

    approve = episode.send(replied("ACTION: lookup[train ticket]\nACTION: pay[5]"))
    assert isinstance(approve, Approve) and approve.tool is pay
    assert episode.expecting == (Decided,)

    invoke_all = episode.send(Decided(True))  # the two calls of one reply, at once
    assert isinstance(invoke_all, InvokeAll)
    assert [i.tool for i in invoke_all.invokes] == [lookup, pay]
    assert episode.expecting == (RanAll,)

    emit = episode.send(RanAll((ran("89"), ran("paid 5")), 0.01))
    assert isinstance(emit, Emit) and emit.step.observations == ("89", "paid 5")
    assert episode.expecting == (type(None),)

    assert isinstance(episode.send(None), Send)
    emit = episode.send(replied("FINAL: paid"))
    assert isinstance(emit, Emit) and emit.step.observation is None
    done = episode.send(None)
    assert isinstance(done, Done) and done.result.answer == "paid"
    assert episode.expecting == ()


def test_a_single_action_is_one_invoke_that_takes_a_ran() -> None:
    episode = Episode(spec(), TASK)
    episode.start()
    invoke = episode.send(replied("THOUGHT: price\nACTION: lookup[train ticket]"))
    assert isinstance(invoke, Invoke)
    assert invoke.tool is lookup and invoke.arguments.arguments == {"item": "train ticket"}
    assert invoke.seconds == Limits().tool_seconds
    assert episode.expecting == (Ran,)


def test_the_table_names_every_command() -> None:
    assert set(EXPECTS) == {Send, Approve, Invoke, InvokeAll, Emit, Done}
    assert EXPECTS[Done] == ()


# --- wrong events: refused, named, and nothing changes ----------------------------------------------

ALL_EVENTS: list[Event] = [
    replied("FINAL: 1"),
    Failed(ModelError("down"), 0.1),
    Decided(True),
    ran("89"),
    RanAll((ran("89"),), 0.1),
    None,
]

# To reach each command: the events that lead there from start, and the right events after it.
ROUTES: dict[type[Command], tuple[list[Event], list[Event]]] = {
    Send: ([], [replied("ACTION: lookup[train ticket]"), ran("89"), None, replied("FINAL: 89"), None]),
    Approve: ([replied("ACTION: pay[5]")], [Decided(True), ran("paid 5"), None, replied("FINAL: ok"), None]),
    Invoke: ([replied("ACTION: lookup[train ticket]")], [ran("89"), None, replied("FINAL: 89"), None]),
    Emit: ([replied("ACTION: lookup[train ticket]"), ran("89")], [None, replied("FINAL: 89"), None]),
}


WRONG = [
    pytest.param(at, event, id=f"{at.__name__}-{type(event).__name__}")
    for at in ROUTES
    for event in ALL_EVENTS
    if not isinstance(event, EXPECTS[at])
]


def test_every_command_but_done_is_tried_with_every_wrong_event() -> None:
    assert set(ROUTES) | {InvokeAll, Done} == set(EXPECTS)  # InvokeAll: test_a_ran_all_of_the_wrong_size...
    assert len(WRONG) == len(ROUTES) * len(ALL_EVENTS) - 5  # Send takes two kinds, the others one


@pytest.mark.parametrize(("at", "event"), WRONG)
def test_a_wrong_event_is_refused_and_changes_nothing(at: type[Command], event: Event) -> None:
    before, after = ROUTES[at]
    episode = Episode(spec(asks_approval=True), TASK)
    command = play(episode, before)[-1]
    assert type(command) is at
    expecting = episode.expecting
    with pytest.raises(EventError) as refused:
        episode.send(event)
    message = str(refused.value)
    assert f"asked {at.__name__} and takes" in message
    assert all((kind.__name__ if kind is not type(None) else "None") in message for kind in expecting)
    assert message.endswith(f"not {type(event).__name__ if event is not None else 'None'}")
    assert episode.command is command and episode.expecting == expecting

    twin = Episode(spec(asks_approval=True), TASK)
    play(twin, before)
    assert [episode.send(e) for e in after] == [twin.send(e) for e in after]  # as if never sent


def test_a_ran_all_of_the_wrong_size_is_refused() -> None:
    episode = Episode(spec(prompting=Prompting(parallel=True)), TASK)
    episode.start()
    command = episode.send(replied("ACTION: lookup[train ticket]\nACTION: square[3]"))
    assert isinstance(command, InvokeAll) and len(command.invokes) == 2
    with pytest.raises(EventError, match=r"asked for 2 calls and takes a RanAll of 2 Ran, not a tuple of Ran$"):
        episode.send(RanAll((ran("89"),), 0.1))
    with pytest.raises(EventError, match=r"takes a RanAll of 2 Ran, not an empty tuple$"):
        episode.send(RanAll((), 0.1))
    assert episode.command is command
    emit = episode.send(RanAll((ran("89"), ran("9")), 0.1))
    assert isinstance(emit, Emit) and emit.step.observations == ("89", "9")


# What an event carries is checked when it is made: a driver that builds one of the wrong thing is
# told so at the line that built it, not with an AttributeError somewhere inside the episode.
MADE_WRONG: list[tuple[type[object], tuple[object, ...], str]] = [
    (Replied, ("FINAL: 1", 0.1), r"^Replied\.reply must be a Reply, not str$"),
    (Replied, (Reply("FINAL: 1"), None), r"^Replied\.seconds must be a number of seconds, not None$"),
    (Replied, (Reply("FINAL: 1"), True), r"^Replied\.seconds must be a number of seconds, not bool$"),
    (Failed, (ValueError("no"), 0.1), r"^Failed\.error must be a ModelError, not ValueError$"),
    (Ran, ("89", 0.1), r"^Ran\.outcome must be an Outcome, not str$"),
    (Ran, (Outcome("ok", "89"), "1s"), r"^Ran\.seconds must be a number of seconds, not str$"),
    (RanAll, ([Ran(Outcome("ok", "89"), 0.1)], 0.1), r"^RanAll\.ran must be a tuple of Ran, not list$"),
    (
        RanAll,
        ((Ran(Outcome("ok", "89"), 0.1), "9"), 0.1),
        r"^RanAll\.ran must be a tuple of Ran, not a tuple of Ran, str$",
    ),
]


@pytest.mark.parametrize(("kind", "fields", "words"), MADE_WRONG, ids=[w[2][1:30] for w in MADE_WRONG])
def test_an_event_of_the_wrong_things_cannot_be_made(
    kind: type[object], fields: tuple[object, ...], words: str
) -> None:
    with pytest.raises(TypeError, match=words):
        kind(*fields)


def test_the_events_made_right_are_made() -> None:
    assert Replied(Reply("x"), 1).seconds == 1  # a whole number of seconds is a number
    assert Failed(ContextLengthError("long"), 0.0).error.window is None
    assert Decided("stop").approval == "stop" and Decided(None).approval is None  # type: ignore[arg-type]
    assert RanAll((), 0.0).ran == ()


def test_send_before_start_start_twice_and_anything_after_done_are_refused() -> None:
    episode = Episode(spec(), TASK)
    with pytest.raises(EventError, match=r"has not started: call start\(\) first"):
        episode.send(None)
    assert episode.command is None
    send = episode.start()
    with pytest.raises(EventError, match="has started already: it is waiting on Send"):
        episode.start()
    assert episode.command is send
    episode.send(replied("FINAL: 89"))
    done = episode.send(None)
    assert isinstance(done, Done)
    for event in ALL_EVENTS:
        with pytest.raises(EventError, match="the run is over"):
            episode.send(event)
        assert episode.command is done


def test_an_episode_that_raised_takes_no_more_events() -> None:
    def broken(text: str, *, tools: object = ()) -> Any:
        raise ValueError("the parser's own bug")

    episode = Episode(spec(parser=broken), TASK)
    episode.start()
    with pytest.raises(ValueError, match="the parser's own bug"):  # raised as it is, to the driver
        episode.send(replied("FINAL: 89"))
    with pytest.raises(EventError, match="raised an exception earlier: it takes no more events"):
        episode.send(replied("FINAL: 89"))


def test_check_is_the_table() -> None:
    request = Episode(spec(), TASK).start()
    assert isinstance(request, Send)
    check(request, replied("x"))
    check(request, Failed(ModelError("x"), 0.0))
    with pytest.raises(EventError):
        check(request, Decided(True))


# --- runs, by hand ----------------------------------------------------------------------------------


def test_a_run_to_a_final_answer() -> None:
    episode = Episode(spec(), TASK)
    commands = play(episode, [replied("THOUGHT: price\nACTION: lookup[train ticket]"), ran("89"), None])
    first, second = commands[0], commands[-1]
    assert isinstance(first, Send) and isinstance(second, Send)
    assert first.request.prompt == (
        Message("system", "You answer with the protocol."),
        Message("user", render("task", task=TASK)),
    )
    assert second.request.prompt[: len(first.request.prompt)] == first.request.prompt  # prefix-stable
    assert second.request.prompt[len(first.request.prompt) :] == (
        Message("assistant", "THOUGHT: price\nACTION: lookup[train ticket]"),
        Message("user", "OBSERVATION: 89"),
    )
    emit = episode.send(replied("THOUGHT: done\nFINAL: 89"))
    assert isinstance(emit, Emit)
    done = episode.send(None)
    assert isinstance(done, Done)
    result = done.result
    assert (result.answer, result.stop_reason, result.tool_calls, result.forced) == ("89", "final", 1, False)
    assert [s.observation for s in result.steps] == ["89", None]
    assert result.usage.prompt_tokens > 0  # counted here, the model having reported none


def test_a_completion_run_continues_the_thought_cue() -> None:
    episode = Episode(spec(api="completion"), TASK)
    first = episode.start()
    assert isinstance(first, Send) and isinstance(first.request.prompt, str)
    assert first.request.prompt.endswith("THOUGHT:")
    episode.send(replied(" price\nACTION: lookup[train ticket]"))
    episode.send(ran("89"))
    second = episode.send(None)
    assert isinstance(second, Send) and isinstance(second.request.prompt, str)
    assert (
        second.request.prompt
        == first.request.prompt + " price\nACTION: lookup[train ticket]\nOBSERVATION: 89\nTHOUGHT:"
    )


def test_the_server_s_usage_is_billed() -> None:
    episode = Episode(spec(), TASK)
    episode.start()
    episode.send(replied("FINAL: 89", Usage(700, 5)))
    done = episode.send(None)
    assert isinstance(done, Done)
    assert done.result.usage == Usage(700, 5) and episode.counted is None


def test_a_model_error_ends_the_run() -> None:
    episode = Episode(spec(), TASK)
    episode.start()
    done = episode.send(Failed(ModelError("connection refused"), 0.5))
    assert isinstance(done, Done)
    assert (done.result.stop_reason, done.result.error, done.result.steps) == (
        "model_error",
        "connection refused",
        (),
    )


def test_a_refusal_for_length_is_retried_once_with_less() -> None:
    episode = Episode(spec(window=4096), TASK)
    first = episode.start()
    assert isinstance(first, Send)
    again = episode.send(Failed(ContextLengthError("too long", window=300), 0.1))
    assert isinstance(again, Send) and again.request.max_tokens < first.request.max_tokens
    done = episode.send(Failed(ContextLengthError("too long", window=300), 0.1))
    assert isinstance(done, Done) and done.result.stop_reason == "model_error"


# --- tools: errors, unknown names, approvals, repeats -------------------------------------------------


def test_a_tool_error_is_the_observation_and_the_run_goes_on() -> None:
    episode = Episode(spec(), TASK)
    episode.start()
    episode.send(replied("ACTION: lookup[train ticket]"))
    emit = episode.send(ran("The tool lookup failed with KeyError: 'train ticket'", kind="error"))
    assert isinstance(emit, Emit)
    assert emit.step.observation == "The tool lookup failed with KeyError: 'train ticket'"
    send = episode.send(None)
    assert isinstance(send, Send) and "KeyError" in last(send)
    emit = episode.send(replied("FINAL: unknown"))
    done = episode.send(None)
    assert isinstance(done, Done) and done.result.tool_calls == 1 and done.result.stop_reason == "final"


def test_a_timeout_is_the_observation() -> None:
    episode = Episode(spec(), TASK)
    play(episode, [replied("ACTION: lookup[train ticket]")])
    emit = episode.send(ran("timed out after 60 s", kind="timeout"))
    assert isinstance(emit, Emit) and emit.step.observation == "timed out after 60 s"


def test_an_unknown_tool_runs_nothing_and_is_told_the_tools() -> None:
    episode = Episode(spec(), TASK)
    episode.start()
    emit = episode.send(replied("ACTION: lokup[train ticket]"))
    assert isinstance(emit, Emit)  # no Invoke
    assert emit.step.observation == render(
        "corrections/unknown_tool",
        tool="lokup",
        suggestion=render("corrections/unknown_tool_suggestion", closest="lookup"),
        tools="lookup, pay, square",
    )


def test_input_the_binder_refuses_runs_nothing() -> None:
    episode = Episode(spec(), TASK)
    episode.start()
    emit = episode.send(replied("ACTION: square[three]"))
    assert isinstance(emit, Emit) and "square" in (emit.step.observation or "")


def test_a_risky_tool_without_an_approver_is_declined_and_asks_nothing() -> None:
    episode = Episode(spec(asks_approval=False), TASK)
    episode.start()
    emit = episode.send(replied("ACTION: pay[5]"))
    assert isinstance(emit, Emit)
    assert emit.step.observation == render("corrections/declined", tool="pay", input="5")


def test_an_approver_that_says_stop_ends_the_run() -> None:
    episode = Episode(spec(asks_approval=True), TASK)
    play(episode, [replied("ACTION: pay[5]")])
    emit = episode.send(Decided("stop"))
    assert isinstance(emit, Emit)
    done = episode.send(None)
    assert isinstance(done, Done) and done.result.stop_reason == "declined"
    assert done.result.tool_calls == 0


def test_a_pure_tool_is_not_run_again_on_the_same_input() -> None:
    episode = Episode(spec(), TASK)
    play(episode, [replied("ACTION: square[3]"), ran("9"), None])
    emit = episode.send(replied("ACTION: square[3]"))
    assert isinstance(emit, Emit)  # answered from the first call: no Invoke
    assert emit.step.observation == render("corrections/repeated_action", tool="square", input="3", step=1, result="9")


# --- limits -------------------------------------------------------------------------------------------


def test_the_step_limit_brings_the_forced_final_call() -> None:
    episode = Episode(spec(limits=Limits(steps=2)), TASK)
    play(episode, [replied("ACTION: lookup[train ticket]"), ran("89"), None, replied("ACTION: lookup[hotel]")])
    emit = episode.send(ran("unknown"))
    assert isinstance(emit, Emit)
    forced = episode.send(None)
    assert isinstance(forced, Send)
    assert last(forced).endswith(render("corrections/force_final", limit="the step limit of 2"))
    emit = episode.send(replied("FINAL: 89"))
    assert isinstance(emit, Emit) and emit.step.forced
    done = episode.send(None)
    assert isinstance(done, Done)
    result = done.result
    assert (result.answer, result.stop_reason, result.forced, len(result.steps)) == ("89", "max_steps", True, 3)


def test_without_force_final_the_step_limit_ends_the_run() -> None:
    episode = Episode(spec(limits=Limits(steps=1, force_final=False)), TASK)
    commands = play(episode, [replied("ACTION: lookup[train ticket]"), ran("89"), None])
    done = commands[-1]
    assert isinstance(done, Done)
    assert (done.result.answer, done.result.stop_reason, done.result.forced) == (None, "max_steps", False)


def test_the_forced_call_under_a_grammar_admits_only_a_final_answer() -> None:
    episode = Episode(spec(limits=Limits(steps=1), grammar=True), TASK)
    first = episode.start()
    episode.send(replied("ACTION: lookup[train ticket]"))
    episode.send(ran("89"))
    forced = episode.send(None)
    assert isinstance(first, Send) and isinstance(forced, Send)
    assert first.request.grammar is not None and "directive ::= action | final" in first.request.grammar
    assert forced.request.grammar is not None and "directive ::= final\n" in forced.request.grammar
    assert "ACTION" not in forced.request.grammar


def test_a_budget_too_small_for_one_call_is_done_at_start() -> None:
    done = Episode(spec(limits=Limits(tokens=20)), TASK).start()
    assert isinstance(done, Done)
    assert (done.result.stop_reason, done.result.steps, done.result.usage) == ("max_tokens", (), Usage())


def test_the_token_budget_ends_the_run_with_a_forced_answer() -> None:
    episode = Episode(spec(limits=Limits(tokens=900, reply_tokens=64)), TASK)
    command = episode.start()
    sends = 0
    while isinstance(command, Send | Invoke | Emit) and sends < 20:
        if isinstance(command, Send):
            sends += 1
            forced = "FINAL" in last(command) and "limit" in last(command)
            command = episode.send(replied("FINAL: 89" if forced else "ACTION: lookup[train ticket]"))
        elif isinstance(command, Invoke):
            command = episode.send(ran("x" * 120))  # every call a new result: no repeat
        else:
            command = episode.send(None)
    assert isinstance(command, Done)
    result = command.result
    assert (result.stop_reason, result.forced, result.answer) == ("max_tokens", True, "89")
    assert result.usage.total_tokens <= 900


def test_unreadable_replies_in_a_row_end_the_run() -> None:
    episode = Episode(spec(limits=Limits(format_errors=2)), TASK)
    episode.start()
    emit = episode.send(replied("I think the answer is 89."))
    assert isinstance(emit, Emit) and emit.step.observation is not None
    send = episode.send(None)
    assert isinstance(send, Send)
    emit = episode.send(replied("Still thinking."))
    done = episode.send(None)
    assert isinstance(done, Done)
    assert (done.result.stop_reason, done.result.error) == ("format_errors", "2 unreadable replies in a row")


# --- the context window: elision --------------------------------------------------------------------


def test_old_observations_are_elided_to_fit_the_window() -> None:
    episode = Episode(spec(window=1400, limits=Limits(reply_tokens=64, observation_tokens=400)), TASK)
    command = episode.start()
    items = iter(f"item {n}" for n in range(50))
    seen_elided: tuple[int, ...] = ()
    prompts: list[int] = []
    while not isinstance(command, Done):
        if isinstance(command, Send):
            prompts.append(sum(count(m.content) + 3 for m in messages(command)) + 3)
            command = episode.send(replied(f"ACTION: lookup[{next(items)}]"))
        elif isinstance(command, Invoke):
            command = episode.send(ran("result " * 200))  # about 350 of our tokens each
        else:
            assert isinstance(command, Emit)
            seen_elided = seen_elided or command.step.elided
            if len(prompts) == 8:
                break
            command = episode.send(None)
    assert seen_elided and seen_elided[0] == 1  # the oldest first
    assert max(prompts) + 64 <= 1400  # every request fit the window with its reply
    later = episode.send(None)
    assert isinstance(later, Send)
    assert "[elided to save room" in "".join(m.content for m in messages(later))


def test_an_outgrown_window_asks_for_the_answer_and_says_so() -> None:
    # The oldest steps fold into one pair of messages, so short steps alone no longer outgrow a
    # window: here the instructions (about 450 tokens) leave room for little more than the fold and
    # the latest step, and the calls outgrow it after a dozen steps have been elided and folded.
    instructions = "You answer with the protocol. " * 60
    limits = Limits(steps=60, reply_tokens=64, observation_tokens=600)
    episode = Episode(spec(instructions=instructions, window=700, limits=limits), TASK)
    command = episode.start()
    answered: RunResult | None = None
    calls = 0
    while answered is None and calls < 70:
        if isinstance(command, Send):
            calls += 1
            forced = "FINAL: your best answer" in last(command)
            command = episode.send(replied("FINAL: 89" if forced else f"ACTION: lookup[item {calls}]"))
        elif isinstance(command, Invoke):
            command = episode.send(ran(f"{calls} " * 900))
        elif isinstance(command, Emit):
            command = episode.send(None)
        else:
            assert isinstance(command, Done)
            answered = command.result
    assert answered is not None
    assert answered.answer == "89" and answered.forced and answered.stop_reason == "max_tokens"
    assert answered.error is not None and answered.error == "the context window of 700 tokens"
    assert len(answered.steps) > 10 and answered.steps[-2].elided[:10] == tuple(range(1, 11))  # made room first


# --- the spec -----------------------------------------------------------------------------------------


def test_the_agent_makes_the_spec_and_the_grammar_is_decided_by_the_model() -> None:
    agent = Agent(ScriptedModel(["FINAL: 1"], accepts_grammar=True), tools=[lookup, pay], approve=lambda t, a: True)
    made = agent.spec(2048)
    assert made.grammar is True and made.prompting.grammar is None  # the user left it open: the model takes one
    assert (made.api, made.tools, made.limits, made.window) == ("chat", (lookup, pay), agent.limits, 2048)
    assert made.asks_approval and made.instructions == agent.instructions() and made.count is agent.counter
    plain = Agent(ScriptedModel(["FINAL: 1"]), prompting=Prompting(grammar=False)).spec()
    assert plain.grammar is False and not plain.asks_approval and plain.window is None
    assert agent.spec(2048) is made  # made once for a window


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"api": "messages"}, ValueError),
        ({"window": 0}, ValueError),
        ({"window": True}, ValueError),
        ({"tools": [lookup]}, TypeError),
        ({"limits": {"steps": 2}}, TypeError),
        ({"grammar": None}, TypeError),  # undecided
        ({"asks_approval": 1}, TypeError),
    ],
)
def test_a_bad_spec_is_refused_when_made(changes: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error, match="EpisodeSpec"):
        spec(**changes)


def test_an_episode_is_built_from_a_spec_only() -> None:
    agent = Agent(ScriptedModel(["FINAL: 1"]))
    with pytest.raises(TypeError, match="built from an EpisodeSpec"):
        Episode(agent, TASK)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="the task must be a string"):
        Episode(spec(), None)  # type: ignore[arg-type]


def test_the_episode_module_knows_no_agent_and_no_model() -> None:
    """Not even for types: episode.py imports neither the drivers (loop) nor a backend."""
    source = (Path(inspect.getfile(Episode))).read_text(encoding="utf-8")
    imported = {node.module for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported.isdisjoint({"loop", "backends", "model_info", "running", "calls"})
    read = {node.attr for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Attribute)}
    assert read.isdisjoint({"model", "accepts_grammar", "agent", "approve", "instructions_for"})
