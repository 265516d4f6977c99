"""attack3: token-exact trajectories from a server (token_ids=True), exports, eval --n/--trajectories.

From docs/how-to/trajectories.md, help(react_text.observers.trajectory), help(evaluate/aevaluate), help of
wire.read_tokens ("None when the answer does not say enough") and `react-text eval --help`.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _attack3_fake import Answer, Fake, Seen, chat_answer

from react_text import Agent, Limits, OpenAIChat, ScriptedModel
from react_text.evaluation import Task, evaluate
from react_text.observers.trajectory import as_record, as_trl, as_verifiers, as_verl, group_advantages
from react_text.tools.toolbox import calculator

VLLM = {
    "/version": {"version": "0.12.0"},
    "/v1/models": {
        "object": "list",
        "data": [{"id": "m", "object": "model", "owned_by": "vllm", "max_model_len": 8192}],
    },
}
FINAL = [("THOUGHT", 1), (":", 2), (" x", 3), ("\n", 4), ("FINAL", 5), (":", 2), (" 42", 7)]


def vllm_answer(
    tokens: list[tuple[str, int]], prompt: list[int], *, logprob: float = -0.5, ids: list[Any] | None = None
) -> dict[str, Any]:
    """vLLM's chat answer with return_token_ids and logprobs (prompt_token_ids, choice.token_ids)."""
    content = [{"token": t, "logprob": logprob, "bytes": list(t.encode()), "top_logprobs": []} for t, _ in tokens]
    extra = {"token_ids": [i for _, i in tokens] if ids is None else ids, "logprobs": {"content": content}}
    answer = chat_answer("".join(t for t, _ in tokens), extra=extra)
    answer["prompt_token_ids"] = prompt
    return answer


def _vllm(reply: Any) -> Fake:
    def behave(seen: Seen, n: int) -> Answer:
        if seen.method == "GET":
            return Answer(200, VLLM[seen.path]) if seen.path in VLLM else Answer(404, {})
        return Answer(body=reply(seen))

    return Fake(behave)


def _run(fake: Fake, steps: int = 2):
    model = OpenAIChat("m", base_url=fake.url, api_key="x", token_ids=True)
    return Agent(model, tools=[calculator], limits=Limits(steps=steps)).run("q")


def test_a_vllm_answer_with_token_ids_gives_an_exact_trajectory_and_exports() -> None:
    with _vllm(lambda seen: vllm_answer(FINAL, [100, 101, 102])) as fake:
        result = _run(fake)
        body = fake.posts()[0].body
    assert body["return_token_ids"] is True and body["logprobs"] is True
    trajectory = result.trajectory
    assert trajectory is not None and trajectory.exact
    (segment,) = trajectory.segments
    assert segment.ids == (100, 101, 102, 1, 2, 3, 4, 5, 2, 7)
    assert segment.mask == (0, 0, 0) + (1,) * 7
    assert segment.logprobs == (0.0,) * 3 + (-0.5,) * 7
    (row,) = as_verl(trajectory, reward=1.0)
    assert row["prompt_ids"] + row["response_ids"] == list(segment.ids)
    assert row["reward_score"] == 1.0
    batch = as_trl([trajectory])
    assert batch["completion_ids"] == [[1, 2, 3, 4, 5, 2, 7]]
    assert batch["env_mask"] == [[1] * 7]
    (step,) = as_verifiers(trajectory)
    assert step["prompt_ids"] == [100, 101, 102]
    json.dumps(as_record(trajectory), allow_nan=False)


def test_two_turns_whose_prompt_extends_the_last_are_one_segment_with_the_observation_masked() -> None:
    act = [("THOUGHT", 1), (":", 2), (" a", 8), ("\n", 4), ("ACTION", 9), (":", 2), (" calculator[2 + 3]", 10)]

    def reply(seen: Seen) -> dict[str, Any]:
        if len(seen.body["messages"]) <= 2:
            return vllm_answer(act, [100, 101])
        return vllm_answer(FINAL, [100, 101] + [i for _, i in act] + [200, 201])

    with _vllm(reply) as fake:
        result = _run(fake, steps=3)
    assert result.answer == "42"
    trajectory = result.trajectory
    assert trajectory is not None and trajectory.exact, trajectory
    (segment,) = trajectory.segments
    assert segment.ids == (100, 101, 1, 2, 8, 4, 9, 2, 10, 200, 201, 1, 2, 3, 4, 5, 2, 7)
    assert segment.mask == (0, 0) + (1,) * 7 + (0, 0) + (1,) * 7
    assert len(segment.logprobs) == len(segment.ids)


def test_a_next_prompt_that_does_not_extend_the_last_starts_a_new_segment_saying_why() -> None:
    act = [("THOUGHT", 1), (":", 2), (" a", 8), ("\n", 4), ("ACTION", 9), (":", 2), (" calculator[2 + 3]", 10)]

    def reply(seen: Seen) -> dict[str, Any]:
        if len(seen.body["messages"]) <= 2:
            return vllm_answer(act, [100, 101])
        return vllm_answer(FINAL, [100, 555, 556])  # the template rendered the conversation anew

    with _vllm(reply) as fake:
        trajectory = _run(fake, steps=3).trajectory
    assert trajectory is not None
    assert len(trajectory.segments) == 2
    assert trajectory.segments[1].reason != "start"
    assert trajectory.segments[1].ids[:3] == (100, 555, 556)


@pytest.mark.parametrize(
    "ids",
    [
        [1, 2, 3],
        ["1", "2", "3", "4", "5", "2", "7"],
        [-1, 2, 3, 4, 5, 2, 7],
        [True, 2, 3, 4, 5, 2, 7],
        [1.5, 2, 3, 4, 5, 2, 7],
    ],
    ids=["too-few", "strings", "negative", "bool", "float"],
)
def test_token_ids_that_do_not_fit_the_reply_give_no_trajectory(ids: list[Any]) -> None:
    with _vllm(lambda seen: vllm_answer(FINAL, [100], ids=ids)) as fake:
        result = _run(fake)
    assert result.answer == "42"
    assert result.trajectory is None


@pytest.mark.parametrize("logprob", [float("nan"), float("-inf"), 5.0])
def test_a_log_probability_that_is_not_one_is_never_exact(logprob: float) -> None:
    with _vllm(lambda seen: vllm_answer(FINAL, [100], logprob=logprob)) as fake:
        trajectory = _run(fake).trajectory
    if trajectory is not None and trajectory.exact:
        assert all(math.isfinite(x) and x <= 0.0 for s in trajectory.segments for x in s.logprobs)
        json.dumps(as_record(trajectory), allow_nan=False)


def test_group_advantages_are_grpos_and_a_group_that_agrees_gets_zero() -> None:
    lines = [
        {"id": "a", "reward": 1.0},
        {"id": "a", "reward": 0.0},
        {"id": "b", "reward": 1.0},
        {"id": "b", "reward": 1.0},
    ]
    a1, a0, b1, b2 = group_advantages(lines)
    std = math.sqrt(0.5)  # sample deviation of (1, 0)
    assert a1 == pytest.approx(0.5 / (std + 1e-4)) and a0 == pytest.approx(-0.5 / (std + 1e-4))
    assert (b1, b2) == (0.0, 0.0)
    assert group_advantages(lines, scale=False)[:2] == [0.5, -0.5]


def _eval_groups(tmp_path: Path, reward: Any) -> list[str]:
    path = tmp_path / "groups.jsonl"
    tasks = [Task("a", "What is 2 + 3?", "5")]
    evaluate(tasks, lambda task: ScriptedModel(["FINAL: 5"]), root=tmp_path, n=3, trajectories=path, reward=reward)
    return path.read_text().splitlines()


def test_eval_n_writes_one_line_per_episode_with_its_seed_and_says_no_token_ids(tmp_path: Path) -> None:
    lines = [json.loads(line) for line in _eval_groups(tmp_path, None)]
    assert [(x["id"], x["sample"], x["seed"], x["reward"]) for x in lines] == [("a", k, k, 1.0) for k in range(3)]
    assert all(x["exact"] is False and x["segments"] is None and x["reason"] for x in lines)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), None, "1"], ids=["nan", "inf", "none", "str"])
def test_a_reward_that_is_not_a_number_is_refused_or_never_written(tmp_path: Path, value: Any) -> None:
    try:
        lines = _eval_groups(tmp_path, lambda task, result: value)
    except (TypeError, ValueError):
        return  # refused clearly: fine
    for line in lines:
        reward = json.loads(line, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))["reward"]
        assert isinstance(reward, float) and math.isfinite(reward)


def _eval_cli(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "t.jsonl").write_text('{"id": "a", "task": "What is 2 + 3?", "answer": "5"}\n')
    (tmp_path / "s.txt").write_text("ACTION: calculator[2 + 3]\n---\nFINAL: 5\n")
    command = [sys.executable, "-m", "react_text.cli", "eval", "t.jsonl", "--script", "s.txt", *flags]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path, env=dict(os.environ))


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--n", "0"], "argument --n: must be a positive whole number, not 0"),
        (["--workers", "2"], "--workers goes with --ray"),
        (["--seed", "x"], "argument --seed: invalid int value: 'x'"),
    ],
)
def test_eval_bad_group_flags_are_one_line_and_exit_2(tmp_path: Path, flags: list[str], said: str) -> None:
    proc = _eval_cli(tmp_path, *flags)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and said in proc.stderr


def test_eval_ray_without_the_extra_is_one_line_and_exit_2(tmp_path: Path) -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        proc = _eval_cli(tmp_path, "--ray")
        assert proc.returncode == 2
        assert proc.stderr.strip() == "react-text: episodes on Ray need the ray extra: pip install 'react-text[ray]'"
    else:
        pytest.skip("ray is installed")


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_eval_a_temperature_that_is_not_one_is_refused(tmp_path: Path, value: str) -> None:
    proc = _eval_cli(tmp_path, "--temperature", value)
    assert proc.returncode == 2
    assert "--temperature" in proc.stderr


def test_eval_trajectories_against_a_server_that_gives_token_ids_writes_them(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text('{"id": "a", "task": "What is 2 + 3?", "answer": "42"}\n')
    with _vllm(lambda seen: vllm_answer(FINAL, [100, 101])) as fake:
        command = [sys.executable, "-m", "react_text.cli", "eval", "t.jsonl", "--base-url", fake.url, "--model", "m"]
        command += ["--n", "2", "--temperature", "0.8", "--trajectories", "groups.jsonl"]
        env = {**os.environ, "OPENAI_API_KEY": "x"}
        proc = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in (tmp_path / "groups.jsonl").read_text().splitlines()]
    # written as each episode ends (two at once here): the file's order is the episodes' ends, not their seeds
    assert sorted(x["seed"] for x in lines) == [0, 1]
    assert all(x["exact"] and x["segments"] for x in lines), lines[0]["reason"]
