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
# - how the step limit, the token budget and the forced final answer stop a run, and how the budget
#   is planned so that the forced answer always fits, whatever the server's tokenizer;
# - how a run longer than the model's context window goes on, with its oldest steps elided;
# - how the stop guard catches a made-up observation, and how repeated actions are caught.

# %%
import matplotlib.pyplot as plt

from react_text import Agent, Limits, Reply, ScriptedModel
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
# At the step limit (`Limits(steps=...)`), the engine makes one last call asking for the final
# answer from what is known. The result says the answer was forced.

# %%
stubborn = ScriptedModel(["ACTION: calculator[1 + 1]", "ACTION: calculator[2 + 2]", "THOUGHT: I must stop.\nFINAL: 4"])
result = Agent(stubborn, tools=[calculator], limits=Limits(steps=2)).run("Add things.")
print(result.stop_reason, result.answer, "forced:", result.forced)
print(stubborn.calls[-1].prompt[-1].content)

# %% [markdown]
# ## The token budget is planned, not hoped for
# `Limits(tokens=...)` counts prompt plus completion over the whole run. Before each call the
# engine checks that, after it, the one last call that asks for a final answer will still fit
# (its note, a short observation, a short reply): a run that meets its budget still ends with
# an answer. A model that follows instructions is enough to see it:


# %%
class Obliging:
    """Counts in sevens until it is asked for a final answer, then gives one."""

    api, name, accepts_grammar = "chat", "gpt-4o-mini", False

    def generate(self, request):
        last = request.prompt[-1].content
        if "FINAL: your best answer" in last:
            return Reply("THOUGHT: I was asked to stop.\nFINAL: 49")
        step = sum(m.role == "assistant" for m in request.prompt) + 1
        return Reply(f"THOUGHT: step {step}.\nACTION: calculator[{step} * 7]")


result = Agent(Obliging(), tools=[calculator], limits=Limits(tokens=2500, reply_tokens=100, steps=40)).run("Count in sevens.")
print(result.stop_reason, "after", len(result.steps), "steps:", result.usage.total_tokens, "of 2500 tokens")
print("answer:", result.answer, "| forced:", result.forced)

# %% [markdown]
# ## The budget learns what the server counts
# The engine counts with tiktoken, which is exact only for OpenAI's models. A server reports what
# it really counted after every call, and the engine plans the next request from that report.
# `ScriptedModel(tokenizer=...)` plays a server whose tokenizer counts about twice as many tokens
# as tiktoken: the estimate of the first request is low, every later one is corrected, and the
# run stays inside its budget.

# %%
doubling = ScriptedModel([f"THOUGHT: step {i}.\nACTION: calculator[{i} * 7]" for i in range(1, 40)], tokenizer=lambda text: len(text) // 2)
result = Agent(doubling, tools=[calculator], limits=Limits(tokens=4000, reply_tokens=100, steps=40)).run("Count in sevens.")
print(result.stop_reason, "after", len(result.steps), "calls; the server billed", result.usage.total_tokens, "of 4000 tokens")
print("prompt tokens the server counted, call by call:", [s.usage.prompt_tokens for s in result.steps])

# %% [markdown]
# ## A run longer than the context window
# Every model has a context window; a run whose history outgrows it used to end with an error.
# Now the oldest observations are elided (each replaced by a one-line note), then the oldest
# thoughts, keeping the instructions, the question and the latest steps. Here the embedded model,
# given a window of 1,024 tokens, follows a chain of four encyclopedia pages: the fourth does not
# fit beside the first three, so the oldest are elided and the run goes on.

# %%
from react_text import Prompting

CHAIN = {"bridge": "mill", "mill": "church", "church": "school", "school": None}


def page(topic: str) -> str:
    """Read the encyclopedia page about a topic."""
    topic = topic.strip().lower().removeprefix("the ")
    if topic not in CHAIN:
        return f"No page about {topic}. Pages: {', '.join(CHAIN)}."
    filler = "The archive holds many records of the town, its trades, its fairs and its weather. " * 5
    if CHAIN[topic] is None:
        return f"{topic}: {filler}The bridge was built in 1871."
    return f"{topic}: {filler}The year the bridge was built is on the page about the {CHAIN[topic]}."


example = """Example:
QUESTION: In which year was the tower built? Read the page about the tower first.
THOUGHT: I will read the page about the tower.
ACTION: page[tower]
OBSERVATION: tower: The year the tower was built is on the page about the well.
THOUGHT: I will read the page about the well.
ACTION: page[well]
OBSERVATION: well: The year the tower was built is on the page about the gate.
THOUGHT: I will read the page about the gate.
ACTION: page[gate]
OBSERVATION: gate: The tower was built in 1650.
THOUGHT: The gate page says 1650.
FINAL: 1650"""

small = LocalModel(n_ctx=1024)
agent = Agent(small, tools=[page], prompting=Prompting(example=example, act_first=True)).with_limits(steps=8)
result = agent.run("In which year was the bridge built? Read the page about the bridge first.")
for step in result.steps:
    print(f"step {step.number}: {step.usage.prompt_tokens:>4} prompt tokens, elided from it: steps {list(step.elided)}")
print(result.stop_reason, "|", result.answer)
print(result.transcript[-600:])

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
# run: the observation says so and repeats the earlier result. Only the same input counts
# (`read[README]` and `read[readme]` are two files), and only a call that succeeded (a retry after
# an error or a time-out runs again).

# %%
loop = ScriptedModel(["ACTION: calculator[2 + 2]", "ACTION: calculator[2 + 2]", "FINAL: 4"])
result = Agent(loop, tools=[calculator]).run("What is 2 + 2?")
print(result.steps[1].observation)
print("tool calls:", result.tool_calls)

# %% [markdown]
# ## Exercises
# 1. With prefix caching, what does the 15-step run above cost in *evaluated* tokens? Sketch the
#    curve next to the billed one.
# 2. Give `Obliging` a budget so small that not even the forced final call fits. What does the
#    result say?
# 3. In the context-window run, print the prompt of the last call (`small.render_last`) and find
#    the elided steps. Which part of the prompt never changes, and why does that matter for
#    prefix caching?
