"""A run as token ids: built by watching the run's model calls, then exported for RL trainers.

    result.trajectory                  a Trajectory (None when the model gives no token ids)
    as_verl(result.trajectory)         verl's AgentLoopOutput fields, one dict per segment
    as_trl([t1, t2, ...])              TRL's rollout_func dict
    as_skyrl([t1, ...], rewards)       SkyRL's GeneratorOutput
    as_verifiers(result.trajectory)    verifiers' TrajectoryStepTokens, one per turn
    group_advantages(lines)            GRPO's advantages from `eval --n N --trajectories FILE` lines

Nothing here tokenizes. Each call's `Reply.tokens` holds the ids the model was given and the ids
it sampled; a turn's completion is the sampled ids the next prompt goes on from (mask 1), and what
the engine appended is the rest of that next prompt (mask 0), exactly as the model was given it.
A prompt that does not begin with the last one and its kept completion starts a new segment, with
the reason. The last turn keeps the sampled ids wholly inside what the guard kept.

The exports are plain dicts and lists: no trainer is imported.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from react_text.core.commands import Command, Event, Replied, Send
from react_text.core.types import Reply, RunResult, Segment, SegmentReason, Step, Tokens, Trajectory, Turn

__all__ = [
    "Call",
    "Recorder",
    "as_record",
    "as_skyrl",
    "as_trl",
    "as_verifiers",
    "as_verl",
    "build",
    "group_advantages",
]


@dataclass(frozen=True, slots=True)
class Call:
    """One model call as the recorder saw it: the step it was made for, and the reply."""

    number: int
    reply: Reply
    tokens: Tokens


class Recorder:
    """Watches a run's commands and events (the drivers hand it each one) and builds its trajectory."""

    def __init__(self, *, chat: bool) -> None:
        self._chat = chat
        self._calls: list[Call] = []
        self._emitted = 0
        self._without = False  # a reply came with no token ids

    def see(self, command: Command, event: Event) -> None:
        if isinstance(command, Send) and isinstance(event, Replied):
            tokens = event.reply.tokens
            if tokens is None:
                self._without = True
            else:
                self._calls.append(Call(self._emitted + 1, event.reply, tokens))

    def emitted(self) -> None:
        self._emitted += 1

    def finish(self, result: RunResult) -> RunResult:
        if self._without or not self._calls:
            return result
        return replace(result, trajectory=build(self._calls, result.steps, chat=self._chat))


def build(calls: Sequence[Call], steps: Sequence[Step], *, chat: bool) -> Trajectory:
    """The trajectory of `calls` (in order), with the run's steps for the guard's cuts."""
    by_number = {s.number: s for s in steps}
    segments: list[Segment] = []
    first = calls[0].tokens.prompt
    current = _Open("start", len(first), list(first))
    for previous, call in itertools.pairwise(calls):
        done = previous.tokens
        prompt = call.tokens.prompt
        common = _common(current.ids, done.ids, prompt)
        if common >= len(current.ids):
            kept = common - len(current.ids)
            current.turn(previous, kept, prompt[common:], _inside(previous, by_number))
        else:
            kept = _guard_kept(previous, by_number)
            current.turn(previous, kept, (), _inside(previous, by_number))
            segments.append(current.close())
            current = _Open(_why(previous, call, by_number, chat), len(prompt), list(prompt))
    last = calls[-1]
    current.turn(last, _guard_kept(last, by_number), (), _inside(last, by_number))
    segments.append(current.close())
    derived = [c.tokens.reason or "ids derived from text" for c in calls if not c.tokens.exact]
    return Trajectory(tuple(segments), exact=not derived, reason=derived[0] if derived else "")


class _Open:
    """A segment being built."""

    def __init__(self, reason: SegmentReason, prompt: int, ids: list[int]) -> None:
        self.reason = reason
        self.prompt = prompt
        self.ids = ids
        self.mask = [0] * len(ids)
        self.logprobs = [0.0] * len(ids)
        self.turns: list[Turn] = []

    def turn(self, call: Call, kept: int, appended: Sequence[int], inside: bool) -> None:
        tokens = call.tokens
        start = len(self.ids)
        self.ids += tokens.ids[:kept]
        self.mask += [1] * kept
        self.logprobs += tokens.logprobs[:kept]
        self.ids += appended
        self.mask += [0] * len(appended)
        self.logprobs += [0.0] * len(appended)
        dropped = tokens.sampled - kept
        self.turns.append(Turn(call.number, start, kept, len(appended), dropped, inside, call.reply.finish_reason))

    def close(self) -> Segment:
        return Segment(
            self.reason, self.prompt, tuple(self.ids), tuple(self.mask), tuple(self.logprobs), tuple(self.turns)
        )


def _common(ids: Sequence[int], sampled: Sequence[int], prompt: Sequence[int]) -> int:
    """How far `prompt` agrees with `ids` followed by `sampled`."""
    n = 0
    for a, b in zip((*ids, *sampled), prompt, strict=False):
        if a != b:
            break
        n += 1
    return n


def _kept_chars(call: Call, by_number: dict[int, Step]) -> int:
    step = by_number.get(call.number)
    if step is None or step.reply != call.reply.text:  # several calls made one reply: no cut to read
        return len(call.reply.text)
    return len(step.reply) - len(step.cut)


def _guard_kept(call: Call, by_number: dict[int, Step]) -> int:
    """The sampled ids wholly inside the text the guard kept."""
    chars = _kept_chars(call, by_number)
    return sum(1 for end in call.tokens.ends if end <= chars)


def _inside(call: Call, by_number: dict[int, Step]) -> bool:
    """The guard's cut fell inside a sampled token."""
    chars = _kept_chars(call, by_number)
    ends = call.tokens.ends
    return any(start < chars < end for start, end in zip((0, *ends[:-1]), ends, strict=True))


def _why(previous: Call, call: Call, by_number: dict[int, Step], chat: bool) -> SegmentReason:
    before, now = by_number.get(previous.number), by_number.get(call.number)
    if before is not None and now is not None and before.elided != now.elided:
        return "elided"
    if now is not None and now.elided and before is None:
        return "elided"
    return "template" if chat else "rewritten"


# --- exports: plain dicts in each trainer's own field names and order ---------------------------


def as_verl(trajectory: Trajectory, reward: float | None = None) -> list[dict[str, Any]]:
    """verl's `AgentLoopOutput` fields, one dict per segment (verl/experimental/agent_loop/agent_loop.py)."""
    return [
        {
            "prompt_ids": list(s.ids[: s.prompt]),
            "response_ids": list(s.ids[s.prompt :]),
            "response_mask": list(s.mask[s.prompt :]),
            "response_logprobs": list(s.logprobs[s.prompt :]),
            "routed_experts": None,
            "multi_modal_data": None,
            "reward_score": reward,
            "num_turns": 1 + sum(1 + (t.appended > 0) for t in s.turns),
            "metrics": {"generate_sequences": 0.0, "tool_calls": 0.0, "num_preempted": -1},
            "extra_fields": {"segment_reason": s.reason},
        }
        for s in trajectory.segments
    ]


def as_trl(trajectories: Sequence[Trajectory]) -> dict[str, list[list[int]] | list[list[float]]]:
    """TRL's `rollout_func` dict: one row per segment; `env_mask` 1 on the model's ids, 0 on the rest."""
    rows = [s for t in trajectories for s in t.segments]
    return {
        "prompt_ids": [list(s.ids[: s.prompt]) for s in rows],
        "completion_ids": [list(s.ids[s.prompt :]) for s in rows],
        "logprobs": [list(s.logprobs[s.prompt :]) for s in rows],
        "env_mask": [list(s.mask[s.prompt :]) for s in rows],
    }


def as_skyrl(
    trajectories: Sequence[Trajectory],
    rewards: Sequence[float],
    stop_reasons: Sequence[str] | None = None,
) -> dict[str, Any]:
    """SkyRL's `GeneratorOutput` (skyrl/train/generators/base.py): one row per segment; a trajectory's
    reward goes to each of its rows, and `is_last_step` marks its last segment."""
    if len(rewards) != len(trajectories):
        raise ValueError(f"{len(trajectories)} trajectories and {len(rewards)} rewards")
    if stop_reasons is not None and len(stop_reasons) != len(trajectories):
        raise ValueError(f"{len(trajectories)} trajectories and {len(stop_reasons)} stop reasons")
    rows = [(i, j, s) for i, t in enumerate(trajectories) for j, s in enumerate(t.segments)]
    return {
        "prompt_token_ids": [list(s.ids[: s.prompt]) for _, _, s in rows],
        "response_ids": [list(s.ids[s.prompt :]) for _, _, s in rows],
        "rewards": [float(rewards[i]) for i, _, _ in rows],
        "loss_masks": [list(s.mask[s.prompt :]) for _, _, s in rows],
        "stop_reasons": None if stop_reasons is None else [stop_reasons[i] for i, _, _ in rows],
        "rollout_metrics": None,
        "rollout_logprobs": [list(s.logprobs[s.prompt :]) for _, _, s in rows],
        "trajectory_ids": None,
        "trajectory_generation_times": None,
        "trajectory_time_splits": None,
        "rollout_expert_indices": None,
        "is_last_step": [j == len(trajectories[i].segments) - 1 for i, j, _ in rows],
        "env_metrics": None,
    }


def as_verifiers(trajectory: Trajectory) -> list[dict[str, Any]]:
    """verifiers' `TrajectoryStepTokens`, one per turn (verifiers/legacy/types.py): the turn's
    prompt is every id of its segment before its completion."""
    steps: list[dict[str, Any]] = []
    for s in trajectory.segments:
        for t in s.turns:
            end = t.start + t.completion
            steps.append(
                {
                    "prompt_ids": list(s.ids[: t.start]),
                    "prompt_mask": [0] * t.start,
                    "completion_ids": list(s.ids[t.start : end]),
                    "completion_mask": [1] * t.completion,
                    "completion_logprobs": list(s.logprobs[t.start : end]),
                    "overlong_prompt": False,
                    "is_truncated": t.finish_reason == "length",
                    "routed_experts": None,
                }
            )
    return steps


def as_record(trajectory: Trajectory) -> dict[str, Any]:
    """The trajectory as one JSON-ready dict (what `eval --trajectories` writes per episode)."""
    return {
        "exact": trajectory.exact,
        "reason": trajectory.reason,
        "segments": [
            {
                "reason": s.reason,
                "prompt": s.prompt,
                "ids": list(s.ids),
                "mask": list(s.mask),
                "logprobs": [round(p, 6) for p in s.logprobs],
                "turns": [
                    {
                        "step": t.step,
                        "start": t.start,
                        "completion": t.completion,
                        "appended": t.appended,
                        "dropped": t.dropped,
                        "inside": t.inside,
                        "finish_reason": t.finish_reason,
                    }
                    for t in s.turns
                ],
            }
            for s in trajectory.segments
        ],
    }


def group_advantages(lines: Sequence[dict[str, Any]], *, scale: bool = True, eps: float = 1e-4) -> list[float]:
    """GRPO's group-relative advantage of each line of an `eval --trajectories` file, in order:
    its reward less the mean reward of its group (the lines with its task `id`), divided by the
    group's standard deviation plus `eps` when `scale`, as TRL's GRPOTrainer does (`torch.std`,
    the sample deviation, and eps 1e-4). A group whose rewards are all equal, or a group of one,
    gives 0.0 to each of its lines."""
    groups: dict[str, list[float]] = {}
    for line in lines:
        groups.setdefault(str(line["id"]), []).append(float(line["reward"]))
    stats = {}
    for key, rewards in groups.items():
        mean = sum(rewards) / len(rewards)
        std = (sum((r - mean) ** 2 for r in rewards) / (len(rewards) - 1)) ** 0.5 if len(rewards) > 1 else 0.0
        stats[key] = (mean, std)
    out = []
    for line in lines:
        mean, std = stats[str(line["id"])]
        centred = float(line["reward"]) - mean
        out.append(centred / (std + eps) if scale else centred)
    return out
