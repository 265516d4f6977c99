"""The stop guard: what it cuts, what it must never cut, thinking, and the stop sequences."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from react_text import Agent, RunResult, ScriptedModel
from react_text.core.protocol import STOP_SEQUENCES
from react_text.parser.guard import cut, is_cut, split_reasoning, stopped_in_thinking


def test_at_most_four_stop_sequences() -> None:
    assert 1 <= len(STOP_SEQUENCES) <= 4


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("ACTION: a[b]\nOBSERVATION: 5\nFINAL: 5", "ACTION: a[b]\n"),
        ("ACTION: a[b] Observation: 5", "ACTION: a[b] "),
        ("ACTION: a[b]\n**Observation 2:** 5", "ACTION: a[b]\n"),
        ("ACTION: a[b]\nobservation: 5", "ACTION: a[b]\n"),
        ("ACTION: a[b]\nObs", "ACTION: a[b]"),
        ("ACTION: a[b]\nOBSERV", "ACTION: a[b]"),
        ("ACTION: a[b]Obs", "ACTION: a[b]"),
        ("ACTION: a[b] Observ", "ACTION: a[b]"),
        ("ACTION: a[b]\nObservation：5", "ACTION: a[b]\n"),  # a full-width colon
        ("THOUGHT: my observation is wrong\nACTION: a[b]", "THOUGHT: my observation is wrong\nACTION: a[b]"),
        ("FINAL: jobs", "FINAL: jobs"),
        ("no label here", "no label here"),
        ("ACTION: python[print(1)] Observation: 1", "ACTION: python[print(1)] "),
        ("ACTION: lookup train Observation: 89", "ACTION: lookup train "),
        # Bee's and BeeAI's observations, Semantic Kernel's stepwise planner's
        ('Tool Name: s\nTool Input: {"q": 1}\nTool Output: 3\nFinal Answer: 3', 'Tool Name: s\nTool Input: {"q": 1}\n'),
        ("Function Name: s\nFunction Input: {}\nfunction_output: 3", "Function Name: s\nFunction Input: {}\n"),
        ('[ACTION]\n{"action": "s"}\n[OBSERVATION]\n3\n[FINAL ANSWER] 3', '[ACTION]\n{"action": "s"}\n'),
        # an echo of the last observation opens the reply; a made-up one after the action is cut
        ("Observation: 89\nThought: x\nACTION: a[b]\nObservation: 5", "Observation: 89\nThought: x\nACTION: a[b]\n"),
        (
            "<think>ok</think>\n**Observation:** 89\nACTION: a[b] Observation: 5",
            "<think>ok</think>\n**Observation:** 89\nACTION: a[b] ",
        ),
        ("```\nObservation: 89\nFINAL: 89\n```", "```\nObservation: 89\nFINAL: 89\n```"),
        ("Thought: x\nObservation: 89\nFINAL: 89", "Thought: x\n"),  # not the reply's opening: cut as before
    ],
)
def test_cut(text: str, kept: str) -> None:
    result = cut(text)
    assert result.kept == kept
    assert result.kept + result.dropped == text


@pytest.mark.parametrize(
    "text",
    [
        "FINAL: Streaming software: OBS",
        "FINAL: The probe made its first Observation",
        "FINAL: Check the logs in OBS",
        "FINAL: The log said Observation: none recorded",
        "THOUGHT: done\nFinal Answer: the first Observation: blue",
        "ACTION: python[print('Observation: done')]",
        "ACTION: search[Observation: deck hours]\n",
        "ACTION: python[```\nprint('x')\nObservation: not a label here\n```]",
        "Action: python\nAction Input: print('Observation: done')",
        "ACTION: f(Observation: x)",
        "<think>\nI'll call lookup; the Observation: will tell me the price.\n</think>\nACTION: lookup[train]",
        "<think>\nObservation: 89\nObservation: 145\n</think>\nFINAL: 234",
        "The tool returned.\nObservation: 89\n</think>\nFINAL: 234",  # all before a lone </think> is reasoning
        "<think>\nthe Observation: will say",  # an unclosed block runs to the end
        "<think>\nmaybe\nObs",
    ],
)
def test_never_cut_what_was_written_on_purpose(text: str) -> None:
    assert cut(text).dropped == ""


def test_past_64_labels_written_on_purpose_the_guard_cuts_anyway() -> None:
    # A reply that quotes the label 65 times is junk; skipping each would make the guard's cost grow
    # with the number of labels, so after 64 it cuts.
    block = "<think>Observation: x</think>"
    assert cut(block * 64 + "FINAL: 1").dropped == ""
    assert cut(block * 65 + "FINAL: 1").kept == block * 64 + "<think>"


def test_an_input_that_never_closes_is_cut_like_any_text() -> None:
    assert cut("ACTION: python[print('Observation: done')").kept == "ACTION: python[print('"


def test_a_made_up_observation_after_a_think_block_is_still_cut() -> None:
    text = "<think>the Observation: will say</think>\nACTION: a[b]\nObservation: 5"
    assert cut(text).dropped == "Observation: 5"


@given(st.text(alphabet="OBSERVATIONobservation: \n]*#x[(<>/thinkACTION", max_size=200))
@settings(max_examples=500)
def test_cut_is_idempotent(text: str) -> None:
    once = cut(text).kept
    assert cut(once).kept == once
    assert cut(once).dropped == ""


@given(st.text())
def test_cut_never_raises_and_keeps_a_prefix(text: str) -> None:
    result = cut(text)
    assert text.startswith(result.kept)


@given(
    st.text(alphabet="abc \n:.,!?-0123456789ACTIONFINALThought", max_size=80),
    st.sampled_from(STOP_SEQUENCES),
)
@settings(max_examples=500)
def test_each_stop_sequence_fires_only_where_the_guard_cuts(before: str, stop: str) -> None:
    # Outside thinking and bracketed inputs, the guard cuts at (or before) the label where a server
    # would stop at a stop sequence: what `stop` saves, the guard would have dropped anyway. The one
    # exception is a label that opens the reply: an echo of the last observation, which the guard
    # keeps (a server would stop there, so a reply can only echo on a line of its own first).
    text = before + stop + " 42"
    if before.strip():
        assert len(cut(text).kept) <= len(before) + 1
    else:
        assert cut(text).kept == text


def test_an_echo_does_not_stop_a_stream() -> None:
    assert not is_cut("Observation: 89\nThought: now the hotel")
    assert is_cut("Observation: 89\nACTION: a[b]\nObservation: 5")
    assert not is_cut("The tool said")
    assert not is_cut("Tool Input: {}")
    assert is_cut("Tool Input: {}\nTool Output: 1")


def test_is_cut_from_an_offset() -> None:
    text = "THOUGHT: x\nACTION: a[b]\nOBSERVATION:"
    assert is_cut(text)
    assert is_cut(text, len(text) - 20)
    assert not is_cut("THOUGHT: x")


@pytest.mark.parametrize(
    "text",
    [
        "<think>\nthe Observation: will tell me",  # still thinking
        "<think>x</think>\nACTION: python[print('Observation: ",  # an input still open may yet close
        "FINAL: the log said Observation: none",
    ],
)
def test_is_cut_ignores_thinking_and_open_inputs(text: str) -> None:
    assert not is_cut(text)
    assert not is_cut(text, len(text) - 20)


@given(st.text(alphabet="OBSERVATIONobservation: \n]*#x[(<>/thinkACTION", max_size=200))
@settings(max_examples=500)
def test_a_streaming_abort_is_a_cut(text: str) -> None:
    if is_cut(text):
        assert cut(text).dropped != ""


@pytest.mark.parametrize(
    ("text", "reasoning", "rest"),
    [
        ("<think>\nplan\n</think>\nFINAL: 3", "plan", "\nFINAL: 3"),
        ("plan</think>\nFINAL: 3", "plan", "\nFINAL: 3"),
        ("<think>a</think>x<think>b</think>y", "a\nb", "xy"),
        ("<think>\nstill going", "still going", ""),
        ("no thinking", "", "no thinking"),
        ("<think></think>ACTION: a[b]", "", "ACTION: a[b]"),
    ],
)
def test_split_reasoning(text: str, reasoning: str, rest: str) -> None:
    assert split_reasoning(text) == (reasoning, rest)


@pytest.mark.parametrize(
    ("text", "stopped"),
    [
        ("<think>\nThe user wants the price. I should", True),
        ("<think>a</think>\n<think>b", True),
        ("<think>a</think>\nFINAL: 3", False),
        ("plan</think>\nFINAL: 3", False),
        ("FINAL: 3", False),
    ],
)
def test_stopped_in_thinking(text: str, stopped: bool) -> None:
    assert stopped_in_thinking(text) is stopped


# --- through the Agent ---------------------------------------------------------------------------------


def python(code: str) -> str:
    """Run a line of Python (here: say what would run)."""
    return f"ran {code}"


def lookup(item: str) -> str:
    """Return the price of one item."""
    return {"train": "89", "hotel": "145"}[item]


def _run(replies: list[str]) -> RunResult:
    model = ScriptedModel(replies)
    result = Agent(model, tools=[python, lookup]).run("Find out.")
    model.assert_all_used()
    return result


@pytest.mark.parametrize(
    "reply",
    [
        "<think>\nI'll call lookup; the Observation: will tell me the price.\n</think>\nTHOUGHT: I need the price."
        "\nACTION: lookup[train]",
        "<think>\nObservation: the last tool said nothing yet.\n</think>\n\nACTION: lookup[train]",
        "Okay, the Observation: will say.\n</think>\nACTION: lookup[train]",  # the template opened the block
    ],
)
def test_an_observation_label_inside_thinking_is_not_a_format_error(reply: str) -> None:
    result = _run([reply, "FINAL: 89"])
    first = result.steps[0]
    assert first.cut == ""
    assert first.observation == "89"
    assert result.answer == "89"


@pytest.mark.parametrize("answer", ["Streaming software: OBS", "The probe made its first Observation"])
def test_an_answer_keeps_its_last_word(answer: str) -> None:
    result = _run([f"THOUGHT: done\nFINAL: {answer}"])
    assert result.answer == answer
    assert result.steps[0].cut == ""


def test_an_input_holding_an_observation_label_runs_whole() -> None:
    result = _run(["THOUGHT: run it\nACTION: python[print('Observation: done')]", "FINAL: done"])
    assert result.steps[0].observation == "ran print('Observation: done')"
    assert result.steps[0].cut == ""


def test_a_made_up_observation_after_the_input_is_still_cut() -> None:
    result = _run(["ACTION: python[print(1)]\nObservation: 1\nFINAL: 1", "FINAL: done"])
    assert result.steps[0].cut == "Observation: 1\nFINAL: 1"
    assert result.steps[0].observation == "ran print(1)"


def test_a_truncated_input_is_never_run() -> None:
    # The guard cuts inside an input that never closes: the parser says closed=False, and the
    # loop must not run print(' .
    result = _run(["ACTION: python[print('Observation: done')", "FINAL: done"])
    assert result.tool_calls == 0
