"""Proof with the embedded model: the trajectory's ids are the ids llama.cpp sampled, and a trainer
recomputing their log-probabilities teacher-forced (llama.cpp itself, the whole sequence evaluated
at once, the logits read at each position) gets the rollout's. Run under
`flock /tmp/react-text-llama.lock`: never two llama.cpp processes at once.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from react_text import Agent
from react_text.core.limits import Limits
from react_text.core.types import RunResult

pytestmark = pytest.mark.slow

TASKS = ["What is 17 + 25?", "What is the capital of France? Use lookup."]


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def lookup(item: str) -> str:
    """Look up a fact."""
    return {"capital of france": "Paris"}.get(item.strip().casefold(), "unknown")


@pytest.fixture(scope="module")
def runs() -> tuple[Any, list[RunResult], list[list[int]]]:
    local = pytest.importorskip("react_text.backends.local")
    model = local.LocalModel(n_ctx=2048)
    sampled: list[list[int]] = []
    generate = model._llm.generate

    def recording(*args: Any, **kwargs: Any) -> Any:  # every id llama.cpp yields, call by call
        ids: list[int] = []
        sampled.append(ids)
        for token in generate(*args, **kwargs):
            ids.append(token)
            yield token

    model._llm.generate = recording
    agent = Agent(model, tools=[add, lookup], limits=Limits(steps=3, reply_tokens=64))
    results = [agent.run(task) for task in TASKS]
    return model, results, sampled


def test_every_completion_id_is_the_id_llama_cpp_sampled(runs: Any) -> None:
    _, results, sampled = runs
    calls = iter(sampled)
    for result in results:
        assert result.trajectory is not None and result.trajectory.exact
        for segment in result.trajectory.segments:
            assert len(segment.ids) == len(segment.mask) == len(segment.logprobs)
            for turn in segment.turns:
                ids = segment.ids[turn.start : turn.start + turn.completion]
                assert list(ids) == next(calls)[: turn.completion]
                assert all(m == 1 for m in segment.mask[turn.start : turn.start + turn.completion])
                assert all(p < 0 or p == 0.0 for p in segment.logprobs[turn.start : turn.start + turn.completion])


def test_completion_mode_is_one_segment_per_episode_unless_elided(runs: Any) -> None:
    _, results, _ = runs
    for result in results:
        assert result.trajectory is not None
        if not any(s.elided for s in result.steps):
            assert len(result.trajectory.segments) == 1, [s.reason for s in result.trajectory.segments]


def test_teacher_forced_logprobs_agree_with_the_rollouts(runs: Any) -> None:
    import llama_cpp
    import numpy as np

    model, results, _ = runs
    judge = llama_cpp.Llama(model_path=str(model.path), n_ctx=2048, logits_all=True, verbose=False, n_threads=2)
    gaps: list[float] = []
    changed = 0
    for result in results:
        assert result.trajectory is not None
        for segment in result.trajectory.segments:
            judge.reset()
            judge.eval(list(segment.ids))
            scores = np.asarray(judge.scores[: len(segment.ids)], dtype=np.float64)
            for i, (token, mask, rollout) in enumerate(zip(segment.ids, segment.mask, segment.logprobs, strict=True)):
                if mask:
                    row = scores[i - 1]
                    top = row.max()
                    forced = row[token] - top - math.log(np.exp(row - top).sum())
                    gaps.append(abs(forced - rollout))
            text = judge.detokenize(list(segment.ids))
            changed += judge.tokenize(text, add_bos=True, special=False) != list(segment.ids)
    assert gaps
    mean, worst = sum(gaps) / len(gaps), max(gaps)
    print(f"teacher-forced gap over {len(gaps)} ids: mean {mean:.2e}, worst {worst:.2e}; re-encoding changed {changed}")
    # Measured on 2 episodes, 225 ids: mean 1.5e-2, worst 0.27 nats. The gap is llama.cpp's own
    # numerics (one id at a time during the rollout, the whole segment in one batch here, on Q4_1
    # weights); an id out of place would cost nats on average, not hundredths.
    assert mean < 0.05 and worst < 0.5, (mean, worst)


def test_a_seed_repeats_an_episode_and_other_seeds_sample_others() -> None:
    local = pytest.importorskip("react_text.backends.local")
    model = local.LocalModel(n_ctx=2048, temperature=1.0)
    agent = Agent(model, tools=[add, lookup], limits=Limits(steps=2, reply_tokens=48))

    def sampled(seed: int) -> list[tuple[int, ...]]:
        result = agent.run(TASKS[0], seed=seed)
        assert result.trajectory is not None
        return [s.ids[s.prompt :] for s in result.trajectory.segments]

    first = sampled(1)
    assert sampled(1) == first  # the same seed, the same episode (the prefix cache warm, not cold)
    assert any(sampled(seed) != first for seed in (2, 3, 4))
