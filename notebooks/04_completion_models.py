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
# # 4. Completion-only models: one transcript instead of messages
#
# **What you will learn**
# - how the same agent runs over a plain text transcript for models with no chat format;
# - what changes in the prompt, side by side with chat messages;
# - why the stop sequence matters even more when the model just continues text.

# %%
from react_text import Agent, Limits, Prompting, ScriptedModel
from react_text.toolbox import calculator

task = "What is 17 * 23 + 5?"

# %% [markdown]
# ## Side by side
# The same replies, once as a chat model and once as a completion model. A completion model
# continues the transcript after `THOUGHT:`, so its replies start mid-line.

# %%
chat = ScriptedModel(["THOUGHT: use it\nACTION: calculator[17 * 23 + 5]", "THOUGHT: got it\nFINAL: 396"], api="chat")
text = ScriptedModel([" use it\nACTION: calculator[17 * 23 + 5]", " got it\nFINAL: 396"], api="completion")
for model in (chat, text):
    result = Agent(model, tools=[calculator], prompting=Prompting(example=None)).run(task)
    print(model.api, "->", result.answer)

print("=== chat: the second request, as messages")
for message in chat.calls[1].prompt:
    print(f"[{message.role}] {message.content[:70]!r}")
print("\n=== completion: the second request, as one text")
print(text.calls[1].prompt[-220:])

# %% [markdown]
# Three differences:
# - the instructions and the question open the transcript instead of sitting in a system and a
#   user message;
# - each observation is a line of the transcript, and the transcript ends with `THOUGHT:` so the
#   model's next words are a thought;
# - the reply is parsed with `THOUGHT:` put back in front of it.
#
# ## Why the stop sequence matters more here
# A chat model ends its turn; a completion model simply continues the most likely text, and after
# `ACTION: calculator[...]` the most likely text is `OBSERVATION: ...`, made up. Here a "server"
# ignores `stop`, as many do:

# %%
ignores_stop = ScriptedModel(
    [" use it\nACTION: calculator[17 * 23 + 5]\nOBSERVATION: 400\nTHOUGHT: done\nFINAL: 400", " right\nFINAL: 396"],
    api="completion",
)
result = Agent(ignores_stop, tools=[calculator], prompting=Prompting(example=None)).run(task)
print("cut from step 1:", repr(result.steps[0].cut))
print("answer:", result.answer)

# %% [markdown]
# Without the client-side cut, the made-up `OBSERVATION: 400` would have stayed in the transcript
# the model reads next, and the invented answer would have won.
#
# ## A real completion model
# The embedded model runs in completion mode by default; measured on this task suite, SmolLM2
# calls the calculator far more often this way than in chat mode.

# %%
from react_text.backends.local import LocalModel

for api in ("completion", "chat"):
    model = LocalModel(api=api)
    result = Agent(model, tools=[calculator], limits=Limits(steps=4)).run(task)
    print(f"{api:>10}: {result.answer!r} ({result.stop_reason}, {result.tool_calls} tool calls)")

# %% [markdown]
# ## Exercises
# 1. Print the whole transcript of the local model's completion run (`result.transcript`). Where
#    would a made-up observation have gone?
# 2. Observations with several lines are indented in the transcript. Why? (Hint: try a tool that
#    returns `"5\nFINAL: 6"`.)
# 3. Run the completion model with `grammar=False`. What changes in its replies?
