"""What the engine's cost cuts (issue 32) keep: each shortcut gives what the long way gave.

The speed itself is bench/engine_overhead.py's to measure (docs/benchmarks.md); these tests time
nothing. They hold the memoised token counter to tiktoken's own count, the bound that lets a short
tool result go uncounted to the counters, the binder's one-value path to `Signature.bind`, the
instruction block counted once per process to the count of it, and the checks written out to the
ones they replace.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
from collections.abc import Callable
from typing import Literal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from react_text import Agent, Limits, Reply, ScriptedModel, Usage
from react_text.core.model_info import describe
from react_text.core.types import AsyncModel, Message, Request
from react_text.observers.observing import Quiet
from react_text.parser.common import tool_names
from react_text.prompting import instructions
from react_text.tokens import meter
from react_text.tokens.history import History
from react_text.tokens.truncation import truncate
from react_text.tools import binding
from react_text.tools.tool import tool

TEXTS = [
    "",
    "hello world",
    "THOUGHT: step 7, looking up item 7.\nACTION: echo[item 7]",
    "<|endoftext|> and <|fim_prefix|> are text here, not special tokens",
    "naïve café, 東京, emoji 🙂🙂🙂 and \u200b zero width",
    " " * 70_000 + "spaces then words",  # longer than one chunk (meter._CHUNK)
]


# --- the token counter -------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["gpt-4o-mini", "gpt-4", "SmolLM2-135M-Instruct"])
def test_the_counter_is_made_once_per_model_name(model: str) -> None:
    assert meter.counter(model) is meter.counter(model)


@pytest.mark.parametrize("text", TEXTS)
def test_the_memoised_counter_counts_as_tiktoken_does(text: str) -> None:
    for model in ("gpt-4o-mini", "gpt-4"):
        enc = meter.encoding(meter.encoding_name(model))
        direct = sum(len(enc.encode(text[i : i + 65536], disallowed_special=())) for i in range(0, len(text), 65536))
        assert meter.counter(model)(text) == direct
    unknown = meter.encoding("cl100k_base")
    direct = sum(len(unknown.encode(text[i : i + 65536], disallowed_special=())) for i in range(0, len(text), 65536))
    assert meter.counter("SmolLM2-135M-Instruct")(text) == math.ceil(direct * 1.25)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
@example("🙂" * 40)
@example("\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f")  # a flag: 7 code points
def test_no_text_counts_more_than_its_counter_says_a_character_can(text: str) -> None:
    for model in ("gpt-4o-mini", "gpt-4", "SmolLM2-135M-Instruct"):
        count = meter.counter(model)
        assert count(text) <= len(text) * count.most_per_char  # type: ignore[attr-defined]


def test_the_agents_memo_carries_the_bound() -> None:
    agent = Agent(_Sync(), tools=[])  # no counter of its own: tiktoken's, by its name
    assert agent.counter.most_per_char == 4  # type: ignore[attr-defined]
    assert not hasattr(Agent(_Sync(), tools=[], count_tokens=len).counter, "most_per_char")


class _Counting:
    """A counter that notes what it was asked."""

    def __init__(self, most: int | None) -> None:
        self.asked: list[str] = []
        if most is not None:
            self.most_per_char = most

    def __call__(self, text: str) -> int:
        self.asked.append(text)
        return len(text.split())


@pytest.mark.parametrize("text", ["item 3", "a b c d e f g h i j", "x " * 40])
def test_a_short_result_is_kept_whole_without_counting_it_when_the_counter_bounds_it(text: str) -> None:
    bounded, plain = _Counting(4), _Counting(None)
    assert truncate(text, 1000, bounded) == truncate(text, 1000, plain) == text
    assert bounded.asked == []
    assert plain.asked  # a counter that says no bound is asked, as before


def test_a_result_near_its_allowance_is_still_counted_and_cut() -> None:
    count = functools.partial(meter.counter("gpt-4o-mini"))
    count.most_per_char = 4  # type: ignore[attr-defined]
    text = "word " * 400
    assert truncate(text, 40, count) == truncate(text, 40, meter.counter("gpt-4o-mini"))
    assert count(truncate(text, 40, count)) <= 40


# --- the instruction block, counted once per process --------------------------------------------


def _agent(name: str = "gpt-4o-mini") -> Agent:
    def lookup(item: str) -> str:
        """Look an item up."""
        return item

    return Agent(ScriptedModel(["FINAL: 1"], name=name), tools=[lookup], limits=Limits(steps=3))


def test_the_spec_carries_the_count_of_its_instruction_block() -> None:
    agent = _agent()
    spec = agent.spec()
    assert spec.counted == ((spec.instructions, agent.counter(spec.instructions)),)
    assert _agent().spec().counted == spec.counted  # another agent made alike: the same count


def test_a_history_told_a_count_is_the_history_that_counted_it() -> None:
    count = meter.counter("gpt-4o-mini")
    opening = (Message("system", "You answer with the protocol. " * 30), Message("user", "QUESTION: why?"))
    told = History(opening, count, {opening[0].content: count(opening[0].content)})
    counted = History(opening, count)
    assert (told.tokens, told.density, told.prompt()) == (counted.tokens, counted.density, counted.prompt())


def test_a_run_goes_the_same_with_the_count_given_or_not() -> None:
    from react_text.core.commands import Replied, Send
    from react_text.core.episode import Episode

    spec = _agent().spec()
    bare = dataclasses.replace(spec, counted=())
    sent = []
    for each in (spec, bare):
        episode = Episode(each, "How much is it?")
        command = episode.start()
        assert isinstance(command, Send)
        sent.append(command.request)
        episode.send(Replied(Reply("FINAL: 1"), 0.0))
    assert sent[0] == sent[1]


def test_a_wrong_counted_is_refused() -> None:
    spec = _agent().spec()
    with pytest.raises(TypeError, match="counted"):
        dataclasses.replace(spec, counted=(("text", "12"),))


def test_the_instruction_block_is_rendered_once_for_the_same_tools() -> None:
    assert instructions("- lookup[item]: Look an item up.") is instructions("- lookup[item]: Look an item up.")


def test_tool_names_are_made_once_for_the_same_names() -> None:
    assert tool_names(("a", "b")) is tool_names(("a", "b"))


# --- the binder's one-value path ------------------------------------------------------------------


def _positional(item: str, /) -> str:
    return item


def _keyword(*, item: str) -> str:
    return item


def _either(item: str) -> str:
    return item


def _number(n: int) -> int:
    return n


def _choice(kind: Literal["a", "b"]) -> str:
    return kind


@pytest.mark.parametrize("fn", [_positional, _keyword, _either])
@pytest.mark.parametrize("text", ["item 3", '"Sunol, CA"', "`code`", '("x")', "  spaced  ", "it's"])
def test_one_value_binds_as_signature_bind_binds_it(fn: Callable[..., object], text: str) -> None:
    made = tool(fn)
    bound = binding.bind(made, text)
    assert isinstance(bound, inspect.BoundArguments)
    value = bound.arguments["item"]
    expected = made.shape.signature.bind(value) if fn is _positional else made.shape.signature.bind(item=value)
    assert (bound.args, bound.kwargs, bound.arguments) == (expected.args, expected.kwargs, expected.arguments)
    assert made.fn(*bound.args, **bound.kwargs) == value


@pytest.mark.parametrize(
    ("fn", "text", "value"),
    [
        (_number, "12", 12),
        (_number, " 7 ", 7),
        (_choice, "B", "b"),
        (_either, '"a, b"', "a, b"),
        (_either, "('x')", "x"),
    ],
)
def test_one_value_is_converted_by_its_annotation(fn: Callable[..., object], text: str, value: object) -> None:
    bound = binding.bind(tool(fn), text)
    assert isinstance(bound, inspect.BoundArguments)
    assert list(bound.arguments.values()) == [value]


@pytest.mark.parametrize(("fn", "text"), [(_number, "many"), (_choice, "c")])
def test_one_value_an_annotation_refuses_says_what_it_takes(fn: Callable[..., object], text: str) -> None:
    refused = binding.bind(tool(fn), text)
    assert isinstance(refused, binding.Refusal)
    assert f"takes {'a whole number' if fn is _number else 'one of'}" in refused.message
    assert f'not "{text}"' in refused.message


def test_the_shape_names_its_only_parameter() -> None:
    def two(a: str, b: str) -> str:
        return a + b

    def rest(a: str, *more: str) -> str:
        return a

    assert tool(_either).shape.only is tool(_either).shape.parameters[0]
    assert tool(two).shape.only is None
    assert tool(rest).shape.only is None


# --- checks written out ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"), [("usage", {"prompt": 1}), ("finish_reason", 3), ("reasoning", b"x"), ("tokens", [1])]
)
def test_a_reply_still_refuses_each_wrong_field(field: str, value: object) -> None:
    with pytest.raises(TypeError, match=f"Reply.{field} must be"):
        Reply("text", **{field: value})  # type: ignore[arg-type]


def test_a_right_reply_is_taken() -> None:
    assert Reply("t", Usage(1, 2), "stop", "why").usage == Usage(1, 2)


class _Sync:
    api: Literal["chat"] = "chat"
    name = "gpt-4o-mini"
    accepts_grammar = False

    def generate(self, request: Request) -> Reply:
        return Reply("FINAL: 1")


class _Async(_Sync):
    async def agenerate(self, request: Request) -> Reply:
        return Reply("FINAL: 1")


class _Blocked(_Async):
    agenerate = None  # type: ignore[assignment]


class _Nameless:
    accepts_grammar = False
    api: Literal["chat"] = "chat"

    async def agenerate(self, request: Request) -> Reply:
        return Reply("")

    def generate(self, request: Request) -> Reply:
        return Reply("")


@pytest.mark.parametrize("model", [_Sync(), _Async(), _Blocked(), _Nameless(), ScriptedModel([])])
def test_an_async_model_is_told_apart_as_the_protocol_tells_it(model: object) -> None:
    assert describe(model).asynchronous is isinstance(model, AsyncModel)  # type: ignore[arg-type]


def test_the_quiet_observer_lets_what_was_raised_go_on() -> None:
    quiet = Quiet()
    calls = []

    def carried_out() -> None:
        with quiet.around(None) as call:  # type: ignore[arg-type]
            calls.append(call)
            call.record(None)
            raise KeyError("on")

    with pytest.raises(KeyError):
        carried_out()
    with quiet.around(None) as again:  # type: ignore[arg-type]
        assert again is calls[0]


def test_a_step_given_its_observation_is_the_step_dataclasses_replace_makes() -> None:
    """`steps._observed` builds a Step by position: every field set to a value of its own, so a
    field added to Step, or two swapped, shows here."""
    from react_text.core.steps import _observed
    from react_text.core.types import Action, Step

    names = [f.name for f in dataclasses.fields(Step)]
    values: dict[str, object] = {
        "number": 3,
        "reply": "THOUGHT: t\nACTION: echo[x]",
        "parsed": Action("echo", "x", "t"),
        "observation": None,
        "usage": Usage(10, 5),
        "total_usage": Usage(30, 12),
        "seconds": 0.25,
        "cut": "OBSERVATION: made up",
        "forced": True,
        "reasoning": "thinking",
        "finish_reason": "stop",
        "elided": (1, 2),
        "observations": ("a", "b"),
    }
    assert sorted(values) == sorted(names), "a Step field the test does not set"
    step = Step(**values)  # type: ignore[arg-type]
    assert _observed(step, "seen", 1.5) == dataclasses.replace(step, observation="seen", seconds=1.75)
