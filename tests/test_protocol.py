"""The protocol has one home: `react_text.core.protocol` spells it, and everything else builds from it.

The source tests walk the package: no string in its code (docstrings aside: they are prose)
spells a label word or a think tag outside protocol.py, and the backends' source (docstrings and
comments too) holds no label at all. The behaviour tests read what the parts make of the labels
as protocol.py spells them, and drive a model that takes a prefill through both drivers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from pathlib import Path

import pytest
from conftest import Drive

import react_text
from react_text import Agent, Limits, ScriptedModel, parse, parse_several, tool
from react_text.core import protocol
from react_text.core.model_info import describe
from react_text.core.types import Action, Actions, Final, Message, RunResult
from react_text.grammar import gbnf
from react_text.grammar.protocol import protocol_grammar
from react_text.parser import guard, parse_naive, parse_strict, render_action
from react_text.prompting import observation_message, observations_message
from react_text.tokens.history import History

ROOT = Path(react_text.__file__).parent
HOME = ROOT / "core" / "protocol.py"
# A label word standing alone (not one word of another framework's compound label, such as
# LangChain's "FINAL ANSWER" or "FINAL_ANSWER"), or a think tag.
SPELLED = re.compile(
    rf"\b(?:{'|'.join(protocol.WORDS)})\b(?![ _\-]?[A-Z])|{re.escape(protocol.THINK_OPEN)}|{re.escape(protocol.THINK_CLOSE)}"
)


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the string nodes that are docstrings (of the module, its classes and functions)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _spelled(path: Path, allowed: Collection[str] = ()) -> list[str]:
    """Where the code of `path` spells a label word or a think tag: "file:line: the string"
    (strings in `allowed` aside)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = _docstrings(tree)
    return [
        f"{path.name}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
        if SPELLED.search(node.value) and node.value not in allowed
    ]


def test_the_source_scan_finds_a_spelled_label(tmp_path: Path) -> None:
    """The scan itself: a label in code is found, in a plain string, a pattern or an f-string, and a
    docstring or another framework's compound label is not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""THOUGHT: prose."""\n'
        'A = "FINAL: x"\n'
        'B = r"(?:OBSERVATION|Observation)"\n'
        'C = f"{A}<think>"\n'
        'D = ["FINAL ANSWER", "FINAL_ANSWER", "THOUGHT_CUE"]\n'
        "def f():\n"
        '    """ACTION: a docstring."""\n'
        '    return "ACTION"\n',
        encoding="utf-8",
    )
    lines = [int(hit.split(":")[1]) for hit in _spelled(sample)]
    assert lines == [2, 3, 4, 8]


# The same word where it is no label: `react-text mcp ACTION`, the metavar of mcp's subcommands.
NOT_LABELS = {("mcp.py", "ACTION")}  # the metavar of `react-text mcp ACTION`


def test_no_label_is_spelled_outside_protocol_py() -> None:
    paths = sorted(ROOT.rglob("*.py"))
    assert HOME in paths and len(paths) > 50
    spelled = [
        f"{p.parent.name}/{hit}"
        for p in paths
        if p != HOME
        for hit in _spelled(p, allowed={v for name, v in NOT_LABELS if name == p.name})
    ]
    assert spelled == []
    assert _spelled(HOME)  # where they are spelled


def test_the_backends_know_no_label() -> None:
    """Not in code, docstrings or comments: a backend is given a prefill, not the protocol."""
    words = re.compile(rf"\b(?:{'|'.join(protocol.WORDS)})\b")
    found = [
        f"{path.name}:{n}: {line.strip()}"
        for path in sorted((ROOT / "backends").rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if words.search(line)
    ]
    assert found == []
    assert (ROOT / "backends" / "local.py").is_file()  # the scan read LocalModel's source


# --- the parts read and write the protocol as protocol.py spells it --------------------------------


def test_a_reply_spelled_by_protocol_py_is_read_by_every_parser_and_the_grammar() -> None:
    thought, answer = "I add them", "5"
    action = f"{protocol.THOUGHT_LABEL} {thought}\n{protocol.action_line('add', '2, 3')}"
    final = f"{protocol.THOUGHT_LABEL} {thought}\n{protocol.FINAL_LABEL} {answer}"
    for read in (parse, parse_strict, parse_naive):
        assert read(final) == Final(answer, thought if read is not parse_naive else "")
        got = read(action)
        assert isinstance(got, Action) and (got.tool, got.input) == ("add", "2, 3")
    grammar = protocol_grammar(["add"])
    assert gbnf.admits(grammar, action) and gbnf.admits(grammar, final)
    after = protocol_grammar(["add"], after_cue=True)  # after the cue, the reply goes on from it
    assert gbnf.admits(after, action.removeprefix(protocol.THOUGHT_CUE))


def test_the_guard_cuts_at_the_observation_labels_protocol_py_writes() -> None:
    action = protocol.action_line("add", "2, 3")
    for label in (protocol.observation_label(), protocol.observation_label("add[2, 3]")):
        assert guard.cut(f"{action}\n{label} 5").kept == f"{action}\n"
    written = (observation_message("5"), observations_message([("add[2, 3]", "5"), ("add[1, 1]", "2")]))
    for text in written:
        assert guard.cut(f"{action}\n{text}").kept == f"{action}\n"
    # Each stop sequence begins a label the guard cuts at (each is a line break, then the label).
    for stop in protocol.STOP_SEQUENCES:
        assert guard.cut(f"{action}{stop} 5").kept == f"{action}\n"
    for stop in protocol.PARALLEL_STOP:
        assert guard.cut(f"{action}{stop}add[2, 3]): 5").kept == f"{action}\n"


def test_think_tags_are_the_ones_the_guard_and_the_parser_drop() -> None:
    reply = (
        f"{protocol.THINK_OPEN}\n{protocol.OBSERVATION_LABEL} maybe\n{protocol.THINK_CLOSE}\n{protocol.FINAL_LABEL} 5"
    )
    assert guard.split_reasoning(reply) == (f"{protocol.OBSERVATION_LABEL} maybe", f"\n{protocol.FINAL_LABEL} 5")
    assert parse(reply) == Final("5")


def test_a_call_an_action_and_the_directive_line() -> None:
    spaced = Action("weather", "Athens,\n  today")
    assert protocol.call("weather", "Athens") == "weather[Athens]"
    assert protocol.call_line(spaced) == "weather[Athens, today]"
    assert protocol.action_line("weather", "Athens") == f"{protocol.ACTION_LABEL} weather[Athens]"
    assert protocol.directive_line(spaced) == f"{protocol.ACTION_LABEL} weather[Athens, today]"
    both = Actions((Action("a", "1"), Action("b", "2")), "", "")
    assert protocol.directive_line(both) == f"{protocol.ACTION_LABEL} a[1]\n{protocol.ACTION_LABEL} b[2]"
    assert protocol.directive_line(Final("5")) == ""
    assert render_action("weather", "Athens") == protocol.action_line("weather", "Athens")


def test_fold_colons_keeps_every_position() -> None:
    text = "THOUGHT\uff1a x\nFINAL\uff1a 5"
    folded = protocol.fold_colons(text)
    assert folded == "THOUGHT: x\nFINAL: 5" and len(folded) == len(text)
    assert protocol.fold_colons("plain") == "plain"


BEFORE_AN_ARRAY = '\n[{"action": "a", "action_input": 1}, {"action": "b", "action_input": 2}]'


@pytest.mark.parametrize("decoration", ["", "- ", "> ", "## ", "**", "__", "* ", "-- "])
def test_a_decorated_thought_reads_the_same_before_an_array_as_before_one_action(decoration: str) -> None:
    """One decoration set (protocol.DECOR) for every label line: the thought before a JSON array of
    actions loses the same decoration as the thought before one action."""
    closing = decoration if decoration in ("**", "__") else ""
    thought = f"{decoration}Thought:{closing} the two are independent"
    one = parse(f"{thought}\nAction: a[1]")
    several = parse_several(thought + BEFORE_AN_ARRAY)
    assert isinstance(one, Action) and isinstance(several, Actions)
    assert several.thought == one.thought == "the two are independent"


# --- the prefill: the episode decides it, the backend only carries it --------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _run(drive: Drive, model: ScriptedModel) -> RunResult:
    agent = Agent(model, tools=[add], limits=Limits(steps=3))
    return drive(agent, "What is 2 + 3?")


def test_a_chat_model_that_takes_a_prefill_is_sent_the_cue_and_a_grammar_after_it(drive: Drive) -> None:
    model = ScriptedModel(
        [" add them\nACTION: add[2, 3]", " I have it\nFINAL: 5"], accepts_grammar=True, accepts_prefill=True
    )
    result = _run(drive, model)
    assert (result.answer, result.stop_reason) == ("5", "final")
    assert [c.prefill for c in model.calls] == [protocol.THOUGHT_CUE] * 2
    assert all(c.grammar == protocol_grammar([add], after_cue=True) for c in model.calls)
    # The reply is the whole turn, prefill included; the history holds it as the assistant's message.
    assert result.steps[0].reply == f"{protocol.THOUGHT_CUE} add them\n{protocol.action_line('add', '2, 3')}"
    assert result.steps[0].parsed == Action("add", "2, 3", "add them")
    second = model.calls[1].prompt
    assert isinstance(second, tuple)
    assert second[-2] == Message("assistant", result.steps[0].reply)


def test_a_chat_model_without_a_prefill_is_sent_none_and_the_whole_grammar(drive: Drive) -> None:
    model = ScriptedModel(
        ["THOUGHT: add them\nACTION: add[2, 3]", "THOUGHT: I have it\nFINAL: 5"], accepts_grammar=True
    )
    result = _run(drive, model)
    assert (result.answer, result.stop_reason) == ("5", "final")
    assert [c.prefill for c in model.calls] == ["", ""]
    assert all(c.grammar == protocol_grammar([add]) for c in model.calls)


def test_a_completion_transcript_ends_with_the_cue_and_carries_no_prefill(drive: Drive) -> None:
    model = ScriptedModel(
        [" add them\nACTION: add[2, 3]", " I have it\nFINAL: 5"], api="completion", accepts_prefill=True
    )
    result = _run(drive, model)
    assert result.answer == "5"
    assert [c.prefill for c in model.calls] == ["", ""]
    assert all(isinstance(c.prompt, str) and c.prompt.endswith(f"\n{protocol.THOUGHT_CUE}") for c in model.calls)


def test_history_ends_a_transcript_with_the_cue() -> None:
    history = History("QUESTION: q\n", len)
    assert history.prompt() == f"QUESTION: q\n{protocol.THOUGHT_CUE}"


def test_taking_a_prefill_is_read_once_from_the_model() -> None:
    assert describe(ScriptedModel([], accepts_prefill=True)).prefill is True
    assert describe(ScriptedModel([])).prefill is False
    assert describe(ScriptedModel.per_run([], accepts_prefill=True)).prefill is True
