"""Trajectories built from what a model was given and sampled, and their exports for RL trainers.

`ByteModel` plays a backend that keeps token ids the way LocalModel does: one id per byte, the
sampled ids kept and extended on the next call (never the whole prompt re-encoded), a stop
sequence cutting the reply. The exports are checked against the field names and order that each
trainer's own source defines, read at these commits:

- verl: volcengine/verl@b178a3cd56f58b2d502255daba591e92833930a7,
  verl/experimental/agent_loop/agent_loop.py `class AgentLoopOutput(BaseModel)`; tool tokens get
  log-probability 0.0 (tool_agent_loop.py: `agent_data.response_logprobs += [0.0] * len(response_ids)`)
- TRL: huggingface/trl@f2cd57710ae345ea6428ae95363267fcf38a3dc8, trl/trainer/grpo_trainer.py:
  `required_keys = {"prompt_ids", "completion_ids", "logprobs"}`, `env_mask` popped from the extra
  fields ("marks model tokens (1) vs external tokens (0)"), tool tokens padded with 0.0 log-probabilities
- SkyRL: NovaSky-AI/SkyRL@a9564572eb8e91076be43c1bd5e4615e3de17265, skyrl/train/generators/base.py
  `class GeneratorOutput(TypedDict)`
- verifiers: PrimeIntellect-ai/verifiers@a60a606ecc4d309247edf9ff92c3eabca362781f,
  verifiers/legacy/types.py `class TrajectoryStepTokens(TypedDict)`
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import Drive, make_agent

from react_text import Agent
from react_text.core.types import Reply, Request, RunResult, Tokens
from react_text.observers.trajectory import as_record, as_skyrl, as_trl, as_verifiers, as_verl

VERL_FIELDS = [  # AgentLoopOutput, in source order
    "prompt_ids",
    "response_ids",
    "response_mask",
    "response_logprobs",
    "routed_experts",
    "multi_modal_data",
    "reward_score",
    "num_turns",
    "metrics",
    "extra_fields",
]
VERL_METRICS = ["generate_sequences", "tool_calls", "num_preempted"]  # AgentLoopMetrics
SKYRL_FIELDS = [  # GeneratorOutput, in source order
    "prompt_token_ids",
    "response_ids",
    "rewards",
    "loss_masks",
    "stop_reasons",
    "rollout_metrics",
    "rollout_logprobs",
    "trajectory_ids",
    "trajectory_generation_times",
    "trajectory_time_splits",
    "rollout_expert_indices",
    "is_last_step",
    "env_metrics",
]
VERIFIERS_FIELDS = [  # TrajectoryStepTokens's required keys, in source order
    "prompt_ids",
    "prompt_mask",
    "completion_ids",
    "completion_mask",
    "completion_logprobs",
    "overlong_prompt",
    "is_truncated",
    "routed_experts",
]


@dataclass
class ByteModel:
    """A completion model whose tokens are bytes; it samples its script and keeps the ids."""

    replies: list[str]
    api: str = "completion"
    name: str = "bytes"
    accepts_grammar: bool = False
    given: list[tuple[int, ...]] = field(default_factory=list)
    sampled: list[tuple[int, ...]] = field(default_factory=list)

    def count_tokens(self, text: str) -> int:
        return len(text.encode())

    def generate(self, request: Request) -> Reply:
        assert isinstance(request.prompt, str)
        text = self.replies[len(self.given)]
        prompt = tuple(request.prompt.encode())
        for stop in request.stop:
            text = text.split(stop)[0]
        full = self.replies[len(self.given)].encode()
        ids = tuple(text.encode())
        logprobs = tuple(-0.01 * (i + 1) for i in range(len(ids)))
        self.given.append(prompt)
        self.sampled.append(tuple(full))
        tokens = Tokens(prompt, ids, logprobs, tuple(range(1, len(ids) + 1)), len(full))
        return Reply(text, None, "stop", tokens=tokens)

    async def agenerate(self, request: Request) -> Reply:
        return self.generate(request)


def lookup(item: str) -> str:
    """Look up an item."""
    return {"x": "42"}.get(item, "unknown")


def run(drive: Drive, replies: list[str], **options: object) -> tuple[RunResult, ByteModel]:
    model = ByteModel(replies)
    agent = make_agent(model, [lookup], **options)
    return drive(agent, "What is x?"), model


def test_a_completion_run_is_one_append_only_segment(drive: Drive) -> None:
    result, model = run(drive, [" I look.\nACTION: lookup[x]", " Found.\nFINAL: 42"])
    assert result.answer == "42"
    trajectory = result.trajectory
    assert trajectory is not None and trajectory.exact
    (segment,) = trajectory.segments
    assert segment.reason == "start" and trajectory.extended == 1.0
    assert len(segment.ids) == len(segment.mask) == len(segment.logprobs)
    assert segment.ids[: segment.prompt] == model.given[0]
    # every prompt the model was given is a prefix of the segment, and the segment ends in the last reply
    for given in model.given:
        assert segment.ids[: len(given)] == given
    first, second = segment.turns
    assert segment.ids[first.start : first.start + first.completion] == tuple(b" I look.\nACTION: lookup[x]")
    assert segment.mask[first.start : first.start + first.completion] == (1,) * first.completion
    assert segment.logprobs[first.start : first.start + first.completion] == model_logprobs(first.completion)
    appended = bytes(segment.ids[first.start + first.completion : second.start])
    assert b"OBSERVATION: 42" in appended
    assert set(segment.mask[first.start + first.completion : second.start]) == {0}
    assert set(segment.logprobs[first.start + first.completion : second.start]) == {0.0}
    assert segment.ids[second.start :] == tuple(b" Found.\nFINAL: 42")
    assert sum(segment.mask) == first.completion + second.completion


def model_logprobs(n: int) -> tuple[float, ...]:
    return tuple(-0.01 * (i + 1) for i in range(n))


def test_ids_cut_by_a_stop_sequence_are_counted_not_kept(drive: Drive) -> None:
    reply = " I look.\nACTION: lookup[x]\nOBSERVATION: 7"  # a made-up observation: the stop cuts it
    result, _ = run(drive, [reply, " Done.\nFINAL: 42"])
    assert result.trajectory is not None
    first = result.trajectory.segments[0].turns[0]
    assert first.completion == len(b" I look.\nACTION: lookup[x]")
    assert first.dropped == len(reply.encode()) - first.completion


def test_a_guard_cut_inside_a_token_is_recorded() -> None:
    from react_text.core.types import Step, Usage
    from react_text.observers.trajectory import Call, build

    # two ids: "FINAL: 4" and "2\nOBS"; the guard keeps "FINAL: 42" (cut inside the second id)
    tokens = Tokens((1, 2), (10, 11), (-0.5, -0.25), (8, 13), 2)
    reply = Reply("FINAL: 42\nOBS", tokens=tokens)
    step = Step(1, reply.text, None, None, Usage(), Usage(), 0.0, cut="\nOBS")  # type: ignore[arg-type]
    trajectory = build([Call(1, reply, tokens)], [step], chat=False)
    (turn,) = trajectory.segments[0].turns
    assert turn.inside and turn.completion == 1 and turn.dropped == 1
    assert trajectory.segments[0].ids == (1, 2, 10)


def test_a_rewritten_prompt_starts_a_new_segment_and_says_why() -> None:
    from react_text.observers.trajectory import Call, build

    one = Tokens((1, 2, 3), (4, 5), (-0.1, -0.2), (1, 2), 2)
    two = Tokens((1, 9, 4, 5, 6), (7,), (-0.3,), (1,), 1)  # the prompt no longer starts with 1, 2, 3
    calls = [Call(1, Reply("ab", tokens=one), one), Call(2, Reply("c", tokens=two), two)]
    trajectory = build(calls, [], chat=False)
    assert [s.reason for s in trajectory.segments] == ["start", "rewritten"]
    assert trajectory.segments[0].ids == (1, 2, 3, 4, 5)
    assert trajectory.segments[1].ids == (1, 9, 4, 5, 6, 7) and trajectory.segments[1].prompt == 5
    assert trajectory.extended == 0.0
    assert build(calls, [], chat=True).segments[1].reason == "template"


def test_no_trajectory_without_token_ids(drive: Drive) -> None:
    from react_text import ScriptedModel

    agent = make_agent(ScriptedModel(["FINAL: 1"]), [lookup])
    assert drive(agent, "q").trajectory is None


def test_exports_have_each_trainers_fields_in_order(drive: Drive) -> None:
    result, _ = run(drive, [" I look.\nACTION: lookup[x]", " Found.\nFINAL: 42"])
    trajectory = result.trajectory
    assert trajectory is not None
    (segment,) = trajectory.segments
    (verl,) = as_verl(trajectory, reward=1.0)
    assert list(verl) == VERL_FIELDS and list(verl["metrics"]) == VERL_METRICS
    assert verl["prompt_ids"] + verl["response_ids"] == list(segment.ids)
    assert len(verl["response_ids"]) == len(verl["response_mask"]) == len(verl["response_logprobs"])
    assert verl["reward_score"] == 1.0 and verl["num_turns"] == 4  # user, assistant, tool, assistant

    trl = as_trl([trajectory, trajectory])
    assert {"prompt_ids", "completion_ids", "logprobs"} <= set(trl) and "env_mask" in trl
    for key in trl:
        assert len(trl[key]) == 2
    for ids, logprobs, mask in zip(trl["completion_ids"], trl["logprobs"], trl["env_mask"], strict=True):
        assert len(ids) == len(logprobs) == len(mask)
        assert all(p == 0.0 for p, m in zip(logprobs, mask, strict=True) if m == 0)

    sky = as_skyrl([trajectory], [0.5], ["final"])
    assert list(sky) == SKYRL_FIELDS
    assert sky["rewards"] == [0.5] and sky["stop_reasons"] == ["final"] and sky["is_last_step"] == [True]
    assert len(sky["response_ids"][0]) == len(sky["loss_masks"][0]) == len(sky["rollout_logprobs"][0])
    with pytest.raises(ValueError, match="rewards"):
        as_skyrl([trajectory], [])

    steps = as_verifiers(trajectory)
    assert [list(s) for s in steps] == [VERIFIERS_FIELDS] * 2
    for s, turn in zip(steps, segment.turns, strict=True):
        assert len(s["completion_ids"]) == len(s["completion_logprobs"]) == len(s["completion_mask"])
        assert s["prompt_ids"] + s["completion_ids"] == list(segment.ids[: turn.start + turn.completion])

    record = as_record(trajectory)
    assert record["segments"][0]["ids"] == list(segment.ids)


def test_the_async_driver_records_the_same_trajectory() -> None:
    replies = [" I look.\nACTION: lookup[x]", " Found.\nFINAL: 42"]
    sync = Agent(ByteModel(list(replies)), tools=[lookup]).run("What is x?")
    other = asyncio.run(Agent(ByteModel(list(replies)), tools=[lookup]).arun("What is x?"))
    assert sync.trajectory == other.trajectory


def test_eval_writes_one_trajectory_line_per_episode_with_its_reward(tmp_path: Path) -> None:
    from react_text import evaluation

    tasks = [evaluation.Task("right", "What is 17 + 25?", "42"), evaluation.Task("wrong", "What is 17 + 25?", "7")]
    out = tmp_path / "trajectories.jsonl"

    def model_for(task: evaluation.Task) -> ByteModel:
        return ByteModel([" I add.\nACTION: calculator[17 + 25]", " Found.\nFINAL: 42"])

    outcomes = evaluation.evaluate(tasks, model_for, root=tmp_path, trajectories=out)
    lines = {line["id"]: line for line in map(json.loads, out.read_text().splitlines())}
    assert [o.ok for o in outcomes] == [True, False]
    assert lines["right"]["reward"] == 1.0 and lines["wrong"]["reward"] == 0.0
    assert lines["right"]["stop_reason"] == "final" and lines["right"]["exact"] is True
    (segment,) = lines["right"]["segments"]
    assert len(segment["ids"]) == len(segment["mask"]) == len(segment["logprobs"])
    assert bytes(segment["ids"][segment["prompt"] :]).endswith(b"FINAL: 42")

    out.unlink()
    evaluation.evaluate(tasks[:1], model_for, root=tmp_path, trajectories=out, reward=lambda task, result: 0.25)
    assert json.loads(out.read_text())["reward"] == 0.25
