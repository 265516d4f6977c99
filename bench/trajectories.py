"""Token-exact trajectories on the embedded model: segments, re-encoding drift, trainer log-prob gap.

    flock /tmp/react-text-llama.lock python bench/trajectories.py [N] [chat|completion]

Runs the first N tasks of the suite (default 24, all of them) and reports, per episode and in total:
- segments per episode and the share of turns that extended the sequence before them;
- drift: episodes whose ids change when their text is decoded and encoded again (what a trainer
  that keeps text and re-tokenizes gets), both as plain text (special tokens dropped) and with the
  special tokens written and parsed again (a chat template's markers kept, as a trainer that keeps
  the rendered chat text would encode it: the figure to read in chat mode);
- the gap between the rollout's log-probabilities and a teacher-forced recompute by llama.cpp
  itself (the whole segment evaluated at once, logits read at each position): per id on the
  exported ids, and per turn (the completion's summed log-probability) on the re-encoded text,
  the prompt and each completion encoded apart as a text-keeping trainer would.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from react_text import Agent, evaluation
from react_text.backends.local import LocalModel
from react_text.core.types import Segment

SUITE = Path(__file__).parent / "tasks" / "suite.jsonl"


def logprobs(judge: Any, ids: list[int]) -> np.ndarray:
    """log p(ids[i] | ids[:i]) for every i >= 1, teacher-forced."""
    judge.reset()
    judge.eval(ids)
    scores = np.asarray(judge.scores[: len(ids)], dtype=np.float64)
    top = scores.max(axis=1, keepdims=True)
    norm = np.log(np.exp(scores - top).sum(axis=1, keepdims=True)) + top
    out = np.zeros(len(ids))
    out[1:] = scores[np.arange(len(ids) - 1), ids[1:]] - norm[:-1, 0]
    return out


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 24
    api = sys.argv[2] if len(sys.argv) > 2 else "completion"
    import llama_cpp

    model = LocalModel(api=api, n_ctx=4096)  # type: ignore[arg-type]
    tasks = evaluation.load(SUITE)[:n]
    results = []
    for task in tasks:
        agent = Agent(model, tools=evaluation.toolset(task.tools, SUITE.parent / "docs"))
        results.append(agent.run(task.task))
    judge = llama_cpp.Llama(model_path=str(model.path), n_ctx=4096, logits_all=True, verbose=False)
    exact_gaps: list[float] = []
    turn_exact: list[float] = []
    turn_text: list[float] = []
    drifted = drifted_special = 0
    segments = turns = extended = 0
    reasons: dict[str, int] = {}
    for task, result in zip(tasks, results, strict=True):
        trajectory = result.trajectory
        assert trajectory is not None
        segments += len(trajectory.segments)
        for later in trajectory.segments[1:]:
            reasons[later.reason] = reasons.get(later.reason, 0) + 1
        turns += trajectory.turns
        extended += trajectory.turns - len(trajectory.segments)
        changed = changed_special = False
        for segment in trajectory.segments:
            ids = list(segment.ids)
            head = ids[:1] if ids[:1] == [judge.token_bos()] else []  # the BOS the prompt began with
            body = judge.detokenize(ids[len(head) :], special=True)
            changed_special |= head + judge.tokenize(body, add_bos=False, special=True) != ids
            forced = logprobs(judge, list(segment.ids))
            for i, m in enumerate(segment.mask):
                if m:
                    exact_gaps.append(abs(forced[i] - segment.logprobs[i]))
            changed |= reencoded(judge, segment, turn_exact, turn_text)
        drifted += changed
        drifted_special += changed_special
        print(
            f"{task.id}: {result.stop_reason}, {len(trajectory.segments)} segment(s), {trajectory.turns} turns, "
            f"re-encoding {'changes' if changed else 'keeps'} its ids "
            f"({'changes' if changed_special else 'keeps'} them with special tokens kept)"
        )
    print(
        f"\n{api} mode, {len(tasks)} episodes: {segments} segments, {turns} turns; "
        f"{extended}/{max(turns - len(tasks), 0)} later turns extended the sequence before them"
        f" (new segments: {', '.join(f'{k} {v}' for k, v in sorted(reasons.items())) or 'none'})"
    )
    print(f"re-encoding the text changes the ids of {drifted} of {len(tasks)} episodes")
    print(f"with special tokens written and parsed again: {drifted_special} of {len(tasks)} episodes")
    print(
        f"teacher-forced gap on the exported ids, over {len(exact_gaps)} ids: "
        f"mean {np.mean(exact_gaps):.2e}, worst {np.max(exact_gaps):.2e} nats"
    )
    print(
        f"per-turn summed log-prob gap over {len(turn_exact)} turns: exported ids mean {np.mean(turn_exact):.3f}, "
        f"worst {np.max(turn_exact):.3f}; re-encoded text mean {np.mean(turn_text):.3f}, worst {np.max(turn_text):.3f}"
    )


def reencoded(judge: Any, segment: Segment, exact: list[float], text: list[float]) -> bool:
    """Record each turn's summed log-prob gap both ways; whether re-encoding changed the ids."""
    ids = list(segment.ids)
    whole = judge.tokenize(judge.detokenize(ids), add_bos=True, special=False)
    forced = logprobs(judge, ids)
    for turn in segment.turns:
        end = turn.start + turn.completion
        if not turn.completion:
            continue
        rollout = sum(segment.logprobs[turn.start : end])
        exact.append(abs(float(forced[turn.start : end].sum()) - rollout))
        prompt = judge.tokenize(judge.detokenize(ids[: turn.start]), add_bos=True, special=False)
        completion = judge.tokenize(judge.detokenize(ids[turn.start : end]), add_bos=False, special=False)
        again = logprobs(judge, prompt + completion)
        text.append(abs(float(again[len(prompt) :].sum()) - rollout))
    return bool(whole != ids)


if __name__ == "__main__":
    main()
