from __future__ import annotations

import dataclasses
import datetime
import enum
import inspect
import random
import re
import time
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_text import Agent, ScriptedModel, tool
from react_text.prompting import render
from react_text.tokens.meter import counter
from react_text.tokens.truncation import truncate, truncate_each
from react_text.tools.running import run_text
from react_text.tools.tool import Tool, as_text, listing
from react_text.tools.toolbox import default_tools


def lookup(item: str) -> str:
    """Return the price of one item.

    Prices are in euros."""
    return item


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def test_tool_from_a_plain_function() -> None:
    made = tool(lookup)
    assert (made.name, made.params, made.description) == (
        "lookup",
        ("item",),
        "Return the price of one item.",
    )
    assert made.form == "lookup[item]"


def test_decorator_form_with_options() -> None:
    @tool(risky=True, timeout=3, name="rm")
    def remove(path: str) -> str:
        """Remove a file."""
        return path

    assert isinstance(remove, Tool)
    assert (remove.name, remove.risky, remove.timeout) == ("rm", True, 3)


def test_a_tool_built_directly_takes_several_parameters() -> None:
    made = Tool("add", "Add two numbers.", add)
    assert made.params == ("a", "b")
    assert made.form == "add[a: float, b: float]"
    assert run_text(made, "2, 3") == "5.0"
    _, result = run(["ACTION: add[2, 3]", "FINAL: 5"], [made])
    assert result.steps[0].observation == "5.0"


def run(replies: list[str], tools: list[Any]):  # type: ignore[no-untyped-def]
    model = ScriptedModel(replies)
    return model, Agent(model, tools=tools).run("task")


def untyped(x, y):  # type: ignore[no-untyped-def]
    return x


def later(x: Undefined) -> str:  # type: ignore[name-defined]  # noqa: F821 - the annotation that cannot be resolved
    return "never"


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (lambda: Tool("", "", lookup), ValueError, "tool name"),
        (lambda: Tool(" lookup", "", lookup), ValueError, "tool name"),
        (lambda: Tool("look\nup", "", lookup), ValueError, "tool name"),
        (lambda: Tool("look[up]", "", lookup), ValueError, "tool name"),
        (lambda: Tool("lookup()", "", lookup), ValueError, "tool name"),
        (lambda: Tool(3, "", lookup), ValueError, "tool name"),
        (lambda: Tool("lookup", None, lookup), TypeError, "description"),
        (lambda: Tool("lookup", "", "not a function"), TypeError, "callable"),
        (lambda: Tool("lookup", "", lookup, risky="yes"), TypeError, "risky"),
        (lambda: Tool("lookup", "", lookup, timeout=0), ValueError, "timeout"),
        (lambda: Tool("max", "", max), TypeError, "cannot read the parameters"),
        (lambda: Tool("later", "", later), TypeError, "cannot resolve the annotation 'Undefined'"),
    ],
)
def test_a_broken_tool_is_refused_when_made(build: Any, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=re.escape(words)):
        build()


@pytest.mark.parametrize("name", ["get-weather", "fs.read_file", "Wikipedia Research Tool", "加法", "server:tool"])
def test_names_the_protocol_carries_are_accepted(name: str) -> None:
    assert Tool(name, "", lookup).form == f"{name}[item]"


def test_an_unresolvable_return_annotation_does_not_matter() -> None:
    def shout(text: str) -> Undefined:  # type: ignore[name-defined]  # noqa: F821
        return text.upper()

    assert run_text(tool(shout), "hi") == "HI"


def test_replacing_a_field_keeps_what_was_derived_and_is_cheap() -> None:
    made = tool(add)
    changed = dataclasses.replace(made, timeout=5.0)
    assert changed.shape is made.shape  # derived once per function
    assert changed == Tool("add", "Add two numbers.", add, timeout=5.0)
    assert hash(changed) == hash(Tool("add", "Add two numbers.", add, timeout=5.0))


def test_an_async_tool_is_run_to_completion() -> None:
    async def fetch(url: str, retries: int = 1) -> str:
        return f"{url} {retries}"

    assert run_text(tool(fetch), "example.org, 2") == "example.org 2"
    assert run_text(tool(fetch, timeout=5), "example.org") == "example.org 1"


class Mode(enum.Enum):
    FAST = "fast"
    SAFE = "safe"


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


def search(query: str, limit: int = 5) -> str:
    """Search the notes."""
    return query


def greet(name: str, greeting: str = "Hello") -> str:
    return greeting


def every(
    path: Path,
    mode: Mode,
    level: Level,
    unit: Literal["c", "f"] = "c",
    ratio: float = 0.5,
    count: int | None = None,
    verbose: bool = False,
    tags: list[str] | None = None,
    table: dict[str, int] | None = None,
    anything: Any = None,
    *rest: int,
    **options: str,
) -> str:
    return ""


def now() -> str:
    """The time."""
    return "12:00"


def test_the_listing_shows_what_binding_accepts() -> None:
    assert listing([tool(lookup), tool(add), tool(search), tool(greet), tool(now), tool(untyped)]) == (
        "- lookup[item]: Return the price of one item.\n"
        "- add[a: float, b: float]: Add two numbers.\n"
        "- search[query, limit=5]: Search the notes.\n"
        '- greet[name, greeting="Hello"]\n'
        "- now[]: The time.\n"
        "- untyped[x, y]"
    )
    assert tool(every).form == (
        'every[path, mode: "fast" | "safe", level: LOW | HIGH, unit: "c" | "f" = "c", ratio=0.5, '
        "count: int | null = null, verbose=false, tags: list[str] | null = null, "
        "table: dict[str, int] | null = null, anything: any = null, *rest: int, **options]"
    )


def test_a_default_json_has_no_form_for_is_listed_without_its_address() -> None:
    """Found by an outside review (attack5): a default like `cb=<function <lambda> at 0x7f...>` put
    a memory address in the listing, so the instructions changed from one process to the next."""

    class Unit:
        pass

    def fetch(url: str, parse=lambda page: page, unit=Unit(), kind=Unit, when=datetime.date(2026, 1, 2)) -> str:  # type: ignore[no-untyped-def]  # noqa: B008
        """Fetch a page."""
        return url

    form = tool(fetch).form
    assert form == (
        "fetch[url, parse=<function test_a_default_json_has_no_form_for_is_listed_without_its_address.<locals>.<lambda>>, "
        "unit=<test_a_default_json_has_no_form_for_is_listed_without_its_address.<locals>.Unit object>, "
        "kind=<class test_a_default_json_has_no_form_for_is_listed_without_its_address.<locals>.Unit>, "
        "when=datetime.date(2026, 1, 2)]"
    ), form
    assert " at 0x" not in form


def test_the_instruction_block_lists_the_forms() -> None:
    block = Agent(ScriptedModel([]), tools=[search, add]).instructions()
    assert "- search[query, limit=5]: Search the notes.\n- add[a: float, b: float]: Add two numbers." in block


def test_the_built_in_tools_take_their_whole_input(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("The train costs 89 euros, the hotel 145.\n")
    tools = default_tools(tmp_path)
    assert [t.form for t in tools] == ["calculator[expression]", "python_doc[name]", "search[words]", "read[path]"]
    replies = [
        "ACTION: calculator[round(2 / 3, 2) + max(1, 2)]",
        'ACTION: calculator[{"expression": "2 ** 10"}]',
        "ACTION: search[train, hotel]",
        "ACTION: read[notes.txt]",
        "FINAL: done",
    ]
    _, result = run(replies, tools)
    assert [s.observation for s in result.steps[:4]] == [
        "2.67",
        "1024",
        "notes.txt:1: The train costs 89 euros, the hotel 145.",
        "The train costs 89 euros, the hotel 145.\n",
    ]


@pytest.mark.parametrize("text", ["2, 3", "[2, 3]", '{"a": 2, "b": 3}', " 2 ,3 ", "a=2, b=3", "2, b=3"])
def test_several_parameters_from_text(text: str) -> None:
    assert run_text(tool(add), text) == "5.0"


def test_an_input_the_tool_cannot_take_is_refused_without_running_it() -> None:
    ran: list[object] = []

    def record(a: float, b: float) -> str:
        ran.append((a, b))
        return "ran"

    assert run_text(tool(record, name="add"), "two, three") == render(
        "corrections/bad_input",
        tool="add",
        problem='a takes a number, not "two"; b takes a number, not "three"',
        form="add[a: float, b: float]",
    )
    assert run_text(tool(record, name="add"), "2") == render(
        "corrections/bad_input", tool="add", problem="b is missing", form="add[a: float, b: float]"
    )
    assert ran == []


def test_a_tool_that_raises_is_an_observation() -> None:
    assert run_text(tool(lookup, name="boom", description=""), "x") == "x"

    def boom(x: str) -> str:
        raise KeyError(x)

    assert run_text(tool(boom), "x") == render(
        "corrections/tool_error", tool="boom", error_type="KeyError", error="'x'"
    )


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("x", "x"),
        (3, "3"),
        (2.5, "2.5"),
        ({"a": [1, "é"]}, '{"a": [1, "é"]}'),
        ((1, 2), "[1, 2]"),
    ],
)
def test_results_converted_to_text(value: object, text: str) -> None:
    assert as_text("t", value) == text


def test_none_is_said_to_be_no_result() -> None:
    """A forgotten `return`: the model reads that the tool ran and gave nothing, not "None"."""
    assert as_text("t", None) == render("corrections/tool_no_result", tool="t", kind="None")


def test_bytes_refused_clearly() -> None:
    assert as_text("t", b"\x00\x01") == render("corrections/tool_bad_result", tool="t", kind="bytes (2 bytes)")


def test_object_without_text_form_refused() -> None:
    assert as_text("t", object()) == render("corrections/tool_bad_result", tool="t", kind="object")


# --- truncation --------------------------------------------------------------------------------------

EXACT = counter("gpt-4o")  # o200k_base, exact


@pytest.mark.parametrize("allowance", [40, 120, 400, 3000, 20_000])
def test_several_results_share_an_allowance_the_short_kept_whole(allowance: int) -> None:
    texts = ["short result", " ".join(f"a{i}" for i in range(2000)), "b " * 50, " ".join(f"c{i}" for i in range(900))]
    cut = truncate_each(texts, allowance, EXACT)
    assert sum(EXACT(t) for t in cut) <= allowance
    assert cut[0] == "short result"  # the shortest fits any even share here
    for whole, part in zip(texts, cut, strict=True):
        assert part == whole or (part and EXACT(part) < EXACT(whole))
    if allowance >= sum(EXACT(t) for t in texts):
        assert cut == tuple(texts)


ESTIMATE = counter("some-local-model")  # cl100k_base scaled up by a margin: not additive over pieces
NOTE = re.compile(r"\n\[\.\.\. (?:about )?(\d+) tokens cut from the middle of this output \.\.\.\]\n")

SCRIPTS = {
    "ascii": "the quick brown fox jumps over the lazy dog 0123456789 ",
    "cjk": "汉字漢字かなカナ한국어中文日本語文字列處理測試資料",
    "emoji": "😀🎉👍🏽🚀🌍❤️👨‍👩‍👧‍👦🇫🇷🧪",
    "code": 'def f(x):\n    return {"k": [x, x ** 2]}  # note\n\tif a != b: print(a)\n',
}


def mix(rng: random.Random, blocks: int, block_chars: int) -> str:
    """Blocks of random scripts, each a random run of that script's characters (and spaces)."""
    parts = []
    for _ in range(blocks):
        alphabet = SCRIPTS[rng.choice(list(SCRIPTS))]
        parts.append("".join(rng.choices(alphabet, k=rng.randint(1, block_chars))))
    return "".join(parts)


def check(text: str, allowance: int, count: Any, *, tolerance: float = 0.1) -> str:
    """Truncate and check the promise against the counter itself: within the allowance; the note right."""
    kept = truncate(text, allowance, count)
    assert count(kept) <= allowance
    if kept == text:
        assert count(text) <= allowance
        return kept
    notes = list(NOTE.finditer(kept))
    assert len(notes) == 1, kept
    head, tail = kept[: notes[0].start()], kept[notes[0].end() :]
    assert text.startswith(head) and text.endswith(tail)
    cut = count(text[len(head) : len(text) - len(tail)])  # the oracle: the whole cut part, counted directly
    assert abs(int(notes[0].group(1)) - cut) <= tolerance * cut
    return kept


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    blocks=st.integers(1, 40),
    block_chars=st.integers(1, 3000),
    allowance=st.integers(32, 600),
    count=st.sampled_from([EXACT, ESTIMATE]),
)
def test_truncation_holds_its_allowance_and_says_what_it_cut(
    seed: int, blocks: int, block_chars: int, allowance: int, count: Any
) -> None:
    check(mix(random.Random(seed), blocks, block_chars), allowance, count)


def test_the_issue_case_ascii_then_cjk() -> None:
    """ASCII followed by CJK, allowance 100: it came out at 667 tokens, and the note said 8,725 cut of 77,000."""
    text = "word " * 20_000 + "汉字漢字中文日本語" * 8_000
    kept = check(text, 100, counter("x"))
    assert kept.startswith("word") and kept.endswith("語")


def test_truncate_keeps_short_text() -> None:
    assert truncate("short", 100, counter("x")) == "short"
    assert truncate("", 100, counter("x")) == ""


def test_an_emoji_is_more_than_one_token() -> None:
    """A character can be several tokens: a text shorter than the allowance in characters may not fit."""
    text = "👨‍👩‍👧‍👦" * 20
    assert len(text) < 200 < EXACT(text)
    check(text, 200, EXACT)


@pytest.mark.parametrize("allowance", [1, 5, 12])
def test_an_allowance_too_small_for_the_note_keeps_the_head(allowance: int) -> None:
    text = "word " * 1000
    kept = truncate(text, allowance, EXACT)
    assert text.startswith(kept) and 0 < EXACT(kept) <= allowance


def with_bos(text: str) -> int:
    """A counter with a cost per call, as a tokenizer that adds a beginning-of-sequence token."""
    return EXACT(text) + 1


@pytest.mark.parametrize("count", [EXACT, ESTIMATE, with_bos], ids=["exact", "estimate", "bos"])
def test_truncating_a_huge_mixed_result_estimates_the_cut_within_ten_percent(count: Any) -> None:
    rng = random.Random(12)
    text = mix(rng, 2_000, 2_000)  # about 2 MB: the cut part is measured on samples
    assert len(text) > 1_000_000
    check(text, 1000, count)


def test_a_huge_result_is_never_tokenized_whole() -> None:
    text = ("word " * 1000 + "汉字漢字中文 " * 300) * 1_500  # 10 million characters
    counted: list[int] = []

    def count(piece: str) -> int:
        counted.append(len(piece))
        return ESTIMATE(piece)

    started = time.perf_counter()
    kept = truncate(text, 1000, count)
    seconds = time.perf_counter() - started
    assert len(text) > 10_000_000 and ESTIMATE(kept) <= 1000
    assert sum(counted) < len(text) / 10, (len(counted), sum(counted))
    assert seconds < 2


def test_a_sparse_huge_result_is_never_counted_whole() -> None:
    text = " " * 1_200_000 + "x"  # a run of spaces is few tokens (and tiktoken cannot count this one whole)
    counted: list[int] = []

    def count(piece: str) -> int:
        counted.append(len(piece))
        return ESTIMATE(piece)

    truncate(text, 100, count)
    assert max(counted) < 300_000
    check(text, 100, ESTIMATE)


def test_truncation_through_the_agent() -> None:
    big = tool(lambda x: "HEAD " + "word 汉字 " * 50_000 + " TAIL", name="big")
    model = ScriptedModel(["ACTION: big[x]", "FINAL: ok"])
    result = Agent(model, tools=[big]).run("task")  # the default allowance: 1000 tokens an observation
    observation = result.steps[0].observation or ""
    assert observation.startswith("HEAD") and observation.endswith("TAIL")
    assert 900 < model.count_tokens(observation) <= 1000


def test_a_tool_bind_is_cheap() -> None:
    made = tool(search)
    run_text(made, "warm, 1")
    for text in ("cats, 3", '{"query": "cats", "limit": 3}', 'query="cats", limit=3'):
        started = time.perf_counter()
        for _ in range(200):
            run_text(made, text)
        assert (time.perf_counter() - started) / 200 < 0.002, text  # measured: tens of microseconds


def test_inspect_signature_is_not_recomputed_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    made = dataclasses.replace(tool(add), timeout=None)
    calls: list[object] = []
    real = inspect.signature

    def spy(*args: Any, **kwargs: Any) -> inspect.Signature:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(inspect, "signature", spy)
    for _ in range(3):
        assert run_text(dataclasses.replace(made, timeout=None), "1, 2") == "3.0"
    assert calls == []
