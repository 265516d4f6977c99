"""attack2: token budgets and context windows with servers that count their own way, with one and
with several actions a step (docs/concepts/limits.md, docs/concepts/context-windows.md)."""

from __future__ import annotations

import pytest
from _attack2_fake import drive

from react_text import Agent, Limits, Prompting, ScriptedModel

DRIVERS = ["sync", "async"]


def page(n: str) -> str:
    """Read a page."""
    return f"page {n}: " + "lorem ipsum dolor " * 150


def _counting(k: float):  # type: ignore[no-untyped-def]
    return lambda text: max(1, int(k * len(text) / 4))


def _four(i: int) -> str:
    return "\n".join(f"ACTION: page[{i}.{j}]" for j in range(4))


# guarantees.md: "from the second request on, no run is billed past Limits(tokens=...), whatever
# the server's tokenizer"; limits.md: "a call is made only if, after it, the forced final call
# still fits". One action a step: holds.
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize(("k", "budget"), [(1.0, 1500), (2.0, 2500), (2.0, 4000), (0.5, 1500)])
def test_the_budget_holds_with_one_action_a_step(k: float, budget: int, driver: str) -> None:
    model = ScriptedModel([f"ACTION: page[{i}]" for i in range(20)] + ["FINAL: ok"], tokenizer=_counting(k))
    agent = Agent(model, tools=[page], limits=Limits(tokens=budget, observation_tokens=300))
    result = drive(agent, "Read.", driver)
    assert result.stop_reason == "max_tokens" and result.usage.total_tokens <= budget


# The same promise with Prompting(parallel=True): the four observations of step 1 go into the
# second request whole, and it was billed past the budget (1,689 of 1,500 at 1x; 4,934 of 4,000 at
# 2x): the server had counted only the instructions, and counts a Latin page at 951 tokens where
# tiktoken counts 691. A text now counts at least its length at the instructions' density.
@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize(("k", "budget"), [(1.0, 1500), (2.0, 4000)])
def test_the_budget_holds_with_four_actions_a_step(k: float, budget: int, driver: str) -> None:
    model = ScriptedModel([_four(i) for i in range(8)] + ["FINAL: ok"], tokenizer=_counting(k))
    agent = Agent(
        model, tools=[page], prompting=Prompting(parallel=True), limits=Limits(tokens=budget, observation_tokens=300)
    )
    result = drive(agent, "Read.", driver)
    assert result.usage.total_tokens <= budget


# context-windows.md: "Every request fits it"; guarantees.md: "every request fits the window ... a
# window's end gets the forced final call; model_error only when no request can fit". One action a
# step in a 2,000-token window: the run completes with elided steps.
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_window_run_with_one_action_a_step_completes_with_elisions(driver: str) -> None:
    model = ScriptedModel(
        [f"ACTION: page[{i}]" for i in range(6)] + ["FINAL: ok"], tokenizer=_counting(1.0), context_window=2000
    )
    agent = Agent(model, tools=[page], limits=Limits(observation_tokens=300, reply_tokens=128))
    result = drive(agent, "Read.", driver)
    assert result.answer == "ok" and any(step.elided for step in result.steps)


# The same window with four actions a step: the second request (2,080 prompt + 128 reply, as the
# server counts; the engine, which had not yet seen how it counts tool output, estimated 1,519)
# passed the window, and the run ended in model_error with the server's own words. The refusal's
# count leaves no retry of the step (its latest step stays), but the forced final call fits (it
# may elide the latest step), so the window's end gets it.
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_window_run_with_four_actions_a_step_never_sends_a_request_past_it(driver: str) -> None:
    model = ScriptedModel([_four(i) for i in range(5)] + ["FINAL: ok"], tokenizer=_counting(1.0), context_window=2000)
    agent = Agent(
        model, tools=[page], prompting=Prompting(parallel=True), limits=Limits(observation_tokens=300, reply_tokens=128)
    )
    result = drive(agent, "Read.", driver)
    assert result.stop_reason != "model_error", result.error
