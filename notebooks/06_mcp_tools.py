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
# # 6. Tools from MCP servers, for any text model
#
# **What you will learn**
# - how to write an MCP server in a few lines with the official SDK;
# - how its tools become tools of the engine: exact names, descriptions, parameters from the schema;
# - how even a 135M model in-process uses them through the plain-text protocol;
# - the exact text exchanged, and why one session per server matters.
#
# The Model Context Protocol (MCP) is how tools are shared between applications. Frameworks give
# MCP tools to models with native tool calling; here they go to any model that writes text.
# Needs `pip install "react-text[mcp]"`. Everything runs offline, in under a minute.

# %% [markdown]
# ## A server in a few lines
# The SDK's `MCPServer` (called FastMCP before the SDK's 2.0) turns typed Python functions into
# MCP tools: the name, the docstring and the type hints become the tool's name, description and
# input schema. Names may have hyphens and dots. This one keeps a basket: it has state.

# %%
import sys
from pathlib import Path
from tempfile import TemporaryDirectory

workdir = TemporaryDirectory()
shop = Path(workdir.name) / "shop.py"
shop.write_text('''
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("shop")
PRICES = {"train ticket": 89, "hotel night": 145, "museum pass": 32}
basket: list[str] = []


@server.tool(name="price-of")
def price_of(item: str) -> int:
    """The price of one item, in euros."""
    words = set(item.lower().replace("_", " ").split())
    best = max(PRICES, key=lambda name: len(words & set(name.split())))
    if not words & set(best.split()):
        raise ToolError(f"no price for {item!r}; known items: {', '.join(PRICES)}")
    return PRICES[best]


@server.tool(name="basket.add")
def basket_add(item: str) -> str:
    """Put an item in the basket; say what is in it now."""
    basket.append(item)
    return ", ".join(basket)


server.run()  # stdio: the client starts this file and talks over its stdin and stdout
''')
command = f"{sys.executable} {shop}"

# %% [markdown]
# ## What the model is told
# `mcp_tools(...)` starts the server (a command line; an `http://` URL reaches a running one),
# opens one session, and lists its tools as `Tool`s. Each gets a Python signature made from its
# input schema, so the engine reads `price-of[hotel night]` exactly as it reads a Python function's
# input. `react-text mcp list "python shop.py"` prints the same listing.

# %%
import inspect

from react_text.mcp import mcp_tools
from react_text.tools import listing

with mcp_tools(command) as tools:
    print(listing(tools))
    for t in tools:
        print(f"{t.name}{inspect.signature(t.fn)}  risky={t.risky}")

# %% [markdown]
# ## The embedded model uses them
# `LocalModel()` runs SmolLM2-135M-Instruct in-process. It knows nothing of MCP: it sees the
# tool list and writes `ACTION: price-of[...]`. It must call a tool before it answers (its
# recommended `Prompting(act_first=True)`; left alone, it answers prices from its head, wrongly).

# %%
from react_text import Agent, Limits
from react_text.backends.local import LocalModel

local = LocalModel()  # it recommends act_first: a tool before the answer
with mcp_tools(command) as tools:
    agent = Agent(local, tools=tools, limits=Limits(steps=4))
    for step in agent.iter_steps("What does a hotel night cost?"):
        print(f"step {step.number}: {step.reply!r}\n   observation: {step.observation}")

# %% [markdown]
# Its first thought guesses a price; the server's answer replaces the guess.
#
# ## The exact text exchanged
# A `ScriptedModel` plays a model whose replies we choose, so we can read every message. The
# tool's result comes back as an observation; a tool that fails (`isError` in MCP) comes back as
# a tool error the model can act on.

# %%
from react_text import ScriptedModel

model = ScriptedModel(
    [
        "THOUGHT: I need the price of a hotel night.\nACTION: price-of[hotel night]",
        "THOUGHT: And of a unicorn ride.\nACTION: price-of[unicorn ride]",
        "THOUGHT: No unicorns. I book the hotel.\nACTION: basket.add[hotel night]",
        "THOUGHT: Done.\nFINAL: A hotel night costs 145 euros; it is in the basket. There are no unicorn rides.",
    ]
)
with mcp_tools(command) as tools:
    agent = Agent(model, tools=tools)
    result = agent.run("What do a hotel night and a unicorn ride cost? Book what exists.")
print(result.answer, "|", result.stop_reason)
system = model.calls[0].prompt[0].content
print(system[: system.index("Reply in")])  # the start of the instructions: the MCP tools, as text
for message in model.calls[-1].prompt[1:]:  # then the conversation, as the last call sent it
    print(f"{message.role:>9}: {message.content!r}")

# %% [markdown]
# ## One session per server, for the whole block
# Inside one `with` block every call goes to the same server process, in the same session: the
# basket fills up across calls, and across runs. A new block starts a new server, with an empty
# basket. (Frameworks that open a session per call break stateful servers such as browsers and
# shells in just this way.) On the way out, whether the block ends, raises or is interrupted,
# the session is closed and the server process is gone.

# %%
with mcp_tools(command) as tools:
    add = {t.name: t for t in tools}["basket.add"]
    print(add.fn("train ticket"))
    print(add.fn("museum pass"))
    replies = ["ACTION: basket.add[hotel night]", "FINAL: booked"]
    print(Agent(ScriptedModel(replies), tools=tools).run("Book a hotel night.").steps[0].observation)

with mcp_tools(command) as tools:
    print({t.name: t for t in tools}["basket.add"].fn("hotel night"))  # a new server: a new basket

# %% [markdown]
# A server started as a command gets only a minimal environment (`HOME`, `PATH`, ...) plus what
# you pass in `env={...}`: your API keys stay yours. An HTTP server gets `headers={...}`, which
# appear in no repr, error or log line. Tools whose annotations say `destructiveHint` are risky:
# they run only when approved (notebook 5).
#
# In async code the same block is `async with mcp_tools(...) as tools:`, and the sessions live in
# your event loop.
#
# ## Exercises
# 1. Add a tool `basket.total` that sums the prices of what is in the basket, and ask the
#    embedded model for the total of a train ticket and a museum pass.
# 2. Give `price-of` a second, optional parameter `currency: str = "EUR"`. How does the listing
#    change, and what does `price-of[hotel night, USD]` send to the server?
# 3. Mark `basket.add` as destructive (`annotations=ToolAnnotations(destructive_hint=True)`) and
#    run the scripted agent again, without an approver and then with one.

# %%
workdir.cleanup()
