# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 8. Training signal from ReAct episodes
#
# **What you will learn**
# - how a group of episodes per task (GRPO's rollouts) comes from `aevaluate(..., n=4)`: the same
#   task, a distinct seed each, rewards from the scorer;
# - how the group-relative advantage turns rewards into a signal (`group_advantages`), and why a
#   group that agrees teaches nothing;
# - which tokens of a real episode the loss sees: the ids the model sampled (mask 1), not the
#   instructions, the task or the observations the engine appended (mask 0);
# - why a trainer must take the episode's token ids rather than its text: the log-probabilities it
#   recomputes from the exported ids agree with the rollout's, and re-encoded text can change ids.

# %%
import contextlib
import io
import json
import math
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

from react_text import LocalModel
from react_text.evaluation import aevaluate, load
from react_text.limits import Limits
from react_text.trajectory import group_advantages

SUITE = Path("../bench/tasks/suite.jsonl")
model = LocalModel(temperature=0.8)  # the embedded 135M model, in-process; sampling, not greedy
tasks = [t for t in load(SUITE) if t.id in ("calc-01", "calc-03")]
for task in tasks:
    print(task.id, task.task, "->", task.answer)

# %% [markdown]
# ## Groups of rollouts
# `n=4` runs each task four times; episode *k* sends seed *k* with every model call, so the four
# are distinct samples of the same policy (and running it again gives the same four). `trajectories=`
# writes one JSON line per episode: its token ids, loss mask, log-probabilities, the reward (1.0
# when the scorer says the answer is right) and the seed.

# %%
out = Path(tempfile.mkdtemp()) / "groups.jsonl"
outcomes = [  # evaluate() from a script; in a notebook, whose event loop is running, aevaluate
    outcome
    async for outcome in aevaluate(
        tasks, model, root=SUITE.parent / "docs", n=4, limits=Limits(steps=3, reply_tokens=64), trajectories=out
    )
]
lines = [json.loads(line) for line in out.read_text().splitlines()]
lines.sort(key=lambda line: (line["id"], line["sample"]))
advantages = group_advantages(lines)
print(f"{'task':<8} {'seed':>4} {'reward':>6} {'advantage':>9}  answer")
for line, advantage in zip(lines, advantages, strict=True):
    print(f"{line['id']:<8} {line['seed']:>4} {line['reward']:>6.1f} {advantage:>9.3f}  {line['answer']!r}")

# %% [markdown]
# The advantage is the reward less its group's mean, over the group's standard deviation (plus
# 1e-4), as TRL's `GRPOTrainer` computes it. A right answer in a group that was mostly wrong gets a
# large positive advantage; a group where every episode got the same reward gives every episode 0,
# however good it was: there is nothing to prefer within it.

# %% [markdown]
# ## What the loss sees
# One real episode, token by token: the prompt (instructions, worked example, task), then for each
# model call the ids it sampled (mask 1, the only ones the policy gradient touches) and the ids the
# engine appended after them (the observation, mask 0). The picture wraps the sequence in rows of 64
# tokens.

# %%
line = max(lines, key=lambda li: sum(len(s["turns"]) for s in li["segments"]))  # the longest episode
(segment,) = line["segments"]  # completion mode: one append-only sequence per episode
ids, mask = segment["ids"], segment["mask"]
kind = np.array([0 if i < segment["prompt"] else 1 + m for i, m in enumerate(mask)])  # 0 prompt, 1 given, 2 sampled
width = 64
rows = math.ceil(len(kind) / width)
grid = np.full(rows * width, np.nan)
grid[: len(kind)] = kind
fig, ax = plt.subplots(figsize=(9, 0.25 * rows + 1))
ax.imshow(grid.reshape(rows, width), cmap=ListedColormap(["#ddd", "#f4a261", "#2a6fdb"]),
          aspect="auto", interpolation="nearest", vmin=0, vmax=2)  # fmt: skip
ax.set_yticks([])
ax.set_xticks([])
ax.set_title(f"{line['id']} seed {line['seed']}: grey prompt, orange appended (mask 0), blue sampled (mask 1)")
plt.tight_layout()
plt.show()

llm = model._llm
after = ids[segment["prompt"] :]
text = "".join(
    (f"[{piece}]" if m else piece)
    for piece, m in zip((llm.detokenize([i]).decode("utf-8", "replace") for i in after), mask[segment["prompt"] :], strict=True)
)
print(f"{sum(mask)} of {len(ids)} ids are sampled; after the prompt, sampled ids in [brackets]:\n")
print(text.replace("][", ""))

# %% [markdown]
# ## A trainer's view: recompute the log-probabilities
# A trainer recomputes log p(id | everything before it) for the sampled ids, teacher-forced, with
# its own copy of the policy. Here that copy is llama.cpp again, evaluating each whole sequence at
# once (the rollout sampled one id at a time). Fed the exported ids, it agrees with the rollout up
# to numerics. Fed the episode's *text* encoded again, as a trainer that keeps text would, the ids
# can differ where a merge crosses a turn boundary.

# %%
import llama_cpp

judge = llama_cpp.Llama(model_path=str(model.path), n_ctx=4096, logits_all=True, verbose=False)
rollout, forced, drifted = [], [], 0
for each in lines:
    for seg in each["segments"]:
        judge.reset()
        judge.eval(seg["ids"])
        scores = np.asarray(judge.scores[: len(seg["ids"])], dtype=np.float64)
        top = scores.max(axis=1, keepdims=True)
        norm = (np.log(np.exp(scores - top).sum(axis=1, keepdims=True)) + top)[:, 0]
        for i, (token, m, p) in enumerate(zip(seg["ids"], seg["mask"], seg["logprobs"], strict=True)):
            if m:
                rollout.append(p)
                forced.append(scores[i - 1, token] - norm[i - 1])
        again = judge.tokenize(judge.detokenize(seg["ids"]), add_bos=True, special=False)
        drifted += again != seg["ids"]
gap = np.abs(np.array(forced) - np.array(rollout))
fig, ax = plt.subplots(figsize=(5, 5))
ax.scatter(rollout, forced, s=6, alpha=0.5)
low = min(min(rollout), min(forced))
ax.plot([low, 0], [low, 0], color="grey", linewidth=0.8)
ax.set_xlabel("rollout log-probability (sampled one id at a time)")
ax.set_ylabel("teacher-forced log-probability (whole sequence)")
ax.set_title(f"{len(gap)} sampled ids: mean gap {gap.mean():.3f}, worst {gap.max():.2f} nats")
plt.tight_layout()
plt.show()
print(f"re-encoding the text changes the ids of {drifted} of {len(lines)} episodes")

# %% [markdown]
# The points lie on the diagonal: the trainer's log-probabilities belong to the tokens the model
# sampled, so the importance ratio a PPO or GRPO step takes starts at 1, as it should. The spread
# is llama.cpp's own numerics (one id at a time against a batch, on 4-bit weights).
# `tests/test_trajectory_transformers.py` runs the same comparison with `transformers` reading the
# same GGUF file (`pip install "react-text[rl]"`).

# %% [markdown]
# ## One training step (optional: torch, transformers and trl)
# What a trainer does with these lines, once: one supervised step with TRL's `SFTTrainer` on the
# right episodes, from their exported ids, the loss on the sampled ids alone (label -100 where the
# mask is 0: the prompt and the observations are context, not the policy's). It is rejection
# sampling, the simplest use of a reward (GRPO weighs each episode by its advantage instead); the
# log-probability of the ids the model sampled in those episodes should rise. The policy is
# `transformers` reading the same GGUF file (dequantized to float32, 135M parameters); the step
# takes about a minute on 2 CPU cores. Without torch, transformers and trl the cell says so and
# skips (`pip install "react-text[rl]" trl`).

# %%
chatter = io.StringIO()  # the libraries' progress bars, warnings and logs: kept out of the page
with contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
    try:
        import torch
        import transformers
        from datasets import Dataset
        from trl import SFTConfig, SFTTrainer
    except ImportError as missing:
        torch = None
        lacking = missing.name
if torch is None:
    print(f"skipped: this step needs {lacking} (pip install 'react-text[rl]' trl)")
else:
    torch.set_num_threads(2)
    gguf = model.path
    with contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
        read = transformers.AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32
        )
        policy = transformers.AutoModelForCausalLM.from_config(read.config, dtype=torch.float32)
        policy.load_state_dict(read.state_dict())  # a plain float32 model (Trainer refuses one read as quantized)
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    right = [each for each in lines if each["reward"] == 1.0][:2]
    segments = [seg for each in right for seg in each["segments"]]

    def sampled_logprob() -> float:
        """The mean log-probability the policy gives the sampled ids (mask 1), teacher-forced."""
        policy.eval()
        found = []
        with torch.no_grad():
            for seg in segments:
                scores = torch.log_softmax(policy(input_ids=torch.tensor([seg["ids"]])).logits[0].double(), -1)
                pairs = enumerate(zip(seg["ids"], seg["mask"], strict=True))
                found += [scores[i - 1, t].item() for i, (t, m) in pairs if m]
        return sum(found) / len(found)

    if not right:
        print("no right episode to learn from: run the groups again (another temperature, more episodes)")
    else:
        before = sampled_logprob()
        data = Dataset.from_dict({
            "input_ids": [seg["ids"] for seg in segments],
            "labels": [[t if m else -100 for t, m in zip(seg["ids"], seg["mask"], strict=True)] for seg in segments],
        })  # fmt: skip
        settings = SFTConfig(output_dir=tempfile.mkdtemp(), max_steps=1, per_device_train_batch_size=len(segments),
                             learning_rate=5e-5, report_to=[], save_strategy="no", use_cpu=True, max_length=None)  # fmt: skip
        with contextlib.redirect_stdout(chatter), contextlib.redirect_stderr(chatter):
            SFTTrainer(model=policy, args=settings, train_dataset=data, processing_class=tokenizer).train()
        after = sampled_logprob()
        sampled = sum(sum(seg["mask"]) for seg in segments)
        print(f"one SFT step on {len(right)} right episodes ({sampled} sampled ids): their mean log-probability "
              f"{before:.3f} -> {after:.3f} nats")  # fmt: skip

# %% [markdown]
# ## Exercises
# 1. Run the groups at `temperature=0` (`LocalModel()`): what do the four episodes of a task look
#    like, and what advantages do they get?
# 2. Pass `reward=` to `evaluate`: a reward of 1.0 for a right answer less 0.1 a step. Which
#    episodes does it now prefer within a group?
# 3. Export the groups for your trainer: `as_trl`, `as_verl` or `as_skyrl` from
#    `react_text.trajectory` take the `Trajectory` values a run returns (`result.trajectory`).
# 4. Run the same task in chat mode (`LocalModel(api="chat")`) and count the segments per episode.
