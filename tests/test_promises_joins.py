"""Issue 33, "where features meet": the joins a review found broken, each under both drivers.

- parallel actions x repeats: a pure call that failed, written again in the same reply, is retried
  (errors are not remembered), not answered "You already called ...";
- parallel actions x the two drivers: a KeyboardInterrupt (or another BaseException a tool lets
  pass) in a parallel step is raised in the caller, as with one action (tests/test_promises_twins.py
  runs the whole table; here: nothing is printed from a worker thread);
- the guard x the binder: a bracket inside a quoted value does not end the input;
- repeats x side effects: a tool with side effects called again with the same input runs, the
  model is told it repeated itself, and one call more than `Limits.repeats` in a row ends the run.

The oracles are the tools' own records of their calls and the texts of the prompt files.
"""

from __future__ import annotations

import asyncio

import pytest
from conftest import Drive

from react_text import Agent, Limits, Prompting, Reply, ScriptedModel, tool
from react_text.prompting import render


def test_a_failed_pure_call_written_twice_in_one_reply_is_retried(drive: Drive) -> None:
    calls: list[str] = []

    @tool(pure=True)
    def flaky(item: str) -> str:
        """Fails every time."""
        calls.append(item)
        raise ConnectionError("down")

    model = ScriptedModel(["ACTION: flaky[a]\nACTION: flaky[a]", "FINAL: no"])
    result = drive(Agent(model, tools=[flaky], prompting=Prompting(parallel=True)), "q")
    failed = render("corrections/tool_error", tool="flaky", error_type="ConnectionError", error="down")
    assert calls == ["a", "a"]
    assert result.steps[0].observations == (failed, failed)
    assert result.tool_calls == 2


def test_the_twin_of_a_failed_call_retries_and_a_later_twin_is_answered_from_the_retry(drive: Drive) -> None:
    calls: list[str] = []

    @tool(pure=True)
    def flaky(item: str) -> str:
        """Fails its first call for a (b runs at once, in either order)."""
        calls.append(item)
        if calls.count("a") == 1 and item == "a":
            raise ConnectionError("down")
        return "89"

    model = ScriptedModel(["ACTION: flaky[a]\nACTION: flaky[a]\nACTION: flaky[a]\nACTION: flaky[b]", "FINAL: 89"])
    result = drive(Agent(model, tools=[flaky], prompting=Prompting(parallel=True), limits=Limits(repeats=None)), "q")
    assert sorted(calls) == ["a", "a", "b"]
    first, retry, third, other = result.steps[0].observations
    assert first.startswith("The tool flaky failed with ConnectionError")
    assert retry == "89" and other == "89"
    assert third == render("corrections/repeated_action", tool="flaky", input="a", step=1, result="89")


@pytest.mark.parametrize("error", [KeyboardInterrupt(), asyncio.CancelledError(), GeneratorExit()])
def test_a_base_exception_in_a_parallel_step_is_raised_with_nothing_printed(
    drive: Drive, error: BaseException, capfd: pytest.CaptureFixture[str]
) -> None:
    def boom(item: str) -> str:
        """Raises."""
        raise error

    def calm(item: str) -> str:
        """Answers."""
        return item

    model = ScriptedModel(["ACTION: calm[a]\nACTION: boom[b]", "FINAL: never"])
    with pytest.raises(type(error)):
        drive(Agent(model, tools=[boom, calm], prompting=Prompting(parallel=True)), "q")
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize(
    ("reply", "called"),
    [
        ('ACTION: say["a]b"]', ("a]b", 1)),
        ('ACTION: say[{"text": "a]b", "times": 2}]', ("a]b", 2)),
        ('ACTION: say[text="smile :]", times=2]', ("smile :]", 2)),
        ("ACTION: say['it]s', 3]", ("it]s", 3)),
        ('ACTION: say[text="x]", times=2] and more [brackets]', ("x]", 2)),
        ("ACTION: say[the cat's toy]", ("the cat's toy", 1)),
        ('ACTION: say[a "quoted] word"]', ('a "quoted', 1)),  # a quote inside text is text: as before
    ],
)
def test_a_bracket_inside_a_quoted_value_does_not_end_the_input(
    drive: Drive, reply: str, called: tuple[str, int]
) -> None:
    calls: list[tuple[str, int]] = []

    def say(text: str, times: int = 1) -> str:
        """Say it."""
        calls.append((text, times))
        return "said"

    drive(Agent(ScriptedModel([reply, "FINAL: ok"]), tools=[say]), "q")
    assert calls == [called]


@pytest.mark.parametrize("reply", ['ACTION: say["a]', 'ACTION: say[text="smile :]', 'ACTION: say[{"text": "a]'])
def test_an_input_cut_inside_a_quoted_value_is_never_run(drive: Drive, reply: str) -> None:
    calls: list[str] = []

    def say(text: str) -> str:
        """Say it."""
        calls.append(text)
        return "said"

    model = ScriptedModel([Reply(reply, finish_reason="length"), "FINAL: ok"])
    result = drive(Agent(model, tools=[say]), "q")
    assert calls == []
    assert result.steps[0].observation == render("corrections/reply_cut", tokens=Limits().reply_tokens)


def test_a_tool_with_side_effects_called_again_runs_and_the_model_is_told(drive: Drive) -> None:
    sent: list[str] = []

    def send(to: str) -> str:
        """Send a message."""
        sent.append(to)
        return f"sent {len(sent)}"

    model = ScriptedModel(["ACTION: send[ann]", "ACTION: send[ann]", "ACTION: send[bob]", "FINAL: ok"])
    result = drive(Agent(model, tools=[send]), "q")
    assert sent == ["ann", "ann", "bob"]
    told = render("corrections/repeated_call", result="sent 2", tool="send", input="ann", times=2)
    assert [s.observation for s in result.steps[:3]] == ["sent 1", told, "sent 3"]
    assert result.stop_reason == "final"


@pytest.mark.parametrize("parallel", [False, True])
def test_one_call_more_than_limits_repeats_in_a_row_ends_the_run_with_the_forced_call(
    drive: Drive, parallel: bool
) -> None:
    sent: list[str] = []

    def send(to: str) -> str:
        """Send a message."""
        sent.append(to)
        return "sent"

    script = ["ACTION: send[ann]\nACTION: send[ann]", "ACTION: send[ann]\nACTION: send[ann]"] if parallel else []
    script = script or ["ACTION: send[ann]"] * 4
    model = ScriptedModel([*script, "THOUGHT: it is sent.\nFINAL: sent"])
    agent = Agent(model, tools=[send], limits=Limits(repeats=3), prompting=Prompting(parallel=parallel))
    result = drive(agent, "q")
    assert sent == ["ann"] * (2 if parallel else 3)  # the reply that would pass the limit runs none of its calls
    assert (result.stop_reason, result.answer, result.forced) == ("repeats", "sent", True)
    braked = render("corrections/repeats_limit", tool="send", input="ann", times=4)
    assert result.steps[-2].observation == braked
    note = render("corrections/force_final", limit="the limit of 3 identical calls in a row")
    assert note in str(model.calls[-1].prompt)
    assert model.unused == 0


def test_a_pure_call_answered_from_memory_counts_toward_the_brake(drive: Drive) -> None:
    model = ScriptedModel(["ACTION: calculator[1 + 1]"] * 3 + ["FINAL: 2"])
    from react_text.toolbox import calculator

    result = drive(Agent(model, tools=[calculator], limits=Limits(repeats=2)), "q")
    assert (result.stop_reason, result.answer, result.tool_calls) == ("repeats", "2", 1)


def test_repeats_none_counts_without_a_brake_and_bad_values_are_refused(drive: Drive) -> None:
    sent: list[str] = []

    def send(to: str) -> str:
        """Send a message."""
        sent.append(to)
        return "sent"

    model = ScriptedModel(["ACTION: send[ann]"] * 6 + ["FINAL: ok"])
    result = drive(Agent(model, tools=[send], limits=Limits(repeats=None)), "q")
    assert (len(sent), result.stop_reason) == (6, "final")
    with pytest.raises(ValueError, match=r"Limits\.repeats must be at least 1"):
        Limits(repeats=0)
    with pytest.raises(TypeError, match=r"Limits\.repeats must be a whole number"):
        Limits(repeats=2.5)  # type: ignore[arg-type]
