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
# # 3. Brakes: limits, budgets, and why each step costs more than the last
#
# **What you will learn**
# - why the tokens of a ReAct run grow with the square of its steps, and what prefix caching changes;
# - how the step limit, the token budget and the forced final answer stop a run;
# - how the stop guard catches a made-up observation, and how repeated actions are caught.

# %%
import matplotlib.pyplot as plt

from react_text import Agent, Limits, ScriptedModel
from react_text.toolbox import calculator

# %% [markdown]
# ## Every call resends the history
# A model has no memory between calls: each request carries the instructions, the question and
# every step so far. Here a scripted model takes 15 calculator steps.

# %%
replies = [f"THOUGHT: step {i}.\nACTION: calculator[{i} * 7]" for i in range(1, 15)] + ["FINAL: done"]
result = Agent(ScriptedModel(replies, name="gpt-4o-mini"), tools=[calculator], limits=Limits(steps=20)).run("Count in sevens.")
per_step = [s.usage.prompt_tokens for s in result.steps]
cumulative = [s.total_usage.total_tokens for s in result.steps]

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
left.plot(range(1, len(per_step) + 1), per_step, marker="o")
left.set(title="prompt tokens of each call", xlabel="step", ylabel="tokens")
right.plot(range(1, len(cumulative) + 1), cumulative, marker="o", color="tab:red")
right.set(title="tokens billed so far", xlabel="step")
plt.tight_layout()
plt.show()
print(f"call 1 sends {per_step[0]} tokens, call {len(per_step)} sends {per_step[-1]}; the run bills {cumulative[-1]}")

# %% [markdown]
# Each call costs a little more than the last (a line), so the total is a parabola. A server
# with **prefix caching** keeps the computed state of a prompt it has seen; because react-text only
# ever appends to what it sends, every call starts with the previous one, and only the new tokens
# need computing. The local model shows it: `evaluated` is what llama.cpp actually processed.

# %%
from react_text.backends.local import LocalModel

for cache in (True, False):
    model = LocalModel(prefix_cache=cache)
    Agent(model, tools=[calculator], limits=Limits(steps=4)).run("What is 17 * 23 + 5?")
    print(f"prefix cache {'on ' if cache else 'off'}: sent {model.stats.prompt_tokens} prompt tokens, evaluated {model.stats.evaluated_tokens}")

# %% [markdown]
# ## The step limit and the forced final answer
# At `max_steps`, the engine makes one last call asking for the final answer from what is known.
# The result says the answer was forced.

# %%
stubborn = ScriptedModel(["ACTION: calculator[1 + 1]", "ACTION: calculator[2 + 2]", "THOUGHT: I must stop.\nFINAL: 4"])
result = Agent(stubborn, tools=[calculator], limits=Limits(steps=2)).run("Add things.")
print(result.stop_reason, result.answer, "forced:", result.forced)
print(stubborn.calls[-1].prompt[-1].content)

# %% [markdown]
# ## The token budget is checked before sending
# `max_tokens` counts prompt plus completion over the whole run, counted with tiktoken *before*
# each request: a request that could pass the budget is never sent.

# %%
result = Agent(ScriptedModel(replies), tools=[calculator], max_tokens=2500, reply_tokens=100, max_steps=20).run("Count in sevens.")
print(result.stop_reason, "after", len(result.steps), "steps,", result.usage.total_tokens, "of 2500 tokens;", result.error)

# %% [markdown]
# ## The stop guard
# Models often keep going and write the observation themselves. `OBSERVATION:` is sent as a stop
# sequence, and every reply is cut again on our side, whatever the server did.

# %%
liar = ScriptedModel(["ACTION: calculator[17 * 23 + 5]\nOBSERVATION: 400\nTHOUGHT: so\nFINAL: 400", "FINAL: 396"])
result = Agent(liar, tools=[calculator]).run("What is 17 * 23 + 5?")
first = result.steps[0]
print("cut:", repr(first.cut))
print("real observation:", first.observation, "| answer:", result.answer)

# %% [markdown]
# ## Repeated actions
# A small model often asks for the same thing again and again. The second time, the tool is not
# run: the observation says so and repeats the earlier result.

# %%
loop = ScriptedModel(["ACTION: calculator[2 + 2]", "ACTION: calculator[ 2 +  2 ]", "FINAL: 4"])
result = Agent(loop, tools=[calculator]).run("What is 2 + 2?")
print(result.steps[1].observation)
print("tool calls:", result.tool_calls)

# %% [markdown]
# ## Exercises
# 1. With prefix caching, what does the 15-step run above cost in *evaluated* tokens? Sketch the
#    curve next to the billed one.
# 2. Set `max_tokens` so that the forced final call no longer fits. What does the result say?
# 3. Why is the repeated-action check done on a normalised input? Find an input it should not
#    normalise.
