# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 2. Reading what models write
#
# **What you will learn**
# - the shapes in which real models break the protocol, and the dialects they drift into;
# - how three parsers (a 40-line-tutorial baseline, a strict one, the tolerant default) read them;
# - how to measure a parser on a corpus of real replies.

# %%
from pathlib import Path

from react_text.corpus import load, reading, score, scoreboard
from react_text.parser import PARSERS

# %% [markdown]
# ## One reply, three readings
# `parse` returns an `Action`, a `Final` or a `ParseError`; it never raises.

# %%
def compare(text: str) -> None:
    print(repr(text))
    for name, parse in PARSERS.items():
        print(f"  {name:>9}: {reading(parse(text))}")


compare("THOUGHT: I need the price.\nACTION: lookup[train ticket]")
compare("**Thought:** I need the price.\n**Action:** lookup[train ticket]")
compare("Thought: I need the price.\nAction: lookup\nAction Input: train ticket")

# %% [markdown]
# ## The failure shapes
# A model that writes its own observation, and then a made-up answer, is the classic failure:
# the naive parser checks `FINAL:` first and takes the invented number. The tolerant parser cuts
# the reply at the made-up observation and runs the tool.

# %%
compare("THOUGHT: I need the price.\nACTION: lookup[train ticket]\nOBSERVATION: 50\nTHOUGHT: so\nFINAL: 50")
compare("ACTION: python[sorted(x)[0]]")
compare('```json\n{"action": "lookup", "action_input": "hotel night"}\n```')
compare("<think>Maybe I should just guess.</think>\nFinal Answer: 234")
compare("Action 3: Finish[1,800 to 7,000 ft]")

# %% [markdown]
# ## The scoreboard
# The corpus (`tests/data/replies.jsonl`) holds replies recorded from real local models
# (SmolLM2-135M, Gemma 3 270M, Qwen2.5-Coder 0.5B and 1.5B) and constructed cases for every
# dialect and failure shape, each labelled with the right reading.

# %%
corpus = load(Path("..") / "tests" / "data" / "replies.jsonl")
scores = score(corpus, PARSERS)
print(scoreboard(scores, show_wrong=5))

# %% [markdown]
# Accuracy per failure category, as a picture:

# %%
import matplotlib.pyplot as plt

categories = sorted({c.category for c in corpus})
fig, ax = plt.subplots(figsize=(9, 5))
width = 0.27
for i, s in enumerate(scores):
    values = [100 * s.by_category[c][0] / s.by_category[c][1] for c in categories]
    ax.barh([y + i * width for y in range(len(categories))], values, height=width, label=s.parser)
ax.set_yticks([y + width for y in range(len(categories))], categories)
ax.set_xlabel("% read right")
ax.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Your turn
# Paste a reply between the quotes and run the cell.

# %%
reply = """Thought: I'll check the price first.
Action: lookup[train ticket]
Observation: 89"""
compare(reply)

# %% [markdown]
# ## Exercises
# 1. Find a reply the tolerant parser reads wrong (try mixing dialects). Add it to the corpus
#    with its right reading and see the scoreboard change.
# 2. The naive parser takes `FINAL:` first. Write the reply that makes this cost the most: a
#    right-looking answer that is wrong.
# 3. Why does the strict parser refuse `action: lookup[x]`? When would you want it anyway?
