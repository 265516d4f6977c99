"""A step of several actions (`Prompting(parallel=True)`) is written to a trace and read back whole."""

from __future__ import annotations

import json

from react_text.core.types import Action, Actions, Step, Usage
from react_text.observers import trace, trace_schema

STEP = Step(
    number=1,
    reply="THOUGHT: both\nACTION: shout[a]\nACTION: shout[b]",
    parsed=Actions((Action("shout", "a", thought="both"), Action("shout", "b")), thought="both"),
    observation="OBSERVATION (shout[a]): A!\nOBSERVATION (shout[b]): B!",
    usage=Usage(10, 5),
    total_usage=Usage(10, 5),
    seconds=0.5,
    observations=("A!", "B!"),
)


def _event(step: Step) -> dict[str, object]:
    return {"event": "step", **json.loads(json.dumps(trace.step_dict(step)))}


def test_a_step_of_several_actions_is_a_sound_event_and_reads_back_as_it_was() -> None:
    event = _event(STEP)
    assert trace_schema.check(event) is None
    assert trace.step_from(event) == STEP


def test_a_several_actions_step_holding_a_final_is_refused_naming_the_field() -> None:
    event = _event(STEP)
    event["parsed"]["actions"][1] = {"kind": "final", "answer": "x"}  # type: ignore[index]
    assert trace_schema.check(event) == "step.parsed.actions[1].kind must be one of action, not the text 'final'"


def test_each_call_of_a_several_actions_step_is_text() -> None:
    event = _event(STEP)
    event["observations"] = ["A!", 2]
    assert trace_schema.check(event) == "step.observations[1] must be text, not 2"
