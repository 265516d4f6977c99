"""Parallel actions (issue 24): several independent ACTION lines in one reply, run at once.

Off by default (the first directive wins, the rest is discarded); with `Prompting(parallel=True)`
every action of a reply is read, the calls run at once, and one labelled observation per call comes
back in the order written. Loop tests run under both drivers (the `drive` fixture).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest
from conftest import Drive, make_agent

from react_text import (
    Action,
    Actions,
    Agent,
    Final,
    Limits,
    ParseError,
    Prompting,
    Reply,
    ScriptedModel,
    cut,
    parse,
    parse_several,
    protocol_grammar,
    tool,
)
from react_text.observers.trace import step_dict, step_from
from react_text.parser import parse_strict
from react_text.prompting import render

TOOLS = ("weather", "fx")
TASK = "What is the weather in Athens, and how much is 100 USD in EUR?"
BOTH = "THOUGHT: the two do not depend on each other\nACTION: weather[Athens]\nACTION: fx[100 USD]"
SLOW = 0.5


def slow_weather(city: str) -> str:
    """The weather in a city."""
    time.sleep(SLOW)
    return f"sunny in {city}, 24 C"


def slow_fx(amount: str) -> str:
    """Convert an amount of money to EUR."""
    time.sleep(SLOW)
    return "92 EUR"


async def async_weather(city: str) -> str:
    """The weather in a city."""
    await asyncio.sleep(SLOW)
    return f"sunny in {city}, 24 C"


async def async_fx(amount: str) -> str:
    """Convert an amount of money to EUR."""
    await asyncio.sleep(SLOW)
    return "92 EUR"


def named(fn: Any, name: str) -> Any:
    return tool(fn, name=name)


def observation_of(model: ScriptedModel, call: int) -> str:
    """The last user message of the model's `call`-th request (0-based): the observation it was fed."""
    prompt = model.calls[call].prompt
    assert not isinstance(prompt, str)
    return prompt[-1].content


# --- reading -----------------------------------------------------------------------------------


def test_two_action_lines_are_read_in_order() -> None:
    read = parse_several(BOTH, tools=TOOLS)
    assert isinstance(read, Actions)
    assert [(a.tool, a.input) for a in read.actions] == [("weather", "Athens"), ("fx", "100 USD")]
    assert read.thought == "the two do not depend on each other"
    assert read.discarded == ""


def test_default_reading_is_unchanged() -> None:
    read = parse(BOTH, tools=TOOLS)
    assert read == Action("weather", "Athens", "the two do not depend on each other", "\nACTION: fx[100 USD]")


def test_one_action_reads_as_the_action_it_is() -> None:
    reply = "THOUGHT: one call\nACTION: weather[Athens]\n"
    assert parse_several(reply, tools=TOOLS) == parse(reply, tools=TOOLS)


def test_a_final_after_actions_is_refused() -> None:
    read = parse_several(BOTH + "\nFINAL: sunny and 92 EUR", tools=TOOLS)
    assert isinstance(read, Actions)
    assert len(read.actions) == 2
    assert read.discarded == "\nFINAL: sunny and 92 EUR"
    alone = parse_several("ACTION: weather[Athens]\nFINAL: sunny", tools=TOOLS)
    assert isinstance(alone, Action)
    assert alone.discarded == "\nFINAL: sunny"


@pytest.mark.parametrize(
    "reply",
    [
        "Thought: both\nAction 1: weather\nAction Input 1: Athens\nAction 2: fx\nAction Input 2: 100 USD\n",
        "Thought: both\nAction 1: weather[Athens]\nAction 2: fx[100 USD]\n",
        "**Action 1:** weather[Athens]\n**Action 2:** fx[100 USD]\n",
        'Thought: both\n[{"action": "weather", "action_input": "Athens"}, {"action": "fx", "action_input": "100 USD"}]',
        '```json\n[\n  {"tool": "weather", "tool_input": "Athens"},\n  {"tool": "fx", "tool_input": "100 USD"}\n]\n```',
        '{"action": "weather", "action_input": "Athens"}\n{"action": "fx", "action_input": "100 USD"}',
    ],
    ids=["numbered-langchain", "numbered-brackets", "bold-numbered", "json-array", "fenced-json-array", "json-lines"],
)
def test_dialects_that_write_several_calls(reply: str) -> None:
    read = parse_several(reply, tools=TOOLS)
    assert isinstance(read, Actions), read
    assert [(a.tool, a.input) for a in read.actions] == [("weather", "Athens"), ("fx", "100 USD")]


def test_a_json_array_with_a_record_in_it_is_no_call() -> None:
    reply = 'Thought: x\n[{"action": "weather", "action_input": "Athens"}, {"name": "Bob", "age": 3}]'
    assert isinstance(parse_several(reply, tools=TOOLS), ParseError)


def test_at_most_one_past_the_cap_is_read() -> None:
    reply = "\n".join(f"ACTION: weather[city {i}]" for i in range(50))
    read = parse_several(reply, tools=TOOLS, most=3)
    assert isinstance(read, Actions)
    assert [a.input for a in read.actions] == ["city 0", "city 1", "city 2", "city 3"]


def test_another_parser_is_composed() -> None:
    read = parse_several("ACTION: weather[Athens]\nACTION: fx[100 USD]", tools=TOOLS, parser=parse_strict)
    assert isinstance(read, Actions)
    assert [a.tool for a in read.actions] == ["weather", "fx"]


def test_the_cap_is_validated_when_made() -> None:
    with pytest.raises(ValueError, match=r"Limits.actions must be at least 1"):
        Limits(actions=0)
    with pytest.raises(ValueError, match=r"at most 32"):
        Limits(actions=33)
    with pytest.raises(TypeError, match=r"Limits.actions must be a whole number"):
        Limits(actions=True)
    with pytest.raises(TypeError, match=r"Prompting.parallel must be True or False"):
        Prompting(parallel="yes")  # type: ignore[arg-type]


# --- prompting, grammar, guard --------------------------------------------------------------------


def test_the_instructions_teach_parallel_actions_only_when_on() -> None:
    model = ScriptedModel([])
    off = Agent(model, tools=[slow_weather]).instructions()
    on = Agent(model, tools=[slow_weather], prompting=Prompting(parallel=True), limits=Limits(actions=3)).instructions()
    assert "one ACTION per reply" in off
    assert "OBSERVATION (" not in off
    assert "one ACTION per reply" not in on
    assert "(at most 3)" in on
    # the worked example shows two calls in one reply, and the parser reads them as two
    example = on[on.index("QUESTION:") :]
    reply = example[example.index("THOUGHT:") : example.index("\nOBSERVATION")]
    read = parse_several(reply, tools=("lookup", "calculator"))
    assert isinstance(read, Actions)
    assert [a.input for a in read.actions] == ["apple", "pear"]


def test_the_grammar_admits_several_action_lines_when_on() -> None:
    one = protocol_grammar(["weather", "fx"])
    several = protocol_grammar(["weather", "fx"], actions=3)
    assert "directive ::= action | final" in one
    assert 'directive ::= action ("\\n" action){0,2} | final' in several


def test_the_guard_cuts_a_made_up_labelled_observation() -> None:
    reply = BOTH + "\nOBSERVATION (weather[Athens]): sunny\nOBSERVATION (fx[100 USD]): 90 EUR"
    assert cut(reply).kept.rstrip() == BOTH


# --- the loop, under both drivers -----------------------------------------------------------------


def test_two_slow_tools_finish_in_about_the_time_of_one(drive: Drive) -> None:
    model = ScriptedModel([BOTH, "THOUGHT: both known\nFINAL: sunny, 92 EUR"])
    agent = make_agent(model, [named(slow_weather, "weather"), named(slow_fx, "fx")], parallel=True)
    drive(make_agent(ScriptedModel(["FINAL: warm"]), agent.tools), TASK)  # the tokenizer loads once, not here
    started = time.perf_counter()
    result = drive(agent, TASK)
    elapsed = time.perf_counter() - started
    assert result.answer == "sunny, 92 EUR"
    assert elapsed < 0.9, elapsed  # one after the other they take 1.0 s
    assert result.tool_calls == 2
    assert len(result.steps) == 2
    step = result.steps[0]
    assert isinstance(step.parsed, Actions)
    assert step.observations == ("sunny in Athens, 24 C", "92 EUR")
    assert (
        observation_of(model, 1)
        == "OBSERVATION (weather[Athens]): sunny in Athens, 24 C\nOBSERVATION (fx[100 USD]): 92 EUR"
    )


def test_two_slow_async_tools_run_concurrently(drive: Drive) -> None:
    model = ScriptedModel([BOTH, "FINAL: done"])
    agent = make_agent(model, [named(async_weather, "weather"), named(async_fx, "fx")], parallel=True)
    started = time.perf_counter()
    result = drive(agent, TASK)
    assert time.perf_counter() - started < 0.9
    assert result.steps[0].observations == ("sunny in Athens, 24 C", "92 EUR")


def test_the_same_reply_without_parallel_takes_one_call(drive: Drive) -> None:
    model = ScriptedModel([BOTH, "ACTION: fx[100 USD]", "FINAL: sunny, 92 EUR"])
    agent = make_agent(model, [named(slow_weather, "weather"), named(slow_fx, "fx")])
    result = drive(agent, TASK)
    assert result.answer == "sunny, 92 EUR"
    assert [s.parsed for s in result.steps[:2]] == [
        Action("weather", "Athens", "the two do not depend on each other", "\nACTION: fx[100 USD]"),
        Action("fx", "100 USD"),
    ]
    assert observation_of(model, 1) == "OBSERVATION: sunny in Athens, 24 C"
    # the discarded line is not in the model's recorded turn
    assert "fx" not in model.calls[1].prompt[-2].content  # type: ignore[union-attr]


def test_observations_come_back_in_written_order_whatever_order_the_tools_finish(drive: Drive) -> None:
    finished: list[str] = []
    lock = threading.Lock()

    def late(x: str) -> str:
        """Slow."""
        time.sleep(0.4)
        with lock:
            finished.append("late")
        return "late result"

    def early(x: str) -> str:
        """Fast."""
        time.sleep(0.02)
        with lock:
            finished.append("early")
        return "early result"

    model = ScriptedModel(["ACTION: late[a]\nACTION: early[b]", "FINAL: ok"])
    result = drive(make_agent(model, [late, early], parallel=True), TASK)
    assert finished == ["early", "late"]
    assert result.steps[0].observations == ("late result", "early result")
    assert observation_of(model, 1) == "OBSERVATION (late[a]): late result\nOBSERVATION (early[b]): early result"


def test_a_failing_call_does_not_lose_the_others(drive: Drive) -> None:
    def broken(city: str) -> str:
        """Always fails."""
        raise KeyError(city)

    def hung(city: str) -> str:
        """Overruns its limit."""
        time.sleep(2)
        return "never"

    model = ScriptedModel(
        ["ACTION: broken[Athens]\nACTION: fx[100 USD]\nACTION: hung[Rome]\nACTION: nope[x]", "FINAL: ok"]
    )
    tools = [broken, named(slow_fx, "fx"), tool(hung, timeout=0.2)]
    result = drive(make_agent(model, tools, parallel=True), TASK)
    first, second, third, fourth = result.steps[0].observations
    assert "broken failed with KeyError" in first
    assert second == "92 EUR"
    assert "hung" in third and "0.2" in third  # its own time limit, while fx had the default
    assert "nope" in fourth and "broken, fx, hung" in fourth  # unknown tool, with the tools listed
    assert result.tool_calls == 3


def test_approval_is_asked_for_each_risky_call(drive: Drive) -> None:
    ran: list[str] = []

    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return f"deleted {path}"

    asked: list[Action] = []

    def approve(t: Any, action: Action) -> bool:
        asked.append(action)
        return action.input != "keep.txt"

    model = ScriptedModel(["ACTION: delete[old.txt]\nACTION: delete[keep.txt]\nACTION: fx[1 USD]", "FINAL: ok"])
    agent = make_agent(model, [tool(delete, risky=True), named(slow_fx, "fx")], parallel=True, approve=approve)
    result = drive(agent, TASK)
    assert [a.input for a in asked] == ["old.txt", "keep.txt"]  # fx is not risky: not asked
    assert ran == ["old.txt"]
    observations = result.steps[0].observations
    assert observations[0] == "deleted old.txt"
    assert "declined to run delete[keep.txt]" in observations[1]
    assert observations[2] == "92 EUR"


def test_an_approver_that_stops_the_run_stops_it_before_any_call(drive: Drive) -> None:
    ran: list[str] = []

    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return "deleted"

    model = ScriptedModel(["ACTION: fx[1 USD]\nACTION: delete[a]"])
    agent = make_agent(
        model, [tool(delete, risky=True), named(slow_fx, "fx")], parallel=True, approve=lambda t, a: "stop"
    )
    result = drive(agent, TASK)
    assert result.stop_reason == "declined"
    assert ran == []
    assert result.tool_calls == 0


def test_the_cap_holds(drive: Drive) -> None:
    calls: list[str] = []

    def weather(city: str) -> str:
        """The weather."""
        calls.append(city)
        return f"sunny in {city}"

    reply = "\n".join(f"ACTION: weather[{c}]" for c in ("Athens", "Rome", "Oslo", "Lima", "Kyiv"))
    model = ScriptedModel([reply, "FINAL: ok"])
    result = drive(make_agent(model, [weather], parallel=True, actions=2), TASK)
    assert sorted(calls) == ["Athens", "Rome"]
    assert result.tool_calls == 2
    fed = observation_of(model, 1)
    assert fed.startswith(
        "OBSERVATION (weather[Athens]): sunny in Athens\nOBSERVATION (weather[Rome]): sunny in Rome\n"
    )
    assert "more than 2 ACTION lines" in fed
    assert "weather[Oslo]" in fed
    assert "Lima" not in fed


def test_repeats_apply_per_call(drive: Drive) -> None:
    calls: list[str] = []

    def weather(city: str) -> str:
        """The weather."""
        calls.append(city)
        return f"sunny in {city}"

    model = ScriptedModel(
        [
            "ACTION: weather[Athens]",
            "ACTION: weather[Athens]\nACTION: weather[Rome]\nACTION: weather[Rome]",
            "FINAL: ok",
        ]
    )
    result = drive(make_agent(model, [tool(weather, pure=True)], parallel=True), TASK)
    assert calls == ["Athens", "Rome"]  # each once: a pure tool is not run again
    repeated, rome, twice = result.steps[1].observations
    assert "already called weather[Athens] in step 1" in repeated
    assert rome == "sunny in Rome"
    assert "already called weather[Rome] in step 2" in twice and "sunny in Rome" in twice


def test_a_tool_with_side_effects_runs_each_time_it_is_written(drive: Drive) -> None:
    calls: list[str] = []

    def send(to: str) -> str:
        """Send a message."""
        calls.append(to)
        return "sent"

    model = ScriptedModel(["ACTION: send[ann]\nACTION: send[ann]", "FINAL: ok"])
    result = drive(make_agent(model, [send], parallel=True), TASK)
    assert calls == ["ann", "ann"]
    told = render("corrections/repeated_call", result="sent", tool="send", input="ann", times=2)  # issue 33
    assert result.steps[0].observations == ("sent", told)


def test_a_completion_model_gets_the_labelled_observations(drive: Drive) -> None:
    model = ScriptedModel([" both\nACTION: weather[Athens]\nACTION: fx[100 USD]", " done\nFINAL: ok"], api="completion")
    result = drive(make_agent(model, [named(slow_weather, "weather"), named(slow_fx, "fx")], parallel=True), TASK)
    assert result.answer == "ok"
    prompt = model.calls[1].prompt
    assert isinstance(prompt, str)
    assert prompt.endswith(
        "ACTION: weather[Athens]\nACTION: fx[100 USD]\n"
        "OBSERVATION (weather[Athens]): sunny in Athens, 24 C\nOBSERVATION (fx[100 USD]): 92 EUR\nTHOUGHT:"
    )


def test_a_parallel_request_stops_at_a_labelled_observation_too() -> None:
    model = ScriptedModel(["FINAL: ok"])
    make_agent(model, [named(slow_weather, "weather")], parallel=True).run(TASK)
    assert "\nOBSERVATION (" in model.calls[0].stop
    off = ScriptedModel(["FINAL: ok"])
    make_agent(off, [named(slow_weather, "weather")]).run(TASK)
    assert "\nOBSERVATION (" not in off.calls[0].stop


def test_the_budget_counts_every_observation(drive: Drive) -> None:
    def big(x: str) -> str:
        """Long output."""
        return "word " * 2000

    model = ScriptedModel(["ACTION: big[a]\nACTION: big[b]", "FINAL: ok"])
    result = drive(make_agent(model, [big], parallel=True, observation_tokens=100), TASK)
    a, b = result.steps[0].observations
    assert len(a.split()) < 200 and len(b.split()) < 200  # each cut to observation_tokens
    assert result.steps[1].usage.prompt_tokens > result.steps[0].usage.prompt_tokens + 200  # both were sent


def test_the_trace_records_each_call(drive: Drive) -> None:
    model = ScriptedModel([BOTH, "FINAL: ok"])
    result = drive(make_agent(model, [named(slow_weather, "weather"), named(slow_fx, "fx")], parallel=True), TASK)
    written = json.loads(json.dumps(step_dict(result.steps[0])))
    assert written["parsed"]["kind"] == "actions"
    assert [a["tool"] for a in written["parsed"]["actions"]] == ["weather", "fx"]
    assert written["observations"] == ["sunny in Athens, 24 C", "92 EUR"]
    back = step_from(written)
    assert back.parsed == result.steps[0].parsed
    assert back.observations == result.steps[0].observations


def test_a_final_in_a_reply_with_actions_is_not_taken(drive: Drive) -> None:
    model = ScriptedModel([BOTH + "\nFINAL: made up", "FINAL: real"])
    result = drive(make_agent(model, [named(slow_weather, "weather"), named(slow_fx, "fx")], parallel=True), TASK)
    assert result.answer == "real"
    assert result.tool_calls == 2
    assert isinstance(result.steps[0].parsed, Actions)
    assert isinstance(result.steps[1].parsed, Final)


def test_a_reply_cut_inside_its_last_action_runs_none_of_them(drive: Drive) -> None:
    calls: list[str] = []

    def weather(city: str) -> str:
        """The weather."""
        calls.append(city)
        return "sunny"

    cut_reply = Reply("ACTION: weather[Athens]\nACTION: weather[Ro", finish_reason="length")
    model = ScriptedModel([cut_reply, "FINAL: ok"])
    result = drive(make_agent(model, [weather], parallel=True), TASK)
    assert calls == []
    assert (result.steps[0].observation or "").startswith("Your reply was cut off at its limit")


def test_a_token_budget_holds_with_parallel_actions(drive: Drive) -> None:
    def big(x: str) -> str:
        """Long output."""
        return f"{x}: " + "word " * 400

    model = ScriptedModel(["ACTION: big[a]\nACTION: big[b]\nACTION: big[c]", "FINAL: ok"])
    result = drive(make_agent(model, [big], parallel=True, tokens=2500, steps=10), TASK)
    # the three observations (about 1200 tokens) leave no room for a normal call and the forced one
    assert result.usage.total_tokens <= 2500
    assert len(result.steps) == 2
    assert result.stop_reason == "max_tokens"
    assert result.answer == "ok"
    assert result.forced


@pytest.mark.parametrize(
    "reply",
    [
        "ACTION: weather[x]\n" * 6000,
        "Action 1: weather" + " " * 100_000,
        "Thought:" + " " * 100_000 + "\n[{" * 10,
        "[" + "\n" * 100_000 + "{",
        "[" + '{"action": "weather", "action_input": "x"}, ' * 2000 + "]",
    ],
    ids=["many-actions", "spaces-after-a-numbered-label", "spaces-then-array", "newlines-in-array", "long-array"],
)
def test_a_pumped_reply_is_read_in_linear_time(reply: str) -> None:
    started = time.perf_counter()
    read = parse_several(reply, tools=TOOLS, most=4)
    assert time.perf_counter() - started < 2.0
    if isinstance(read, Actions):
        assert len(read.actions) <= 5


def test_no_more_than_steps_times_actions_tools_run(drive: Drive) -> None:
    """guarantees.md: no more than `steps` tools run, `steps` x `Limits.actions` with parallel
    actions; a model that never stops acting reaches the bound (the forced last call runs none)."""
    ran: list[str] = []

    def echo(x: str) -> str:
        """Echo the text."""
        ran.append(x)
        return x

    three = "ACTION: echo[a]\nACTION: echo[b]\nACTION: echo[c]"
    limits = Limits(steps=3, actions=2)
    agent = Agent(ScriptedModel([three] * 6), tools=[echo], prompting=Prompting(parallel=True), limits=limits)
    result = drive(agent, "Echo.")
    assert result.stop_reason == "max_steps"
    assert result.tool_calls == len(ran) == limits.steps * limits.actions


@pytest.mark.parametrize(
    "reply",
    [
        "I'll check both.\n[weather(city='Athens'), fx(amount='100 USD')]",
        '<tool_call>\n{"name": "weather", "arguments": {"city": "Athens"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "fx", "arguments": {"amount": "100 USD"}}\n</tool_call>',
    ],
    ids=["python-call-list", "hermes-blocks"],
)
def test_families_that_write_several_calls(reply: str) -> None:
    read = parse_several(reply, tools=TOOLS)
    assert isinstance(read, Actions), read
    assert [a.tool for a in read.actions] == ["weather", "fx"]
    single = parse(reply, tools=TOOLS)  # outside parallel mode: the first call, the rest discarded
    assert isinstance(single, Action)
    assert single.tool == "weather"
    assert single.discarded.strip()
