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
# # 7. Parallel actions: several independent calls in one step
#
# **What you will learn**
# - how `Prompting(parallel=True)` lets a model write several `ACTION:` lines in one reply, and
#   how the engine runs them at once and feeds back one labelled observation per call;
# - what it saves (a round trip to the model, and the tools' waiting, overlapped) and when the plain
#   one-action ReAct loop is the better choice (when a result changes the plan);
# - how each call keeps its own time limit, approval, repeat check and error, and how
#   `Limits(actions=...)` caps a step.

# %%
import time

from react_text import Agent, Limits, Prompting, ScriptedModel, parse_several, tool


def weather(city: str) -> str:
    """The weather in a city now."""
    time.sleep(0.5)  # a slow web service
    return f"sunny in {city}, 24 C"


def fx(amount: str) -> str:
    """Convert an amount of money to EUR."""
    time.sleep(0.5)
    return "100 USD = 92 EUR"


class SlowModel(ScriptedModel):
    """A scripted model that takes 0.3 s per reply, as a small server might."""

    def generate(self, request):  # type: ignore[no-untyped-def]
        time.sleep(0.3)
        return super().generate(request)


QUESTION = "What is the weather in Athens, and how much is 100 USD in EUR?"
Agent(ScriptedModel(["FINAL: warm"])).run("warm up")  # the tokenizer loads once, before anything is timed

# %% [markdown]
# ## With parallel actions: one step
# Nothing in the question makes one call depend on the other, so the model asks for both at once.
# The instruction block tells it that it may (and its worked example shows how):

# %%
parallel = Agent(SlowModel([]), tools=[weather, fx], prompting=Prompting(parallel=True))
block = parallel.instructions()
print(block[block.index("Rules:") : block.index("Example")])

# %%
replies = [
    "THOUGHT: the weather and the rate do not depend on each other.\nACTION: weather[Athens]\nACTION: fx[100 USD]",
    "THOUGHT: I have both.\nFINAL: Sunny, 24 C in Athens; 100 USD is 92 EUR.",
]
model = SlowModel(replies)
agent = Agent(model, tools=[weather, fx], prompting=Prompting(parallel=True))
started = time.perf_counter()
result = agent.run(QUESTION)
one_step = time.perf_counter() - started
print(result.answer)
print(f"{len(result.steps)} model calls, {result.tool_calls} tool calls, {one_step:.2f} s")
print("what the model was fed after step 1:")
print(model.calls[1].prompt[-1].content)

# %% [markdown]
# The two tools, 0.5 s each, finished together in about 0.5 s; each observation names the call it
# answers, in the order the calls were written, whatever order they finished in.
#
# ## Without: two steps
# The same question with parallel actions off (the default). A reply with two `ACTION:` lines
# would have its second one discarded, so the model asks for one call per step.

# %%
replies = [
    "THOUGHT: first the weather.\nACTION: weather[Athens]",
    "THOUGHT: now the rate.\nACTION: fx[100 USD]",
    "THOUGHT: I have both.\nFINAL: Sunny, 24 C in Athens; 100 USD is 92 EUR.",
]
agent = Agent(SlowModel(replies), tools=[weather, fx])
started = time.perf_counter()
result = agent.run(QUESTION)
two_steps = time.perf_counter() - started
print(result.answer)
print(f"{len(result.steps)} model calls, {result.tool_calls} tool calls, {two_steps:.2f} s")
print(f"parallel actions saved {two_steps - one_step:.2f} s: one model call and one tool's wait")

# %% [markdown]
# ## When to use which
# Parallel actions win when the calls a task needs are all clear from the question: lookups of
# several items, the same tool on several inputs, independent facts. The one-action loop wins
# when a result changes the plan ("find the cheapest hotel, then book it"): a model that writes
# the second call before it has seen the first result is guessing. With parallel actions on, the
# model still may (and is told to) wait for a result it needs.
#
# ## What the parser reads
# Other agent frameworks write several calls in their own ways; they are read too. A FINAL in a
# reply with actions is not taken: the answer cannot know results nobody has seen yet.

# %%
for reply in [
    "Thought: both\nAction 1: weather\nAction Input 1: Athens\nAction 2: fx\nAction Input 2: 100 USD\n",
    '[{"action": "weather", "action_input": "Athens"}, {"action": "fx", "action_input": "100 USD"}]',
    "ACTION: weather[Athens]\nACTION: fx[100 USD]\nFINAL: sunny, 92 EUR",
]:
    read = parse_several(reply, tools=["weather", "fx"])
    print([f"{a.tool}[{a.input}]" for a in read.actions], "| discarded:", repr(read.discarded))

# %% [markdown]
# ## Each call on its own terms
# A risky tool asks for approval per call; a failing call becomes its observation and the others
# keep their results; `Limits(actions=2)` runs at most two calls of a reply and tells the model
# which were not run.


# %%
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def approve(t: object, action: object) -> bool:
    print("asked about", action)
    return "keep" not in action.input  # type: ignore[attr-defined]


replies = ["ACTION: delete[old.txt]\nACTION: delete[keep.txt]\nACTION: weather[Oslo]", "FINAL: done"]
model = SlowModel(replies)
agent = Agent(
    model,
    tools=[tool(delete, risky=True), weather],
    prompting=Prompting(parallel=True),
    limits=Limits(actions=2),
    approve=approve,
)
agent.run("Tidy up, and tell me the weather in Oslo.")
print(model.calls[1].prompt[-1].content)

# %% [markdown]
# ## Exercises
# 1. Make `fx` sleep 0.1 s and `weather` 1 s: which observation comes first in what the model is fed?
# 2. Give `weather` a `timeout=0.2` (`tool(weather, timeout=0.2)`) and run the parallel step again:
#    what does the model learn about each call?
# 3. Run a local model with `react-text run --parallel "..."` on a question with two independent
#    parts: does it write both calls in one reply? With `--no-parallel`?
