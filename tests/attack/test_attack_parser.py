"""Attacks on the tolerant parser's README promises, through `react_text.parse` and a run.

README, "What the engine does for you": "A tolerant parser (`parse(text, tools=...)`, pure,
linear time, never raises) ..." and the Guarantees table: "`parse` and the guard never raise, on
any string, in time linear in the input". Benchmarks: "Worst cases, tolerant parser, 100 KB: ...
all under the 10 ms target".

Each shape is timed in a fresh interpreter with a hard limit, so a quadratic case fails rather
than hangs the suite. The limit (2 s for 100 KB) is 200 times the README's 10 ms target: only a
super-linear blow-up trips it.
"""

from __future__ import annotations

import json

import pytest
from _support import DRIVERS, python

from react_text import Action, Agent, Final, Limits, ParseError, ScriptedModel, parse

NAMES = ["Wikipedia Research Tool", "get-weather", "fs.read_file", "加法", "calculator"]

# 100 KB pathological shapes: runs of one character after labels and names, many labels, nesting.
SHAPES = {
    "spaces after ACTION: word": "'ACTION: x' + ' ' * 100_000",
    "spaces after a registered name": "'ACTION: calculator' + ' ' * 100_000",
    "spaces after a name with spaces": "'ACTION: Wikipedia Research Tool' + ' ' * 100_000",
    "tabs after a name": "'ACTION: get-weather' + '\\t' * 100_000",
    "spaces after Tool: word": "'Tool: x' + ' ' * 100_000",
    "spaces after Action: word": "'Action: x' + ' ' * 100_000",
    "spaces after ACTION:": "'ACTION:' + ' ' * 100_000",
    "newlines after ACTION:": "'ACTION:' + '\\n' * 100_000",
    "asterisks after a label": "'**Action:' + '*' * 100_000",
    "open brackets": "'ACTION: calculator' + '[' * 100_000",
    "close brackets": "'ACTION: calculator[' + ']' * 100_000",
    "deep nesting": "'ACTION: calculator' + '[' * 50_000 + ']' * 50_000",
    "quotes": "'ACTION: calculator[\"' + '\"' * 100_000",
    "colons after a label": "'ACTION' + ':' * 100_000",
    "colons after a name": "'ACTION: calculator' + ':' * 100_000",
    "many labels": "'Action: x\\n' * 10_000",
    "many Action Input labels": "'Action: calculator\\nAction Input: ' * 3_000",
    "many numbered labels": "''.join(f'Action {i}: ' for i in range(8_000))",
    "json braces": "'{' * 100_000",
    "json nesting": "'{\"a\":' * 20_000",
    "think openings": "'<think>' * 14_000",
}


@pytest.mark.parametrize("with_tools", [False, True], ids=["no tools", "registered names"])
@pytest.mark.parametrize("shape", list(SHAPES), ids=list(SHAPES))
def test_100kb_pathological_shapes_parse_in_linear_time(shape: str, with_tools: bool) -> None:
    """README: "A tolerant parser (`parse(text, tools=...)`, pure, linear time, never raises)";
    Guarantees: "`parse` and the guard never raise, on any string, in time linear in the input"."""
    tools = repr(NAMES) if with_tools else "()"
    code = (
        "import time, react_text as r\n"
        f"s = {SHAPES[shape]}\n"
        "t = time.perf_counter()\n"
        f"r.parse(s, tools={tools})\n"
        "r.cut(s)\n"
        "print(time.perf_counter() - t)\n"
    )
    done = python(code, timeout=20)
    assert done is not None, f"parse of 100 KB ({shape}) did not finish in 20 s"
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) < 2.0, f"{shape}: {float(done.stdout):.2f} s for 100 KB"


def test_parse_time_grows_linearly_with_a_run_of_spaces_after_a_name() -> None:
    """README: "linear time": doubling the input should about double the time, not quadruple it."""
    code = (
        "import time, react_text as r\n"
        "out = []\n"
        "for n in (500, 1000, 2000):\n"
        "    s = 'ACTION: calculator' + ' ' * n\n"
        "    t = time.perf_counter(); r.parse(s, tools=['calculator']); out.append(time.perf_counter() - t)\n"
        "print(out)\n"
    )
    done = python(code, timeout=60)
    assert done is not None, "parsing 2,000 spaces after a tool name took over 60 s"
    small, _, large = json.loads(done.stdout)
    assert large < max(small, 1e-3) * 8, f"500 -> 2000 chars: {small:.4f} s -> {large:.4f} s"


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_a_reply_padded_with_spaces_does_not_hang_a_run(driver: str) -> None:
    """README: "no reply may hang the engine" (helper rules) and "A tolerant parser ... linear time":
    a model that runs on with spaces after its tool name (a common degenerate output) must not stall
    the run. 20 KB is well under one 512-token reply's worth of characters for many tokenizers."""
    run = "r.agent.run(t)" if driver == "sync" else "asyncio.run(a.arun(t))"
    code = (
        "import asyncio\n"
        "from react_text import Agent, Limits, ScriptedModel\n"
        "def lookup(item: str) -> str:\n"
        "    '''Return the price of one item.'''\n"
        "    return '89'\n"
        "m = ScriptedModel(['THOUGHT: t\\nACTION: lookup' + ' ' * 20_000, 'FINAL: 89'])\n"
        "a = Agent(m, tools=[lookup], limits=Limits(steps=3, reply_tokens=100_000))\n"
        "t = 'price?'\n"
        f"res = {run.replace('r.agent', 'a')}\n"
        "print(res.stop_reason)\n"
    )
    done = python(code, timeout=30)
    assert done is not None, "a run whose reply ends in 20,000 spaces did not end in 30 s"
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\x00" * 50,
        "ACTION: [",
        "ACTION: calculator[" + "\\" * 999,
        "FINAL:",
        "<think>",
        "ACTION:\u2028x[1]",
        "ACTION: \ud800[1]",
        "Action: None\nFinal Answer:",
        '```json\n{"action": 5}\n```',
        '{"action": null}',
    ],
)
def test_never_raises_on_odd_strings(text: str) -> None:
    """README: "`parse` and the guard never raise, on any string"."""
    for tools in ((), NAMES, ["", " ", "["]):
        assert isinstance(parse(text, tools=tools), Action | Final | ParseError)


@pytest.mark.parametrize(
    ("reply", "tool", "input_"),
    [
        ("**Action:** calculator[2 + 2]", "calculator", "2 + 2"),
        ("### Thought\nI add.\n### Action\ncalculator[2 + 2]", "calculator", "2 + 2"),
        ("Action 2: calculator[2 + 2]", "calculator", "2 + 2"),
        ("Thought: add.Action: calculator[2 + 2]", "calculator", "2 + 2"),
        ("<think>ACTION: fs.read_file[x]</think>\nACTION: calculator[2 + 2]", "calculator", "2 + 2"),
        ("ACTION: python[sorted(x)[0]]", "python", "sorted(x)[0]"),
        ("Action: calculator\nAction Input: 2 + 2", "calculator", "2 + 2"),
        ("Tool: calculator Tool Input: 2 + 2", "calculator", "2 + 2"),
        ("Action 1: Search[x]", "Search", "x"),
        ("ACTION: wikipedia research tool[Oslo]", "Wikipedia Research Tool", "Oslo"),
        ("ACTION: 加法[1, 2]", "加法", "1, 2"),
        ("Acción: calculator[2 + 2]", "calculator", "2 + 2"),
        ("ACTION: calculator[2 + 2]\nFINAL: 5", "calculator", "2 + 2"),
    ],
)
def test_the_readme_shapes_read_as_actions(reply: str, tool: str, input_: str) -> None:
    """README: "reads the canonical form with any label case, markdown decoration (`**Action:**`,
    `### Thought`), numbered labels (`Action 2:`), labels glued without a newline, `<think>` blocks,
    balanced brackets (`python[sorted(x)[0]]`) ... LangChain's `Action:` + `Action Input:` ...
    Haystack's `Tool:` + `Tool Input:` (on one line too) ... the ReAct paper's `Action 1: Search[x]`
    ... labels in Spanish ... Given the registered tool names, it matches them (exactly, then ignoring
    case) ... The first directive wins (an ACTION followed by a made-up FINAL gets the tool run)"."""
    names = [*NAMES, "python", "Search"]
    got = parse(reply, tools=names)
    assert isinstance(got, Action), got
    assert (got.tool, got.input) == (tool, input_)


@pytest.mark.parametrize("name", ["answer", "finish"])
def test_a_tool_named_answer_or_finish_is_a_tool(name: str) -> None:
    """README: "a tool named `answer` or `finish` is a tool"."""
    got = parse(f"ACTION: {name}[42]", tools=[name])
    assert isinstance(got, Action) and got.tool == name and got.input == "42"


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_first_directive_wins_in_a_run_and_the_rest_is_never_sent_back(driver: str) -> None:
    """README: "The first directive wins (an ACTION followed by a made-up FINAL gets the tool run);
    the rest is kept as `discarded` and never sent back"."""
    ran: list[str] = []

    def lookup(item: str) -> str:
        """Return the price of one item."""
        ran.append(item)
        return "89"

    model = ScriptedModel(["THOUGHT: t\nACTION: lookup[train]\nFINAL: SECRET-MADE-UP", "FINAL: 89"])
    result = DRIVERS[driver](Agent(model, tools=[lookup], limits=Limits(steps=3)), "price?")
    assert ran == ["train"] and result.answer == "89"
    assert "SECRET-MADE-UP" not in json.dumps([repr(c) for c in model.calls[1:]])


@pytest.mark.parametrize("driver", list(DRIVERS))
def test_spaces_within_the_default_allowance_do_not_hang_a_run(driver: str) -> None:
    """README: "linear time". With the default `reply_tokens=512`, ScriptedModel (counting as
    cl100k) returns 40,000 spaces after the tool name whole, since long runs of spaces are few
    tokens: a degenerate reply a real server can send within its allowance."""
    run = "a.run('x')" if driver == "sync" else "asyncio.run(a.arun('x'))"
    code = (
        "import asyncio\n"
        "from react_text import Agent, Limits, ScriptedModel\n"
        "def lookup(item: str) -> str:\n"
        "    '''Return the price of one item.'''\n"
        "    return '89'\n"
        "m = ScriptedModel(['THOUGHT: t\\nACTION: lookup' + ' ' * 40_000, 'FINAL: 89'])\n"
        "a = Agent(m, tools=[lookup], limits=Limits(steps=3))\n"
        f"print({run}.stop_reason)\n"
    )
    done = python(code, timeout=30)
    assert done is not None, "a run with 40,000 spaces in one 512-token reply did not end in 30 s"
