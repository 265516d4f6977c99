"""An answer that runs on until the allowance cuts it: kept as far as its first repeat, and said so."""

from __future__ import annotations

import pytest
from conftest import Drive, make_agent

from react_text import Reply, ScriptedModel
from react_text.grammar.protocol import MAX_ANSWER
from react_text.parser.runon import RunOn, trim


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2737.25, 2737.25, 2737.25, 2737.", RunOn("2737.25", "2737.25, ", 3)),
        ("1990 1990 1990 1990 19", RunOn("1990", "1990 ", 4)),
        (
            "The answer is 7. The answer is 7. The answer is 7. The ans",
            RunOn("The answer is 7.", "The answer is 7. ", 3),
        ),
        ("Lima; Lima; Lima; Lima", RunOn("Lima", "Lima; ", 3)),
    ],
)
def test_a_repeated_tail_is_trimmed_to_its_first_copy(text: str, expected: RunOn) -> None:
    assert trim(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The total is 234 euros, made of",  # cut, but not repeating
        "1000000000000000",  # one character over and over is no answer said again
        "So the answer is...........",
        "42, 42",  # twice is not a run
        "Peru is in South America and its capital is Lima, Lima, Lima",  # repeats fill under half
        "",
    ],
)
def test_other_tails_are_left_alone(text: str) -> None:
    assert trim(text) is None


def test_the_period_is_the_shortest() -> None:
    ran = trim("ab ab ab ab ab ab ab ab")
    assert ran is not None and ran.unit == "ab "


def test_linear_on_a_long_reply() -> None:
    text = "x" * 50_000 + "".join(f"{i}," for i in range(20_000))  # no repeat at all
    assert trim(text) is None


RUN_ON = "THOUGHT: so\nFINAL: 2737.25, 2737.25, 2737.25, 2737.25, 2737"


def test_a_run_on_answer_cut_at_the_allowance_is_the_answer(drive: Drive) -> None:
    model = ScriptedModel([Reply(RUN_ON, None, "length")])
    result = drive(make_agent(model, reply_tokens=40), "What is 2737.25 rounded?")
    assert (result.answer, result.stop_reason, len(model.calls)) == ("2737.25", "final", 1)
    assert "ran on" in (result.error or "") and "allowance of 40 tokens" in (result.error or "")


def test_a_run_on_answer_at_the_grammars_bound_is_the_answer(drive: Drive) -> None:
    answer = ("1990 " * 60)[:MAX_ANSWER]
    model = ScriptedModel([f"THOUGHT: so\nFINAL: {answer}"], accepts_grammar=True)
    result = drive(make_agent(model), "When?")
    assert (result.answer, result.stop_reason) == ("1990", "final")
    assert "grammar's 200 characters" in (result.error or "")


def test_a_run_on_answer_under_no_grammar_and_no_cut_stands(drive: Drive) -> None:
    answer = "ha ha ha ha ha ha"
    result = drive(make_agent(ScriptedModel([f"FINAL: {answer}"])), "Laugh.")
    assert (result.answer, result.error) == (answer, None)


def test_cut_answers_in_a_row_are_said_to_be_cut_not_unreadable(drive: Drive) -> None:
    cut = Reply("THOUGHT: so\nFINAL: The total is 234 euros, made of", None, "length")
    model = ScriptedModel([cut, cut, cut])
    result = drive(make_agent(model, reply_tokens=40, format_errors=3), "What is the total?")
    assert result.stop_reason == "format_errors"
    assert "unreadable" not in (result.error or "")
    assert "cut" in (result.error or "") and "40 tokens" in (result.error or "")


def test_the_forced_final_answer_that_runs_on_is_trimmed(drive: Drive, tools: list[object]) -> None:
    model = ScriptedModel(["ACTION: lookup[train ticket]", Reply(RUN_ON, None, "length")])
    result = drive(make_agent(model, tools, steps=1), "What does a train ticket cost?")
    assert (result.answer, result.stop_reason, result.forced) == ("2737.25", "max_steps", True)
    assert "ran on" in (result.error or "")
