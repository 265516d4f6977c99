"""The parser, driven by a corpus of real and constructed replies (tests/data/replies.jsonl)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from react_text import Action, Final, ParseError, parse
from react_text.corpus import Case, load, reading
from react_text.prompting import render

CORPUS = load(Path(__file__).parent / "data" / "replies.jsonl")


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
def test_corpus(case: Case) -> None:
    assert reading(parse(case.sent)) == case.expected, case.source


def test_corpus_holds_recorded_and_constructed_cases() -> None:
    sources = {c.category for c in CORPUS}
    assert any(s.startswith("recorded: ") for s in sources)
    assert len(CORPUS) >= 200
    assert len({c.id for c in CORPUS}) == len(CORPUS)


def test_thought_is_kept() -> None:
    parsed = parse("THOUGHT: I need the price.\nACTION: lookup[train]")
    assert parsed == Action("lookup", "train", "I need the price.")


def test_discarded_rest_is_recorded() -> None:
    parsed = parse("ACTION: lookup[train]\nFINAL: 89")
    assert isinstance(parsed, Action)
    assert parsed.discarded == "FINAL: 89"


def test_error_message_comes_from_the_template() -> None:
    parsed = parse("just prose")
    assert isinstance(parsed, ParseError)
    assert parsed.message == render("errors/no_directive")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("THOUGHT: x\nACTION: lookup[train]", Action("lookup", "train", "x")),
        ("THOUGHT: x\nFINAL: 3", Final("3", "x")),
    ],
)
def test_strict_reads_the_canonical_form(text: str, expected: object) -> None:
    assert parse(text, strict=True) == expected


@pytest.mark.parametrize(
    "text",
    [
        "**Action:** lookup[train]",
        "Action: lookup\nAction Input: train",
        '{"action": "lookup", "action_input": "train"}',
        "action: lookup[train]",
        "ACTION: lookup[train] and more",
    ],
)
def test_strict_refuses_dialects(text: str) -> None:
    assert isinstance(parse(text, strict=True), ParseError)


@given(st.text())
@settings(max_examples=300)
def test_never_raises(text: str) -> None:
    assert isinstance(parse(text), Action | Final | ParseError)
    assert isinstance(parse(text, strict=True), Action | Final | ParseError)


@given(st.text(alphabet="[](){}`\"'\n :ACTIONFINALTHOUGHTObservation*#<>/think", max_size=300))
@settings(max_examples=500)
def test_never_raises_on_protocol_shaped_noise(text: str) -> None:
    assert isinstance(parse(text), Action | Final | ParseError)


@pytest.mark.parametrize(
    "text",
    [
        "ACTION: x" + "[" * 100_000,
        "Action:\n" * 12_500,
        " " * 100_000,
        "{" * 100_000,
        "[" * 100_000,
        "ACTION: f[" + "a" * 100_000,
        "<think>" * 14_000,
        "Obs" * 33_000,
        "```\n" * 25_000,
        "FINAL   " + " " * 100_000,
    ],
    ids=[
        "brackets",
        "labels",
        "spaces",
        "braces",
        "bare-brackets",
        "open-input",
        "think",
        "obs",
        "fences",
        "final-spaces",
    ],
)
def test_adversarial_100kb_replies_finish(text: str) -> None:
    # Not a timing assertion (bench/ measures speed): a generous bound that only a quadratic or
    # exponential regex would break, so the test cannot flake on a busy machine.
    started = time.process_time()
    parse(text)
    assert time.process_time() - started < 2.0


tool_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,20}", fullmatch=True).filter(
    lambda name: name.casefold() not in {"finish", "final", "final_answer", "answer"}
)


@given(tool=tool_names, value=st.text(max_size=200))
@settings(max_examples=1000)
def test_round_trip(tool: str, value: str) -> None:
    from hypothesis import assume

    from react_text.guard import cut
    from react_text.parser import render_action

    text = render_action(tool, value)
    assume(cut(text).dropped == "" and "<think>" not in value and "</think>" not in value)
    assert parse(text) == Action(tool, value)


@pytest.mark.parametrize(
    "value",
    ['"quoted"', "  padded  ", "two\nlines", "unbalanced ] bracket", "[open", "```fence```", "x\nFINAL: y", ""],
)
def test_round_trip_examples(value: str) -> None:
    from react_text.parser import render_action

    assert parse(render_action("tool", value)) == Action("tool", value)
