"""Attacks on the embedded model's small windows (slow: run under flock /tmp/react-text-llama.lock).

README: "The window comes from the model where it can say (LocalModel's `n_ctx`, ...). Every
request fits it: when the history would not, the oldest observations are elided"; "a run longer
than the context window completes with elided steps".
"""

from __future__ import annotations

import asyncio

import pytest

from react_text import Agent, Limits, LocalModel, RunResult

pytestmark = pytest.mark.slow


def page(name: str) -> str:
    """Return a page of the notes."""
    return "The bridge opened in 1932. " * 40


@pytest.mark.parametrize("n_ctx", [640, 1024])
@pytest.mark.parametrize("api", ["completion", "chat"])
def test_a_small_local_window_is_never_overflowed(n_ctx: int, api: str) -> None:
    """A run over a small n_ctx, with long observations, never fails with a context error: both
    drivers, one model (one context, one at a time)."""
    model = LocalModel(n_ctx=n_ctx, api=api)  # type: ignore[arg-type]
    agent = Agent(model, tools=[page], limits=Limits(steps=6, reply_tokens=64, observation_tokens=300))
    task = "Read the page called bridge, then the page called tower, then say when the bridge opened."
    results: list[RunResult] = [agent.run(task), asyncio.run(agent.arun(task))]
    for result in results:
        assert result.stop_reason != "model_error", result.error
