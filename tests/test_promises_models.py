"""Issue 13's promises at the Agent level, attacked from the outside: reasoning models, the stop
guard's false positives, tool names as people register them, the dialects still missed, and
malformed server answers that must not escape Agent.run.

Written from the issue text, README and the contracts only. Every case runs through Agent (not
only `parse`) and asserts what the user sees: which tool ran with what, the answer, what the model
is sent in later turns, the stop reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import httpx2 as httpx
import openai
import pytest

from react_text import (
    Agent,
    Final,
    OpenAIChat,
    OpenAICompletion,
    ParseError,
    Reply,
    Request,
    RunResult,
    ScriptedModel,
    Step,
    tool,
)
from react_text.core.limits import Prompting

# ---------------------------------------------------------------------------------------------
# ASSUMPTIONS about details the contract leaves open. Adjust names here, never the assertions.
# ---------------------------------------------------------------------------------------------


def step_reasoning(step: Step) -> str | None:
    """The reasoning a Step keeps (the server's `reasoning_content`, or inline <think> text).

    Issue 13 promises the reasoning "is kept on the Step and in the trace" without naming the field.
    """
    return step.reasoning  # type: ignore[attr-defined, no-any-return]


# The stop sequences that would fire inside a model's thinking: the observation label.
OBSERVATION_STOP = re.compile(r"observation", re.IGNORECASE)

# ---------------------------------------------------------------------------------------------

TASK = "What does a train ticket cost?"


def sent(request: Request) -> str:
    """Everything a request sends, as one text (messages joined, or the transcript)."""
    if isinstance(request.prompt, str):
        return request.prompt
    return "\n".join(m.content for m in request.prompt)


# --- tools that record what they received ------------------------------------------------------

CALLS: list[tuple[str, dict[str, Any]]] = []


@pytest.fixture(autouse=True)
def _fresh_calls() -> None:
    CALLS.clear()


def lookup(item: str) -> str:
    """Return the price of one item."""
    CALLS.append(("lookup", dict(locals())))
    return "89"


def wipe(target: str) -> str:
    """Erase a disk."""
    CALLS.append(("wipe", dict(locals())))
    return "wiped"


def python(code: str) -> str:
    """Run Python code."""
    CALLS.append(("python", dict(locals())))
    return "done"


def now() -> str:
    """The time."""
    CALLS.append(("now", dict(locals())))
    return "12:00"


def add(a: float, b: float) -> str:
    """Add two numbers."""
    CALLS.append(("add", dict(locals())))
    return str(a + b)


def named(name: str, parameter: str = "query") -> object:
    """A tool registered under `name` (spaces, hyphens, dots, any letters) taking one input."""

    def fn(**kwargs: str) -> str:
        CALLS.append((name, kwargs))
        return f"{name} ran"

    source = f"def tool_fn({parameter}: str) -> str:\n    return fn({parameter}={parameter})\n"
    namespace: dict[str, Any] = {"fn": fn}
    exec(source, namespace)
    namespace["tool_fn"].__doc__ = f"The {name} tool."
    return tool(namespace["tool_fn"], name=name)


def 加法(a: int, b: int) -> str:
    """把两个数相加。"""
    CALLS.append(("加法", dict(locals())))
    return str(a + b)


def run(
    driver: Callable[[Agent, str], RunResult], replies: list[str | Reply], tools: list[object], **options: Any
) -> tuple[ScriptedModel, RunResult]:
    model = ScriptedModel(replies, api=options.pop("api", "chat"))
    result = driver(Agent(model, tools=tools, **options), TASK)
    return model, result


# --- reasoning models -----------------------------------------------------------------------------

THINKING_REPLY = (
    "<think>\nI'll call lookup; the Observation: will tell me the price.\n</think>\n"
    "THOUGHT: I need the price.\nACTION: lookup[train]"
)


def test_observation_label_inside_think_does_not_break_the_step(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 13: the guard cut at the Observation: inside the think block, so the step became a format error."""
    model, result = run(driver, [THINKING_REPLY, "FINAL: 89"], [lookup])
    model.assert_all_used()
    assert CALLS == [("lookup", {"item": "train"})]
    assert not isinstance(result.steps[0].parsed, ParseError), result.steps[0].parsed
    assert (result.stop_reason, result.answer) == ("final", "89")


def test_final_after_thinking_about_observations(driver: Callable[[Agent, str], RunResult]) -> None:
    reply = "<think>\nThe last OBSERVATION: said 89, and\nObservation: is what I wait for.\n</think>\nTHOUGHT: known.\nFINAL: 89"
    _model, result = run(driver, [reply], [lookup])
    assert (result.stop_reason, result.answer) == ("final", "89")
    assert CALLS == []


def test_server_reasoning_is_kept_on_the_step_and_never_parsed(driver: Callable[[Agent, str], RunResult]) -> None:
    """reasoning_content split out by the server: kept on the Step, never read as the protocol."""
    reasoning = "Plan: ACTION: wipe[disk]\nObservation: wiped\nFINAL: 0"
    reply = Reply("THOUGHT: I need the price.\nACTION: lookup[train]", reasoning=reasoning)
    _model, result = run(driver, [reply, "FINAL: 89"], [lookup, wipe])
    assert CALLS == [("lookup", {"item": "train"})]
    assert (result.stop_reason, result.answer) == ("final", "89")
    kept = step_reasoning(result.steps[0])
    assert kept is not None and "Plan: ACTION: wipe[disk]" in kept, "the reasoning was lost from the Step"


def test_an_answer_in_the_reasoning_is_not_the_answer(driver: Callable[[Agent, str], RunResult]) -> None:
    reply = Reply("FINAL: 89", reasoning="Maybe ACTION: lookup[train] first? No.")
    _, result = run(driver, [reply], [lookup])
    assert (result.answer, CALLS) == ("89", [])

    CALLS.clear()
    _, result = run(driver, [Reply("", reasoning="FINAL: 42"), "FINAL: 7"], [lookup])
    assert result.answer == "7", "an empty reply was read from its reasoning"
    assert not any(isinstance(step.parsed, Final) and step.parsed.answer == "42" for step in result.steps)


SECRET = "zebra-plan-4471"


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(Reply("THOUGHT: price.\nACTION: lookup[train]", reasoning=f"{SECRET}: look it up"), id="server"),
        pytest.param(f"<think>\n{SECRET}: look it up\n</think>\nTHOUGHT: price.\nACTION: lookup[train]", id="inline"),
    ],
)
def test_reasoning_is_not_sent_back_by_default(driver: Callable[[Agent, str], RunResult], first: str | Reply) -> None:
    """Issue 13: reasoning is not sent back in later turns by default (chat templates drop it)."""
    model, result = run(driver, [first, "FINAL: 89"], [lookup])
    assert result.answer == "89"
    assert SECRET not in sent(model.calls[1])
    assert "ACTION: lookup[train]" in sent(model.calls[1]), "the reply itself must still be in the history"


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(Reply("THOUGHT: price.\nACTION: lookup[train]", reasoning=f"{SECRET}: look it up"), id="server"),
        pytest.param(f"<think>\n{SECRET}: look it up\n</think>\nTHOUGHT: price.\nACTION: lookup[train]", id="inline"),
    ],
)
def test_reasoning_is_sent_back_when_asked(driver: Callable[[Agent, str], RunResult], first: str | Reply) -> None:
    model, result = run(driver, [first, "FINAL: 89"], [lookup], prompting=Prompting(reasoning="keep"))
    assert result.answer == "89"
    assert SECRET in sent(model.calls[1])


def test_stop_inside_thinking_on_a_chat_endpoint_recovers(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 13: a chat server stopped at the label inside the model's thinking. The engine stops
    sending `stop` to that model and relies on its own cut."""
    stopped = Reply("<think>\nI will look it up. The", finish_reason="stop")
    resumed = "<think>\nI will look it up. The Observation: will say.\n</think>\nTHOUGHT: price.\nACTION: lookup[train]"
    model, result = run(driver, [stopped, resumed, "FINAL: 89"], [lookup])
    assert (result.stop_reason, result.answer) == ("final", "89"), result.error
    assert CALLS == [("lookup", {"item": "train"})]
    later = [s for call in model.calls[1:] for s in call.stop]
    assert not any(OBSERVATION_STOP.search(s) for s in later), f"stop still sent: {later}"


def test_stop_inside_thinking_on_a_completion_endpoint_continues(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 13: for a completion endpoint, the engine continues the same text."""
    stopped = Reply("<think>\nI will look it up. The", finish_reason="stop")
    rest = " price matters.\n</think>\nTHOUGHT: price.\nACTION: lookup[train]"
    model, result = run(driver, [stopped, rest, "FINAL: 89"], [lookup], api="completion")
    assert (result.stop_reason, result.answer) == ("final", "89"), result.error
    assert CALLS == [("lookup", {"item": "train"})]
    continued = model.calls[1].prompt
    assert isinstance(continued, str) and "<think>\nI will look it up. The" in continued, continued[-200:]
    # What follows the stopped text is nothing, or at most the stop sequence that fired, put back.
    after = continued.rsplit("I will look it up. The", 1)[1].strip()
    assert after in {"", *(stop.strip() for stop in model.calls[0].stop)}, f"not a continuation: {after!r}"


# --- the stop guard's false positives ------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    ["Streaming software: OBS", "The probe made its first Observation", "Observations: 3 of 4 passed"],
)
def test_an_answer_keeps_its_last_words(driver: Callable[[Agent, str], RunResult], answer: str) -> None:
    """Issue 13: `FINAL: Streaming software: OBS` became `Streaming software:`."""
    _, result = run(driver, [f"THOUGHT: known.\nFINAL: {answer}"], [lookup])
    assert (result.stop_reason, result.answer) == ("final", answer)


def test_a_bracketed_input_that_closes_is_never_cut(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 13: `ACTION: python[print('Observation: done')]` ran the tool with `print('`."""
    run(driver, ["ACTION: python[print('Observation: done')]", "FINAL: done"], [python])
    assert CALLS == [("python", {"code": "print('Observation: done')"})]


def test_a_made_up_observation_is_still_cut(driver: Callable[[Agent, str], RunResult]) -> None:
    """The guard may still cut a made-up observation: the tool's real result is what comes back."""
    model, _ = run(driver, ["ACTION: lookup[train]\nObservation: 1000\nFINAL: 1000", "FINAL: 89"], [lookup])
    assert CALLS == [("lookup", {"item": "train"})]
    assert "1000" not in sent(model.calls[1])


# --- tool names as people register them ------------------------------------------------------------

NAMES = [
    pytest.param(
        ["Use Requests"],
        "Thought: I should fetch the page.\nAction: Use Requests\nAction Input: https://example.com/a",
        ("Use Requests", "https://example.com/a"),
        id="spaces",
    ),
    pytest.param(
        ["Use Requests"],
        "Thought: fetch it.\nAction: use requests\nAction Input: https://example.com/b",
        ("Use Requests", "https://example.com/b"),
        id="case-insensitive",
    ),
    pytest.param(
        ["Wikipedia Research Tool", "Use Requests"],
        "Thought: look it up.\nAction: Wikipedia Research Tool\nAction Input: Ada Lovelace",
        ("Wikipedia Research Tool", "Ada Lovelace"),
        id="three-words",
    ),
    pytest.param(["get-weather"], "ACTION: get-weather[Paris]", ("get-weather", "Paris"), id="hyphen"),
    pytest.param(["fs.read_file"], "ACTION: fs.read_file[notes.txt]", ("fs.read_file", "notes.txt"), id="dot"),
    pytest.param(
        ["search", "search-web"], "ACTION: search-web[cats]", ("search-web", "cats"), id="longest-registered-name"
    ),
    pytest.param(
        ["lookup"],
        "Thought: price.\nAction: lookup (look up a price)\nAction Input: train",
        ("lookup", "train"),
        id="name-with-a-gloss",
    ),
    pytest.param(["Search"], 'Tool: Search Tool Input: "cats"', ("Search", "cats"), id="one-line-haystack"),
]


@pytest.mark.parametrize(("names", "reply", "expected"), NAMES)
def test_registered_names_run_the_right_tool(
    driver: Callable[[Agent, str], RunResult], names: list[str], reply: str, expected: tuple[str, str]
) -> None:
    model, result = run(driver, [reply, "FINAL: done"], [named(name) for name in names])
    model.assert_all_used()
    assert [(expected[0], {"query": expected[1]})] == CALLS
    assert result.answer == "done"


def test_a_non_ascii_tool_name_runs(driver: Callable[[Agent, str], RunResult]) -> None:
    run(driver, ["THOUGHT: 相加。\nACTION: 加法[2, 3]", "FINAL: 5"], [加法])
    assert CALLS == [("加法", {"a": 2, "b": 3})]


# --- the dialects still missed --------------------------------------------------------------------

STRUCTURED_CHAT = (
    "Thought: I need the price of a train ticket.\n"
    "    Action:\n"
    "    ```json\n"
    "    {\n"
    '      "action": "lookup",\n'
    '      "action_input": "train"\n'
    "    }\n"
    "    ```"
)

DIALECTS = [
    pytest.param(STRUCTURED_CHAT, ("lookup", {"item": "train"}), id="structured-chat-indented"),
    pytest.param(
        'Thought: I need the price.Action:lookupAction Input:{"item": "train"}',
        ("lookup", {"item": "train"}),
        id="glued-labels",
    ),
    pytest.param("Thought: I need the time.\nAction: now\nAction Input:", ("now", {}), id="empty-action-input"),
    pytest.param("Thought: I need the time.\nAction: now\nAction Input: \n", ("now", {}), id="blank-action-input"),
    pytest.param("Thought: I need the time.\nTool: now\nTool Input:", ("now", {}), id="empty-tool-input"),
    pytest.param(
        "Thought: add them.\nAction: add\nAction Input: {'a': 2, 'b': 3}",
        ("add", {"a": 2, "b": 3}),
        id="python-literal",
    ),
    pytest.param(
        "Thought: price.\nAction: lookup\nAction Input: {'item': 'train'}",
        ("lookup", {"item": "train"}),
        id="python-literal-one-key",
    ),
]


@pytest.mark.parametrize(("reply", "expected"), DIALECTS)
def test_dialects_run_the_tool(
    driver: Callable[[Agent, str], RunResult], reply: str, expected: tuple[str, dict[str, Any]]
) -> None:
    model, result = run(driver, [reply, "FINAL: done"], [lookup, now, add])
    model.assert_all_used()
    assert [expected] == CALLS
    assert result.answer == "done"


@pytest.mark.parametrize(
    "reply",
    [
        "Thought: I know it.\nAction: None\nFinal Answer: 89",
        "Thought: I know it.\nAction: I have the final answer\nFinal Answer: 89",
    ],
)
def test_action_none_then_final_answer_is_the_answer(driver: Callable[[Agent, str], RunResult], reply: str) -> None:
    _, result = run(driver, [reply], [lookup, now, add])
    assert (result.stop_reason, result.answer, CALLS) == ("final", "89", [])


# --- malformed server answers never escape Agent.run -----------------------------------------------
# These exercise the backends through the sync driver: the real openai client over a mock transport.
# (How an async run is handed a mock transport is not in the contract; see the report.)

KEY = "sk-test-secret-0123456789"

MALFORMED = [
    pytest.param(lambda: httpx.Response(200, json=completion_body(choices=[])), id="empty-choices"),
    pytest.param(lambda: httpx.Response(200, json=completion_body(choices=None)), id="choices-null"),
    pytest.param(
        lambda: httpx.Response(
            200,
            text="<!doctype html><html><body>Welcome to nginx!</body></html>",
            headers={"content-type": "text/html"},
        ),
        id="html-page",
    ),
]


def completion_body(choices: object) -> dict[str, object]:
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": choices}


@pytest.mark.parametrize("backend", [OpenAIChat, OpenAICompletion])
@pytest.mark.parametrize("answer", MALFORMED)
def test_malformed_server_answer_is_a_model_error(backend: Any, answer: Callable[[], httpx.Response]) -> None:
    """Issue 13: empty choices, choices null and an HTML page with status 200 escaped Agent.run as
    IndexError, TypeError, AttributeError."""
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return answer()

    with httpx.Client(transport=httpx.MockTransport(handler)) as http:
        client = openai.OpenAI(api_key=KEY, base_url="http://test.invalid/v1", http_client=http, max_retries=0)
        result = Agent(backend("m", client=client), tools=[lookup]).run(TASK)
    assert seen, "the mock server was never asked"
    assert result.stop_reason == "model_error"
    assert result.error and KEY not in result.error
    assert CALLS == []
