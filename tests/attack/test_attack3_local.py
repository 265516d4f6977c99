"""attack3: seeds on the embedded model (slow: llama.cpp; run under flock /tmp/react-text-llama.lock).

trajectories.md: "Above temperature 0, runs of one task with distinct seeds are distinct episodes;
the same seed repeats one." `eval --seed S` takes any whole number, -1 too.
"""

from __future__ import annotations

import pytest

from react_text import Agent, Limits, LocalModel


@pytest.mark.slow
@pytest.mark.parametrize("seed", [-1, 2**32 - 1])
def test_the_same_seed_repeats_an_episode_whatever_its_value(seed: int) -> None:
    """Refused clearly at set-up (fix3 chose this: a seed is 0 to 2**32 - 2), or it repeats."""
    model = LocalModel(temperature=1.0)
    try:
        agent = Agent(model, limits=Limits(steps=1, reply_tokens=24))
        try:
            agent.run("Name a random animal.", seed=seed)
        except ValueError:
            return  # refused clearly: fine
        replies = {agent.run("Name a random animal.", seed=seed).steps[0].reply for _ in range(3)}
    finally:
        model.close()
    assert len(replies) == 1, replies


@pytest.mark.slow
def test_seed_7_repeats_its_episode() -> None:
    model = LocalModel(temperature=1.0)
    try:
        agent = Agent(model, limits=Limits(steps=1, reply_tokens=24))
        replies = {agent.run("Name a random animal.", seed=7).steps[0].reply for _ in range(2)}
    finally:
        model.close()
    assert len(replies) == 1, replies
