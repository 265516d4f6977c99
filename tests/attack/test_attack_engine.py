"""Attacks on "What the engine does for you": the guard, reasoning, honest replies, corrections,
time limits, risky tools and failures, and the "Use it from Python" examples, under both drivers.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time

import pytest
from _support import DRIVERS

from react_text import Action, Agent, Final, Limits, ModelError, Prompting, Reply, ScriptedModel, cut, parse, tool


def lookup(item: str) -> str:
    """Return the price of one item."""
    return {"train ticket": "89", "hotel night": "145"}[item]


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def sent(model: ScriptedModel) -> str:
    return "\n".join(repr(c.prompt) for c in model.calls)


# -- Use it from Python, as written, on the scripted model -------------------------------------


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_the_readme_example_runs_on_the_scripted_model(driver: str) -> None:
    """README, "Use it from Python": `agent = Agent(..., tools=[lookup, add], limits=Limits(steps=6,
    tokens=6000))`; `result.answer, result.stop_reason, result.steps, result.usage`; quoted inputs
    (`lookup["train ticket"]`) and `add[a: float, b: float]` bind by signature."""
    model = ScriptedModel(
        [
            'THOUGHT: price 1\nACTION: lookup["train ticket"]',
            "THOUGHT: price 2\nACTION: lookup[hotel night]",
            "THOUGHT: sum\nACTION: add[89, 145]",
            "THOUGHT: done\nFINAL: 234",
        ]
    )
    agent = Agent(model, tools=[lookup, add], limits=Limits(steps=6, tokens=6000))
    result = DRIVERS[driver](agent, "What do a train ticket and one hotel night cost together?")
    assert (result.answer, result.stop_reason, len(result.steps)) == ("234", "final", 4)
    assert [s.observation for s in result.steps[:3]] == ["89", "145", "234.0"]
    assert result.usage.prompt_tokens > 0
    model.assert_all_used()


def test_iter_steps_then_result() -> None:
    """README: "`run = agent.iter_steps("...")` # the same run, one frozen Step at a time ...
    `run.result` # the RunResult, once the steps are exhausted"."""
    model = ScriptedModel(["THOUGHT: a\nACTION: add[1, 2]", "FINAL: 3"])
    run = Agent(model, tools=[add]).iter_steps("...")
    steps = list(run)
    assert [s.number for s in steps] == [1, 2]
    with pytest.raises(dataclasses.FrozenInstanceError):
        steps[0].number = 9  # type: ignore[misc]
    assert run.result.answer == "3" and run.result.steps == tuple(steps)


def test_aiter_steps_with_the_walrus_as_written() -> None:
    """README: "`async for step in (arun := agent.aiter_steps("...")):` # the same frozen Steps;
    then arun.result"; and "`results = await asyncio.gather(*(agent.arun(t) for t in tasks))`"."""
    agent = Agent(ScriptedModel(["FINAL: 1", "FINAL: 2", "FINAL: 3", "FINAL: 4"]))

    async def main() -> tuple[list[int], str | None, list[str | None]]:
        numbers = []
        async for step in (arun := agent.aiter_steps("...")):
            numbers.append(step.number)
        results = await asyncio.gather(*(agent.arun(t) for t in ["a", "b", "c"]))
        return numbers, arun.result.answer, sorted(r.answer for r in results)

    numbers, answer, answers = asyncio.run(main())
    assert numbers == [1] and answer == "1" and answers == ["2", "3", "4"]


def test_limits_refuse_bad_values_naming_the_option() -> None:
    """README: "`Limits` (frozen, checked when made: `Limits(observation_tokens=0)` raises, naming
    the option)"."""
    for kwargs in (
        {"observation_tokens": 0},
        {"steps": 0},
        {"reply_tokens": -1},
        {"tokens": 0},
        {"format_errors": 0},
        {"tool_seconds": -1},
        {"context_tokens": 1},
        {"steps": True},
        {"steps": 2.5},
        {"tool_seconds": float("nan")},
    ):
        name = next(iter(kwargs))
        with pytest.raises(Exception, match=name):
            Limits(**kwargs)  # type: ignore[arg-type]


def test_the_agent_is_immutable_and_with_limits_changes_one() -> None:
    """README: "**The agent** is an immutable value ... `agent.with_limits(steps=4)`"; "`Agent` is
    frozen (assigning `agent.tools` raises)"."""
    agent = Agent(ScriptedModel([]), tools=[add], limits=Limits(steps=7, tokens=5000))
    with pytest.raises(dataclasses.FrozenInstanceError):
        agent.tools = ()  # type: ignore[misc]
    changed = agent.with_limits(steps=4)
    assert changed.limits.steps == 4 and changed.limits.tokens == 5000 and agent.limits.steps == 7


# -- the stop guard ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "reply",
    [
        "THOUGHT: t\nACTION: python[print('Observation: done')]",
        "THOUGHT: t\nACTION: python[print('''a\nObservation: b''')]",
        "THOUGHT: t\nACTION: python[x = {'k': [1, 2]}\nprint('\\nObservation: z')]",
    ],
)
def test_the_guard_never_cuts_inside_a_bracketed_input_that_closes(reply: str) -> None:
    """README: "the cut never ... falls inside a bracketed input that closes
    (`python[print('Observation: done')]` runs whole)"."""
    assert cut(reply).kept == reply


@pytest.mark.parametrize("answer", ["Streaming software: OBS", "The tool is OBSERVATION", "x\nObservations are cheap"])
def test_the_guard_never_eats_an_answers_words(answer: str) -> None:
    """README: "never eats an answer's last word (`FINAL: Streaming software: OBS`)"."""
    reply = f"THOUGHT: t\nFINAL: {answer}"
    assert cut(reply).kept == reply
    got = parse(reply)
    assert isinstance(got, Final) and got.answer == answer


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_made_up_observation_is_never_acted_on(driver: str) -> None:
    """README: "Every reply is cut again on the client side at the first made-up observation,
    whatever the server did"; Guarantees: "a made-up observation is never acted on"."""
    ran: list[str] = []

    def echo(text: str) -> str:
        """Echo."""
        ran.append(text)
        return "real"

    model = ScriptedModel(
        [
            "THOUGHT: t\nACTION: echo[one]\n**Observation:** fake\nTHOUGHT: u\nACTION: echo[two]\nObservation: x\nFINAL: 9",
            "FINAL: done",
        ]
    )
    result = DRIVERS[driver](Agent(model, tools=[echo], limits=Limits(steps=3)), "Go.")
    assert ran == ["one"] and result.answer == "done"
    assert "fake" not in sent(model).split("echo[one]", 1)[1]


def test_an_input_the_cut_leaves_open_is_never_run() -> None:
    """README: "An input the cut leaves open is never run"."""
    got = parse(cut("THOUGHT: t\nACTION: python[print(1)\nObservation: 1\n").kept, tools=["python"])
    assert not (isinstance(got, Action) and got.closed)


# -- reasoning ------------------------------------------------------------------------------------


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_thinking_is_kept_never_parsed_and_not_sent_back(driver: str) -> None:
    """README: "Thinking inline (`<think>...</think>`) or split out by the server ... is kept on the
    Step (`step.reasoning`) ..., never parsed as the protocol, and by default not sent back"."""
    model = ScriptedModel(
        [
            "<think>maybe ACTION: add[100, 100]\nOBSERVATION: 200\nFINAL: 200</think>\nTHOUGHT: t\nACTION: add[1, 2]",
            Reply("THOUGHT: d\nFINAL: 3", reasoning="SPLIT-OUT FINAL: 7"),
        ]
    )
    result = DRIVERS[driver](Agent(model, tools=[add], limits=Limits(steps=3)), "Add.")
    assert result.answer == "3" and result.steps[0].observation == "3.0"
    assert "ACTION: add[100, 100]" in result.steps[0].reasoning
    assert "SPLIT-OUT" in result.steps[1].reasoning
    assert "add[100, 100]" not in sent(model)


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_reasoning_keep_sends_it_back(driver: str) -> None:
    """README: "(`Prompting(reasoning="keep")` sends it)"."""
    model = ScriptedModel(["<think>PONDER-1</think>\nTHOUGHT: t\nACTION: add[1, 2]", "FINAL: 3"])
    agent = Agent(model, tools=[add], limits=Limits(steps=3), prompting=Prompting(reasoning="keep"))
    DRIVERS[driver](agent, "Add.")
    assert "PONDER-1" in repr(model.calls[1].prompt)


# -- honest replies, corrections ------------------------------------------------------------------


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_an_action_cut_at_the_allowance_is_never_run(driver: str) -> None:
    """README: "A reply cut at its allowance never runs an action whose input it cut off"."""
    ran: list[str] = []

    def echo(text: str) -> str:
        """Echo."""
        ran.append(text)
        return "ok"

    model = ScriptedModel([Reply("THOUGHT: t\nACTION: echo[abc def ghi", finish_reason="length"), "FINAL: x"])
    result = DRIVERS[driver](Agent(model, tools=[echo], limits=Limits(steps=3)), "Go.")
    assert ran == [] and result.answer == "x"


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_cut_final_answer_is_asked_for_again(driver: str) -> None:
    """README: "and a FINAL answer cut off is asked for again; the model is told its reply was cut"."""
    model = ScriptedModel([Reply("THOUGHT: t\nFINAL: the answer is 12", finish_reason="length"), "FINAL: 12"])
    result = DRIVERS[driver](Agent(model, limits=Limits(steps=3)), "Go.")
    assert result.answer == "12" and len(model.calls) == 2


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_an_exact_repeat_is_not_run_again_but_errors_are(driver: str) -> None:
    """README: "a repeated action (an exact repeat of a call that succeeded is not run again: the
    earlier result is repeated; errors and time-outs are not remembered)". Since issue 20 only a
    tool known to be free of side effects (`pure=True`) is answered from its earlier result."""
    calls: list[str] = []

    def flaky(x: str) -> str:
        """Fail once, then work."""
        calls.append(x)
        if len(calls) == 1:
            raise RuntimeError("first time fails")
        return "fine"

    model = ScriptedModel(["ACTION: flaky[a]", "ACTION: flaky[a]", "ACTION: flaky[a]", "FINAL: ok"])
    result = DRIVERS[driver](Agent(model, tools=[tool(flaky, pure=True)], limits=Limits(steps=5)), "Go.")
    assert calls == ["a", "a"], calls
    assert "RuntimeError" in (result.steps[0].observation or "")
    assert "fine" in (result.steps[2].observation or "")


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_three_unreadable_replies_end_the_run(driver: str) -> None:
    """README: "Three unreadable replies in a row end the run"; stop_reason "format_errors"."""
    model = ScriptedModel(["hmm", "well", "so", "FINAL: never"])
    result = DRIVERS[driver](Agent(model, limits=Limits(steps=6, force_final=False)), "Go.")
    assert result.stop_reason == "format_errors" and len(model.calls) == 3


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_an_unknown_tool_names_the_closest_match(driver: str) -> None:
    """README: "unknown tool (with the valid tools and the closest match)"."""
    model = ScriptedModel(["ACTION: lokup[train ticket]", "FINAL: x"])
    result = DRIVERS[driver](Agent(model, tools=[lookup, add], limits=Limits(steps=3)), "Go.")
    assert "lookup" in (result.steps[0].observation or "")


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_long_observation_is_cut_to_its_allowance_keeping_head_and_tail(driver: str) -> None:
    """README: "Long observations are cut to `observation_tokens` exactly (counted after cutting),
    keeping head and tail and saying how much was cut"."""

    def big(x: str) -> str:
        """Big."""
        return "HEAD " + "filler " * 5000 + " TAIL"

    model = ScriptedModel(["ACTION: big[x]", "FINAL: x"])
    agent = Agent(model, tools=[big], limits=Limits(steps=3, observation_tokens=50))
    result = DRIVERS[driver](agent, "Go.")
    observation = result.steps[0].observation or ""
    assert observation.startswith("HEAD") and observation.rstrip().endswith("TAIL")
    assert observation.count("filler") < 50


# -- time limits ----------------------------------------------------------------------------------


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_tool_over_its_time_limit_becomes_an_observation(driver: str) -> None:
    """README: "`tool(fn, risky=True, timeout=5)` marks ... a time limit"; "a tool that overruns is
    interrupted where it stands, its `finally` blocks run" (sync on the main thread)."""
    state: list[str] = []

    def slow(x: str) -> str:
        """Sleep."""
        try:
            time.sleep(5)
            return "late"
        finally:
            state.append("finally")

    model = ScriptedModel(["ACTION: slow[x]", "FINAL: x"])
    started = time.monotonic()
    result = DRIVERS[driver](Agent(model, tools=[tool(slow, timeout=0.3)], limits=Limits(steps=3)), "Go.")
    assert time.monotonic() - started < 3
    assert result.answer == "x" and "late" not in (result.steps[0].observation or "")
    if driver == "sync":
        assert state == ["finally"]


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_an_async_tool_that_swallows_cancellation_still_times_out(driver: str) -> None:
    """README: "an `async def` tool is awaited under `asyncio.timeout`, so a hung tool never blocks
    the other episodes"."""

    async def stubborn(x: str) -> str:
        """Refuses to stop."""
        for _ in range(50):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.1)
        return "late"

    if driver == "sync":
        pytest.skip("async tools are awaited in async runs")
    model = ScriptedModel(["ACTION: stubborn[x]", "FINAL: x"])
    agent = Agent(model, tools=[tool(stubborn, timeout=0.3)], limits=Limits(steps=3))

    async def timed() -> tuple[float, object]:
        # Timed inside the loop: the run must not wait for the tool (asyncio.run's own teardown
        # then waits for every task still running, the abandoned tool's too).
        started = time.monotonic()
        result = await agent.arun("Go.")
        return time.monotonic() - started, result

    took, result = asyncio.run(timed())
    assert took < 3, "a tool swallowing CancelledError held the run"
    assert result.answer == "x"  # type: ignore[attr-defined]


def test_a_sync_run_off_the_main_thread_still_times_out() -> None:
    """README: "elsewhere on a daemon worker thread, abandoned if it overruns"."""
    out: list[object] = []

    def hang(x: str) -> str:
        """Hang."""
        threading.Event().wait(30)
        return "late"

    def work() -> None:
        model = ScriptedModel(["ACTION: hang[x]", "FINAL: x"])
        out.append(Agent(model, tools=[tool(hang, timeout=0.3)], limits=Limits(steps=3)).run("Go."))

    thread = threading.Thread(target=work)
    started = time.monotonic()
    thread.start()
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started < 5
    assert out and out[0].answer == "x"  # type: ignore[attr-defined]


# -- risky tools ----------------------------------------------------------------------------------


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_risky_tools_are_declined_without_an_approver_and_stop_ends_the_run(driver: str) -> None:
    """README: "Risky tools run only when the `approve(tool, action)` callable says so ...; without
    one they are declined and the model is told. `approve` may return `"stop"` to end the run
    (`declined`)"."""
    ran: list[str] = []

    @tool(risky=True)
    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return "deleted"

    model = ScriptedModel(["ACTION: delete[a.txt]", "FINAL: no"])
    result = DRIVERS[driver](Agent(model, tools=[delete], limits=Limits(steps=3)), "Go.")
    assert ran == [] and result.answer == "no" and result.steps[0].observation

    model = ScriptedModel(["ACTION: delete[a.txt]", "FINAL: no"])
    agent = Agent(model, tools=[delete], limits=Limits(steps=3), approve=lambda t, a: "stop")
    result = DRIVERS[driver](agent, "Go.")
    assert ran == [] and result.stop_reason == "declined"


def test_an_async_approver_in_an_async_run() -> None:
    """README: "(it may be async in async runs)"."""
    ran: list[str] = []

    @tool(risky=True)
    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return "deleted"

    async def approve(t: object, a: Action) -> bool:
        await asyncio.sleep(0)
        return a.input == "ok.txt"

    model = ScriptedModel(["ACTION: delete[no.txt]", "ACTION: delete[ok.txt]", "FINAL: done"])
    result = asyncio.run(Agent(model, tools=[delete], limits=Limits(steps=4), approve=approve).arun("Go."))
    assert ran == ["ok.txt"] and result.answer == "done"


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_an_approver_that_raises_ends_cleanly(driver: str) -> None:
    """README: "Failures end cleanly" / Guarantees: "`Agent.run` and `arun` never raise for a model
    or network failure". An approver is the user's code; its failure may raise, but must not hang."""

    @tool(risky=True)
    def delete(path: str) -> str:
        """Delete a file."""
        return "deleted"

    def approve(t: object, a: object) -> bool:
        raise RuntimeError("approver broke")

    model = ScriptedModel(["ACTION: delete[a.txt]", "FINAL: no"])
    agent = Agent(model, tools=[delete], limits=Limits(steps=3), approve=approve)
    try:
        result = DRIVERS[driver](agent, "Go.")
    except RuntimeError:
        return  # raising the programmer's own error is acceptable
    assert result.stop_reason in {"final", "model_error", "declined"}


# -- failures end cleanly -------------------------------------------------------------------------


@pytest.mark.parametrize("driver", list(DRIVERS))
@pytest.mark.parametrize(
    "failure",
    [ModelError("boom: sk-abcdefghijklmnopqrstuvwx"), ConnectionError("reset"), TimeoutError("slow")],
    ids=["ModelError holding a key", "ConnectionError", "TimeoutError"],
)
def test_a_model_failure_mid_run_ends_cleanly_with_the_transcript(driver: str, failure: BaseException) -> None:
    """README: "A model or network failure ... ends the run with `stop_reason "model_error"`, the
    reason in `result.error` (with the URL tried, never the key) and the transcript so far"."""
    model = ScriptedModel(["THOUGHT: t\nACTION: add[1, 2]", failure])
    result = DRIVERS[driver](Agent(model, tools=[add], limits=Limits(steps=3)), "Add.")
    assert result.stop_reason == "model_error" and result.error
    assert "sk-abcdefghijklmnopqrstuvwx" not in result.error
    assert "add[1, 2]" in repr(result.transcript)


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_script_that_runs_out_is_a_model_error(driver: str) -> None:
    """ScriptedModel: "Calling past the end of the script raises ModelError, so a run that asks for
    more than was scripted ends with stop_reason "model_error" and says why"."""
    model = ScriptedModel(["THOUGHT: t\nACTION: add[1, 2]"])
    result = DRIVERS[driver](Agent(model, tools=[add], limits=Limits(steps=3)), "Add.")
    assert result.stop_reason == "model_error" and result.error


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_tool_that_returns_non_text_becomes_an_observation(driver: str) -> None:
    """Guarantees: "a tool that raises, hangs, returns something huge or returns non-text becomes an
    observation"."""

    def odd(x: str) -> object:
        """Odd results."""
        return {"bytes": b"\x00\x01", "none": None, "obj": object(), "nan": float("nan")}[x]

    model = ScriptedModel(
        ["ACTION: odd[bytes]", "ACTION: odd[none]", "ACTION: odd[obj]", "ACTION: odd[nan]", "FINAL: x"]
    )
    result = DRIVERS[driver](Agent(model, tools=[odd], limits=Limits(steps=6)), "Go.")
    assert result.answer == "x"
    assert all(s.observation for s in result.steps[:4])


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_tool_that_calls_sys_exit_does_not_end_the_program(driver: str) -> None:
    """Guarantees: "a tool that raises ... becomes an observation". A tool (or a library it calls)
    that raises SystemExit is still a tool that raised; it should not end the caller's program."""

    def quits(x: str) -> str:
        """Quit."""
        raise SystemExit(3)

    model = ScriptedModel(["ACTION: quits[x]", "FINAL: x"])
    result = DRIVERS[driver](Agent(model, tools=[quits], limits=Limits(steps=3)), "Go.")
    assert result.answer == "x" and "SystemExit" in (result.steps[0].observation or "")


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_hostile_async_tool_does_not_block_another_episode(driver: str) -> None:
    """README: "an `async def` tool is awaited under `asyncio.timeout`, so a hung tool never blocks
    the other episodes"."""
    if driver == "sync":
        pytest.skip("episodes at once are async")

    async def stubborn(x: str) -> str:
        """Refuses to stop."""
        for _ in range(30):
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(0.1)
        return "late"

    async def main() -> float:
        slow = Agent(ScriptedModel(["ACTION: stubborn[x]", "FINAL: x"]), tools=[tool(stubborn, timeout=0.2)])
        quick = Agent(ScriptedModel(["FINAL: quick"]))
        started = time.monotonic()
        other = asyncio.ensure_future(slow.arun("Go."))
        result = await quick.arun("Go.")
        elapsed = time.monotonic() - started
        assert result.answer == "quick"
        await other
        return elapsed

    assert asyncio.run(main()) < 1.0
