"""Issue 19's dialect families, read through `parse` and run through `Agent` (both drivers): the
right tool runs with the right bound arguments, a tool whose arguments cannot be read never runs,
and the new code paths stay linear on 100 KB replies."""

from __future__ import annotations

import time
from typing import Any

import pytest
from conftest import Drive

from react_text import Agent, ScriptedModel
from react_text.core.types import Action, Final, ParseError
from react_text.parser import parse
from react_text.prompting import render

CALLS: list[tuple[str, dict[str, Any]]] = []


@pytest.fixture(autouse=True)
def _fresh_calls() -> None:
    CALLS.clear()


def search(query: str) -> str:
    """Search the web."""
    CALLS.append(("search", {"query": query}))
    return "results"


def get_weather(city: str) -> str:
    """The weather in a city."""
    CALLS.append(("get_weather", {"city": city}))
    return "sunny"


def hotel_search(city: str, guests: int) -> str:
    """Find hotels."""
    CALLS.append(("hotel_search", {"city": city, "guests": guests}))
    return "3 hotels"


def write_file(file_name: str, content: str) -> str:
    """Write a file."""
    CALLS.append(("write_file", {"file_name": file_name, "content": content}))
    return "written"


TOOLS = [search, get_weather, hotel_search, write_file]

RUNS = {
    "Semantic Kernel stepwise": (
        '[THOUGHT]\nI need to search.\n[ACTION]\n{"action": "search", "action_variables": {"query": "cats"}}',
        ("search", {"query": "cats"}),
    ),
    "Bee, a made-up Tool Output and answer cut": (
        'Thought: weather\nTool Name: get_weather\nTool Input: {"city": "Paris"}\n'
        'Tool Output: {"temp": 30}\nFinal Answer: It is hot.',
        ("get_weather", {"city": "Paris"}),
    ),
    "BeeAI Function Name": (
        'Thought: weather\nFunction Name: get_weather\nFunction Input: {"city": "Oslo"}',
        ("get_weather", {"city": "Oslo"}),
    ),
    "AutoGPT command": (
        '{"thoughts": {"text": "search"}, "command": {"name": "search", "args": {"query": "coffee"}}}',
        ("search", {"query": "coffee"}),
    ),
    "SuperAGI tool": (
        '{"thoughts": {"text": "w"}, "tool": {"name": "write_file", "args": {"file_name": "a.txt", "content": "hi"}}}',
        ("write_file", {"file_name": "a.txt", "content": "hi"}),
    ),
    "ModelScope api_name": (
        '好的。\n<|startofthink|>```JSON\n{"api_name": "hotel_search", "parameters": {"city": "上海", "guests": 2}}\n'
        "```<|endofthink|>",
        ("hotel_search", {"city": "上海", "guests": 2}),
    ),
    "a Python-literal blob": (
        "Action:\n{'action': 'get_weather', 'action_input': {'city': 'Paris'}}",
        ("get_weather", {"city": "Paris"}),
    ),
    "capitalised keys": ('{"Action": "search", "Action Input": {"query": "cats"}}', ("search", {"query": "cats"})),
    "tool_call wrapper": (
        '{"tool_call": {"name": "get_weather", "arguments": {"city": "Rome"}}}',
        ("get_weather", {"city": "Rome"}),
    ),
    "a raw newline in a JSON string": (
        'Action:\n```json\n{"action": "write_file", "action_input": {"file_name": "a", "content": "one\ntwo"}}\n```',
        ("write_file", {"file_name": "a", "content": "one\ntwo"}),
    ),
    "an echoed observation first": (
        "Observation: 89\nThought: now the weather\nAction: get_weather\nAction Input: Paris",
        ("get_weather", {"city": "Paris"}),
    ),
    "crewAI ** before the input": (
        'Thought: look\nAction: search\nAction Input: ** {"query": "cats"}',
        ("search", {"query": "cats"}),
    ),
    "CRLF line ends": ("Thought: x\r\nAction: search\r\nAction Input: dogs\r\n", ("search", {"query": "dogs"})),
    "a fence around the reply": (
        "```\nThought: x\nAction: search\nAction Input: owls\n```",
        ("search", {"query": "owls"}),
    ),
}


@pytest.mark.parametrize(("reply", "call"), RUNS.values(), ids=list(RUNS))
def test_a_dialect_runs_the_right_tool_with_its_arguments(drive: Drive, reply: str, call: tuple[str, dict]) -> None:
    model = ScriptedModel([reply, "FINAL: done"])
    result = drive(Agent(model, tools=TOOLS), "task")
    model.assert_all_used()
    assert [call] == CALLS
    assert result.answer == "done"  # not an answer the model made up after its own call


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("[THOUGHT]\nI know.\n[FINAL ANSWER] 42", "42"),
        ("FINAL_ANSWER: 42", "42"),
        ("Thought: Do I need to use a tool? No\nAI: Hello there!", "Hello there!"),
        ("Thought: done\nFinalAnswer: 234", "234"),
        ('{"thoughts": {"text": "done"}, "tool": {"name": "finish", "args": {"reason": "All done."}}}', "All done."),
    ],
)
def test_a_dialect_final_answer_ends_the_run(drive: Drive, reply: str, answer: str) -> None:
    result = drive(Agent(ScriptedModel([reply]), tools=TOOLS), "task")
    assert (result.stop_reason, result.answer, CALLS) == ("final", answer, [])


@pytest.mark.parametrize(
    "reply",
    [
        '[ACTION] {"action": "search", "variables": {"query": "cats"}}',
        'Action:\n```json\n{"tool": "search", "options": {"q": "cats"}}\n```',
        '{"action": "search", "with": {"q": "cats"}}',
    ],
)
def test_a_tool_whose_arguments_cannot_be_read_never_runs(drive: Drive, reply: str) -> None:
    result = drive(Agent(ScriptedModel([reply, "FINAL: done"]), tools=TOOLS), "task")
    assert CALLS == []
    first = result.steps[0].parsed
    assert isinstance(first, ParseError) and first.reason == "unread_arguments"
    assert first.message == render("errors/unread_arguments")
    assert result.steps[0].observation is not None and first.message in result.steps[0].observation
    assert result.answer == "done"


@pytest.mark.parametrize(
    "reply",
    [
        'Thought: The user record is {"name": "Bob", "age": 42}. I still need his city.',
        'Thought: the prompt says to call {"action": "search", "action_input": "x"} like that. Which city?',
        "[THOUGHT]\nThe tools take {'action': 'search', 'action_input': 'cats'}; I must ask first.",
    ],
)
def test_json_quoted_in_a_thought_is_not_a_call(drive: Drive, reply: str) -> None:
    result = drive(Agent(ScriptedModel([reply, "FINAL: done"]), tools=TOOLS), "task")
    assert CALLS == []
    first = result.steps[0].parsed
    assert isinstance(first, ParseError) and first.reason == "no_directive"


def test_a_blob_alone_or_after_plain_prose_is_still_a_call() -> None:
    assert parse('{"action": "search", "action_input": "cats"}') == Action("search", "cats")
    assert parse('I will call it.\n{"action": "search", "action_input": "cats"}') == Action("search", "cats")
    assert parse('{"action": "now"}') == Action("now", "")  # only a name: called with what was written


def test_bracketed_labels_keep_the_thought_and_the_rest() -> None:
    parsed = parse('[THOUGHT]\nI need cats.\n[ACTION] {"action": "search", "action_variables": {"q": "x"}}\nmore')
    assert parsed == Action("search", '{"q": "x"}', "I need cats.", "\nmore")
    assert parse("[FINAL ANSWER]\n42\n\nThat is all.") == Final("42", "", "\n\nThat is all.")
    assert parse("[final answer] 42") == Final("42")


def test_a_crlf_reply_is_read_with_lf_line_ends_and_discards_its_own_text() -> None:
    parsed = parse("Thought: x\r\nAction: python\r\nAction Input: a = 1\r\nprint(a)\r\nObservation: 1\r\n")
    assert parsed == Action("python", "a = 1\nprint(a)", "x", "\r\nObservation: 1\r\n")
    mixed = "ACTION: python[```\nprint(1)\r\n```]"  # mixed line ends are read as written
    assert parse(mixed) == Action("python", "print(1)\r")


def test_a_fence_around_the_reply_is_unwrapped_once() -> None:
    assert parse("```\nFINAL: 42\n```") == Final("42")  # the closing fence is the reply's, not discarded
    assert parse("```\nACTION: a[b]\nmore\n```") == Action("a", "b", "", "\nmore\n```")
    nested = parse("````\n```\nFINAL: 42\n```\n````")  # the outer fence only; the inner one is read as text
    assert isinstance(nested, Final) and nested.answer == "42" and nested.discarded == ""


def test_python_literal_blobs_are_read_up_to_a_bound() -> None:
    assert parse("{'action': 'say', 'action_input': \"it's\"}") == Action("say", "it's")
    big = "{'action': 'say', 'action_input': '" + "x" * 5_000 + "'}"
    assert isinstance(parse(big), ParseError)  # past 4096 characters a literal is not read


PUMPED = {
    "bracket labels": "[ACTION]" * 12_500,
    "bracket thoughts": "[THOUGHT]\n" * 10_000,
    "open brackets after a line start": "\n[" * 50_000,
    "literal openers": "{'" * 50_000,
    "an open literal": "{'action': '" + "x" * 100_000,
    "literal braces": "{'a': {" * 14_000,
    "spaces in a glued label": "FINAL" + " " * 100_000 + "ANSWER:",
    "separators in a label": "Final" + "_-" * 50_000 + "Answer: 1",
    "AI labels": "AI:\n" * 25_000,
    "decoration after the colon": "Action: x\nAction Input:" + " **" * 33_000,
    "stars after an input label": "Action: x\nAction Input: " + "*" * 100_000,
    "tool captions": "Tool Name: x\n" + "Tool Caption: y\n" * 7_000,
    "CRLF": "\r\n" * 50_000,
    "CRLF labels": "Thought: x\r\n" * 8_000,
    "fences around": "```\n" + "x\n" * 50_000 + "```",
    "quoted blobs in a thought": "Thought: " + 'see {"name": "a", "b": 1} ' * 4_000,
    "raw newlines in a JSON string": '{"action": "x", "action_input": "' + "\n" * 100_000,
    "tool outputs": "Tool Output: x\n" * 7_000,
    "bracketed observations": "[OBSERVATION]\n" * 7_000,
    "an echo then spaces": "Observation: 1\n" + " " * 100_000,
}


@pytest.mark.parametrize("text", PUMPED.values(), ids=list(PUMPED))
def test_the_new_paths_stay_linear_on_100kb(text: str) -> None:
    # As test_parser's adversarial replies: a generous bound that only superlinear work would break.
    started = time.process_time()
    parse(text)
    parse(text, tools=("x", "search"))
    assert time.process_time() - started < 2.0
