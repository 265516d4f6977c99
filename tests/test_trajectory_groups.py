"""GRPO groups: `n` episodes per task, each run sent its own seed on every model call, the seeds in
the results and trajectory lines, and the group-relative advantages computed from those lines."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import make_agent
from fake_openai import FakeServer

from react_text import evaluation
from react_text.core.types import Reply, Request, Tokens
from react_text.observers.trajectory import group_advantages


@dataclass
class SeededModel:
    """A completion model whose answer depends on the seed it is sent: an even seed answers 42, an
    odd one 7, no seed 0. It keeps token ids (one per byte) and records every seed it was sent."""

    api: str = "completion"
    name: str = "seeded"
    accepts_grammar: bool = False
    seeds: list[int | None] = field(default_factory=list)

    def count_tokens(self, text: str) -> int:
        return len(text.encode())

    def generate(self, request: Request) -> Reply:
        assert isinstance(request.prompt, str)
        self.seeds.append(request.seed)
        answer = 0 if request.seed is None else 42 if request.seed % 2 == 0 else 7
        text = f" I know it.\nFINAL: {answer}"
        ids = tuple(text.encode())
        tokens = Tokens(
            tuple(request.prompt.encode()), ids, (-0.5,) * len(ids), tuple(range(1, len(ids) + 1)), len(ids)
        )
        return Reply(text, None, "stop", tokens=tokens)

    async def agenerate(self, request: Request) -> Reply:
        return self.generate(request)


def lookup(item: str) -> str:
    """Look up an item."""
    return "42"


@dataclass
class Recording:
    """Replies from a script; records the seed of every request."""

    replies: list[str]
    api: str = "chat"
    name: str = "recording"
    accepts_grammar: bool = False
    seeds: list[int | None] = field(default_factory=list)

    def generate(self, request: Request) -> Reply:
        self.seeds.append(request.seed)
        return Reply(self.replies[len(self.seeds) - 1], None, "stop")

    async def agenerate(self, request: Request) -> Reply:
        return self.generate(request)


@pytest.mark.parametrize("driver", ["sync", "async"])
@pytest.mark.parametrize("seed", [None, 0, 7])
def test_a_run_sends_its_seed_on_every_call(driver: str, seed: int | None) -> None:
    model = Recording(["THOUGHT: I look.\nACTION: lookup[x]", "THOUGHT: Found.\nFINAL: 42"])
    agent = make_agent(model, [lookup])
    result = (
        agent.run("What is x?", seed=seed) if driver == "sync" else asyncio.run(agent.arun("What is x?", seed=seed))
    )
    assert result.stop_reason == "final"
    assert model.seeds == [seed, seed]


def test_a_seed_that_is_not_a_whole_number_is_refused() -> None:
    agent = make_agent(SeededModel())
    for bad in (1.5, "3", True):
        with pytest.raises(TypeError, match="seed must be a whole number"):
            agent.run("What is x?", seed=bad)  # type: ignore[arg-type]


TASKS = [evaluation.Task("a", "What is x?", "42"), evaluation.Task("b", "What is y?", "42")]


def test_eval_runs_n_episodes_a_task_with_distinct_seeds_and_their_advantages_follow(tmp_path: Path) -> None:
    out = tmp_path / "groups.jsonl"
    models: list[SeededModel] = []

    def model_for(task: evaluation.Task) -> SeededModel:
        models.append(SeededModel())
        return models[-1]

    outcomes = evaluation.evaluate(TASKS, model_for, root=tmp_path, n=4, seed=10, concurrency=3, trajectories=out)
    assert [(o.id, o.sample, o.seed) for o in outcomes] == [(t.id, k, 10 + k) for t in TASKS for k in range(4)]
    assert [o.ok for o in outcomes] == [True, False, True, False] * 2  # even seeds answer 42
    assert sorted(s for m in models for s in m.seeds) == sorted([10, 11, 12, 13] * 2)  # every call sent its seed

    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted((li["id"], li["sample"], li["seed"]) for li in lines) == [
        (t.id, k, 10 + k) for t in TASKS for k in range(4)
    ]
    for line in lines:
        assert line["reward"] == (1.0 if line["seed"] % 2 == 0 else 0.0)
        (segment,) = line["segments"]
        assert bytes(segment["ids"][segment["prompt"] :]).endswith(
            f"FINAL: {42 if line['seed'] % 2 == 0 else 7}".encode()
        )
    advantages = group_advantages(lines)
    # rewards 1, 0, 1, 0 in each group: mean 0.5, sample deviation sqrt(1/3), so +-0.866 (TRL's formula)
    for line, advantage in zip(lines, advantages, strict=True):
        expected = (line["reward"] - 0.5) / ((1 / 3) ** 0.5 + 1e-4)
        assert advantage == pytest.approx(expected)
    for task in TASKS:
        assert sum(a for li, a in zip(lines, advantages, strict=True) if li["id"] == task.id) == pytest.approx(0.0)


def test_one_episode_a_task_and_no_seed_leaves_the_models_own() -> None:
    model = SeededModel()
    (outcome,) = evaluation.evaluate(TASKS[:1], model, root=Path("."))
    assert (outcome.sample, outcome.seed) == (0, None) and model.seeds == [None]
    assert "a " in evaluation.table([outcome]) and "a#0" not in evaluation.table([outcome])


def test_group_advantages_of_a_group_that_agrees_or_stands_alone_are_zero() -> None:
    lines = [{"id": "a", "reward": 1.0}, {"id": "a", "reward": 1.0}, {"id": "b", "reward": 0.3}]
    assert group_advantages(lines) == [0.0, 0.0, 0.0]
    assert group_advantages([{"id": 1, "reward": 2.0}, {"id": 1, "reward": 0.0}], scale=False) == [1.0, -1.0]


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_n_must_be_a_whole_number_of_episodes(n: object) -> None:
    with pytest.raises(ValueError, match="n must be a whole number"):
        evaluation.evaluate(TASKS, SeededModel(), root=Path("."), n=n)


def test_done_episodes_are_skipped_by_task_and_sample(tmp_path: Path) -> None:
    first = evaluation.evaluate(TASKS, SeededModel(), root=tmp_path, n=3)
    model = SeededModel()
    kept = [o for o in first if o.sample != 1]
    rest = evaluation.evaluate(TASKS, model, root=tmp_path, n=3, done=kept)
    assert [(o.id, o.sample, o.seed) for o in rest] == [("a", 1, 1), ("b", 1, 1)]
    assert model.seeds == [1, 1]


def test_eval_n_sends_each_episodes_seed_and_the_temperature_and_resumes_by_sample(tmp_path: Path) -> None:
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text(
        "".join(json.dumps({"id": i, "task": f"What is {i} + 1?", "answer": "x"}) + "\n" for i in "pq")
    )
    out = tmp_path / "results.jsonl"
    command = [sys.executable, "-m", "react_text.cli", "eval", str(task_file), "--model", "fake", "--parser", "naive",
               "--out", str(out), "--n", "3", "--seed", "5", "--temperature", "0.5", "--concurrency", "2"]  # fmt: skip
    with FakeServer() as server:
        done = subprocess.run(
            [*command, "--base-url", server.url], capture_output=True, text=True, timeout=60, check=False
        )
        assert done.returncode in (0, 1), done.stderr
        seeds = sorted(body["seed"] for body in server.bodies)
        assert {body["temperature"] for body in server.bodies} == {0.5}
        assert set(seeds) == {5, 6, 7} and seeds.count(5) == seeds.count(6) == seeds.count(7)
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert sorted((r["id"], r["sample"], r["seed"]) for r in rows) == [
            (i, k, 5 + k) for i in "pq" for k in range(3)
        ]
        assert "p#0" in done.stdout and "q#2" in done.stdout

        out.write_text("".join(json.dumps(r) + "\n" for r in rows if (r["id"], r["sample"]) != ("q", 1)))
        server.bodies.clear()
        again = subprocess.run(
            [*command, "--base-url", server.url, "--resume"], capture_output=True, text=True, timeout=60, check=False
        )
        assert again.returncode in (0, 1), again.stderr
        assert {body["seed"] for body in server.bodies} == {6}  # only q's sample 1 ran again
        assert len(out.read_text().splitlines()) == 6


def test_eval_n_at_temperature_0_says_the_episodes_will_be_alike(tmp_path: Path) -> None:
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text(json.dumps({"id": "p", "task": "What is 1 + 1?", "answer": "2"}) + "\n")
    with FakeServer() as server:
        done = subprocess.run(
            [sys.executable, "-m", "react_text.cli", "eval", str(task_file), "--model", "fake", "--n", "2",
             "--base-url", server.url],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert "at temperature 0" in done.stderr and "--temperature" in done.stderr


def test_a_reward_that_raises_names_its_task_and_a_bool_is_a_number(tmp_path: Path) -> None:
    from react_text import ScriptedModel

    tasks = [evaluation.Task("a", "What is 2 + 3?", "5")]
    path = tmp_path / "lines.jsonl"

    def broken(task: evaluation.Task, result: object) -> float:
        raise KeyError("score")

    with pytest.raises(KeyError) as raised:
        evaluation.evaluate(
            tasks, lambda t: ScriptedModel(["FINAL: 5"]), root=tmp_path, trajectories=path, reward=broken
        )
    assert "in reward= for task 'a'" in raised.value.__notes__
    with pytest.raises(ValueError, match=r"reward= gave nan for task 'a': a reward is a finite number"):
        evaluation.evaluate(
            tasks,
            lambda t: ScriptedModel(["FINAL: 5"]),
            root=tmp_path,
            trajectories=path,
            reward=lambda t, r: float("nan"),
        )
    assert not path.exists() or path.read_text() == ""
    evaluation.evaluate(
        tasks, lambda t: ScriptedModel(["FINAL: 5"]), root=tmp_path, trajectories=path, reward=lambda t, r: True
    )
    assert json.loads(path.read_text())["reward"] == 1.0
