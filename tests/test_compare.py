"""Comparing parsers: a user's corpus and parser (`--corpus`, `--parser module:function`), the
peers' real parsers (react_text.evaluation.peers), registered tool names for `parse` (`--tools`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from react_text.evaluation import corpus, peers
from react_text.evaluation.corpus import Case, agrees, load, score

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "replies.jsonl"
FAMILIES = ROOT / "tests" / "data" / "families.jsonl"
PEER_NAMES = [peer.name for peer in peers.PEERS]


def react_text(*args: str, cwd: Path, stdin: str = "", path: tuple[Path, ...] = ()) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*(str(p) for p in path), str(ROOT), str(cwd)])}
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args],
        input=stdin, capture_output=True, text=True, timeout=300, check=False, cwd=cwd, env=env,
    )  # fmt: skip


def rows(*cases: tuple[str, dict[str, str]], **extra: Any) -> str:
    return "".join(json.dumps({"text": text, "expected": expected, **extra}) + "\n" for text, expected in cases)


ACTION = {"kind": "action", "tool": "lookup", "input": "cats"}
MINE = rows(
    ("lookup: cats", ACTION),
    ("ACTION: lookup[cats]", ACTION),
    ("so the answer is 4", {"kind": "final", "answer": "4"}),
    ("???", {"kind": "error"}),
)
MY_PARSERS = """
from react_text import Action, Final

def colon(text):  # "tool: input", else "the answer is X", else it refuses
    if ": " in text:
        tool, value = text.split(": ", 1)
        return {"kind": "action", "tool": tool, "input": value}
    if "answer is" in text:
        return Final(text.rsplit(" ", 1)[-1])
    raise ValueError("cannot read it")

def named(text, *, tools=()):
    return Action(tools[0], text) if tools else {"kind": "error", "reason": "no tools"}

def garbage(text):
    return 42

NOT_A_FUNCTION = 3

class Reader:
    @staticmethod
    def read(text):
        return {"kind": "final", "answer": text}
"""


def board(stdout: str) -> dict[str, dict[str, str]]:
    """The scoreboard's `all cases` cells by column name."""
    lines = stdout.splitlines()
    names = lines[0].split()
    cells = lines[1].removeprefix("all cases").split()
    return {"all cases": dict(zip(names, cells, strict=True))}


# --- a user's corpus and parser ------------------------------------------------------------------


def test_a_users_parser_on_a_users_corpus(tmp_path: Path) -> None:
    (tmp_path / "mine.jsonl").write_text(MINE)
    (tmp_path / "myparsers.py").write_text(MY_PARSERS)
    done = react_text("parse", "--corpus", "mine.jsonl", "--parser", "myparsers:colon", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    cells = board(done.stdout)["all cases"]
    assert {name: cell for name, cell in cells.items() if name not in PEER_NAMES} == {
        "naive": "2/4",  # reads ACTION: lookup[cats], and ??? as the error it is
        "strict": "2/4",
        "tolerant": "2/4",
        # colon reads lookup: cats, the answer, and its ValueError on ??? is an error reading;
        # "ACTION: lookup[cats]" it reads as tool ACTION
        "myparsers:colon": "3/4",
    }
    assert "myparsers:colon misreads 1:" in done.stdout
    assert '"tool": "ACTION"' in done.stdout


def test_several_parsers_a_file_path_a_method_and_the_tools_keyword(tmp_path: Path) -> None:
    (tmp_path / "mine.jsonl").write_text(
        rows(("anything", {"kind": "action", "tool": "lookup", "input": "anything"}), tools=["lookup"])
    )
    (tmp_path / "own.py").write_text(MY_PARSERS)
    done = react_text(
        "parse", "--compare", "--corpus", "mine.jsonl", "--no-peers",
        "--parser", "./own.py:named", "--parser", "own:Reader.read", "--parser", "naive",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    cells = board(done.stdout)["all cases"]
    assert cells["./own.py:named"] == "1/1"  # given the row's tools, because it takes tools=
    assert cells["own:Reader.read"] == "0/1"
    assert list(cells)[:3] == ["naive", "strict", "tolerant"]  # a built-in named again is not a second column


def test_a_users_parser_reads_one_reply(tmp_path: Path) -> None:
    (tmp_path / "myparsers.py").write_text(MY_PARSERS)
    done = react_text("parse", "--parser", "myparsers:colon", cwd=tmp_path, stdin="lookup: cats")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ACTION
    refused = react_text("parse", "--parser", "myparsers:colon", cwd=tmp_path, stdin="???")
    assert refused.returncode == 1
    assert json.loads(refused.stdout) == {"kind": "error", "reason": "ValueError: cannot read it"}


def test_the_corpus_is_found_from_any_directory(tmp_path: Path) -> None:
    done = react_text("parse", "--compare", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    total = len(load(CORPUS)) + len(load(FAMILIES))  # the replies, then the families of issue 34
    cells = board(done.stdout)["all cases"]
    assert cells["naive"].endswith(f"/{total}") and cells["tolerant"] == f"{total}/{total}"
    names = done.stdout.splitlines()[0].split()
    for family in ("continuations", "call syntax", "markup calls", "code actions"):  # each in its row, peers beside
        (line,) = [row for row in done.stdout.splitlines() if row.startswith(f"family: {family} ")]
        cells = dict(zip(names, line[32:].split(), strict=True))
        count = sum(c.category == f"family: {family}" for c in load(FAMILIES))
        assert cells["tolerant"] == f"{count}/{count}" and cells["naive"].endswith(f"/{count}")


def test_the_bundled_corpus_is_the_tests_corpus_in_a_checkout() -> None:
    assert corpus.bundled() == CORPUS


@pytest.mark.slow
def test_an_installed_wheel_carries_the_corpus(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(ROOT)],
        check=True,
    )
    (wheel,) = wheels.glob("react_text-*.whl")
    assert {"react_text/data/replies.jsonl", "react_text/data/families.jsonl"} <= set(zipfile.ZipFile(wheel).namelist())
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)], check=True
    )
    code = "from react_text import corpus; print(corpus.bundled()); print(len(corpus.load(corpus.bundled())))"
    out = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(target)}, cwd=tmp_path,
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    where, count = out.stdout.split()
    assert where.startswith(str(target)) and int(count) == len(load(CORPUS))


BAD_CORPORA = [
    ('{"text": "x", "expected": {"kind": "final", "answer": "1"}}\nnot json\n', "mine.jsonl:2: not JSON"),
    ('["text"]\n', "mine.jsonl:1: not a JSON object"),
    ('{"expected": {"kind": "error"}}\n', 'mine.jsonl:1: field "text" is missing'),
    ('{"text": "x"}\n', 'mine.jsonl:1: field "expected" is missing'),
    ('{"text": 3, "expected": {"kind": "error"}}\n', 'mine.jsonl:1: field "text" must be a string'),
    ('{"text": "x", "expected": {"kind": "answer"}}\n', 'mine.jsonl:1: field "expected" has kind "answer"'),
    ('{"text": "x", "expected": {"kind": "action", "tool": "t"}}\n', 'field "expected" is an action without "input"'),
    ('{"text": "x", "expected": {"kind": "action", "tool": "t", "input": {"a": 1}}}\n', 'field "expected" has "input"'),
    ('{"text": "x", "expected": "final"}\n', 'field "expected" must be an object'),
    ('{"text": "x", "expected": {"kind": "error"}, "mode": "voice"}\n', 'field "mode" must be "chat" or "completion"'),
    ('{"text": "x", "expected": {"kind": "error"}, "tools": "lookup"}\n', 'field "tools" must be a list'),
    ("\n\n", "no cases in the corpus"),
]


@pytest.mark.parametrize(("content", "says"), BAD_CORPORA, ids=[s for _, s in BAD_CORPORA])
def test_a_bad_corpus_is_one_line_and_exit_2(tmp_path: Path, content: str, says: str) -> None:
    (tmp_path / "mine.jsonl").write_text(content)
    done = react_text("parse", "--corpus", "mine.jsonl", "--no-peers", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("react-text: ") and says in done.stderr, done.stderr


BAD_PARSERS = [
    (["--parser", "nosuchmodule:read"], "--parser nosuchmodule:read: no module nosuchmodule here"),
    (["--parser", "./nosuch.py:read"], "no such file ./nosuch.py"),
    (["--parser", "myparsers:nosuch"], "--parser myparsers:nosuch: myparsers has no nosuch"),
    (["--parser", "myparsers:NOT_A_FUNCTION"], "NOT_A_FUNCTION is a int, not a function"),
    (["--parser", "myparsers"], "--parser myparsers: give module:function"),
    (["--parser", "broken:read"], "broken failed to import: ZeroDivisionError"),
    (["--parser", "needs:read"], "needs imports 'nosuchdependency', which is not installed"),
    (["--parser", "myparsers:garbage"], "parser myparsers:garbage read case 1 as 42"),
    (["--parser", "naive", "--parser", "strict"], "give one --parser to read with"),
]


@pytest.mark.parametrize(("args", "says"), BAD_PARSERS, ids=[" ".join(a) for a, _ in BAD_PARSERS])
def test_a_bad_parser_is_one_line_and_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    (tmp_path / "mine.jsonl").write_text(MINE)
    (tmp_path / "myparsers.py").write_text(MY_PARSERS)
    (tmp_path / "broken.py").write_text("1 / 0\n")
    (tmp_path / "needs.py").write_text("import nosuchdependency\n")
    compare = [] if "give one" in says else ["--corpus", "mine.jsonl", "--no-peers"]
    done = react_text("parse", *compare, *args, cwd=tmp_path, stdin="FINAL: 1")
    assert (done.returncode, done.stdout) == (2, ""), done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("react-text: ") and says in done.stderr, done.stderr


def test_decoded_inputs_agree_with_what_the_reply_wrote() -> None:
    want = {"kind": "action", "tool": "add", "input": '{"a": 1, "b": [2, 3]}'}
    assert agrees({"kind": "action", "tool": "add", "input": {"a": 1, "b": [2, 3]}}, want)
    assert not agrees({"kind": "action", "tool": "add", "input": {"a": 1}}, want)
    assert not agrees({"kind": "action", "tool": "add", "input": '{"a":1,"b":[2,3]}'}, want)  # text is text
    literal = {"kind": "action", "tool": "add", "input": "{'a': 1}"}
    assert agrees({"kind": "action", "tool": "add", "input": {"a": 1}}, literal)
    assert agrees(
        {"kind": "action", "tool": "square", "input": 12}, {"kind": "action", "tool": "square", "input": "12"}
    )
    assert not agrees(
        {"kind": "action", "tool": "s", "input": {"q": "x"}}, {"kind": "action", "tool": "s", "input": "x"}
    )


# --- registered tool names for parse ---------------------------------------------------------------


def test_parse_is_told_the_registered_tool_names(tmp_path: Path) -> None:
    # Only the names tell where a name of words starts after prose; alone, the parser reads the last word.
    reply = "ACTION: I will use unit converter[5 km]"
    unnamed = json.loads(react_text("parse", cwd=tmp_path, stdin=reply).stdout)
    named = json.loads(react_text("parse", "--tools", "unit converter, lookup", cwd=tmp_path, stdin=reply).stdout)
    assert (unnamed["tool"], named["tool"]) == ("converter", "unit converter")
    assert named["input"] == "5 km"


def test_parse_without_tools_reads_names_of_words_and_of_any_letters(tmp_path: Path) -> None:
    lines = [{"id": "words", "text": "ACTION: unit converter[5 km]"}, {"id": "cjk", "text": "ACTION: 天气[北京]"}]
    (tmp_path / "replies.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = react_text("parse", "replies.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    read = {row["id"]: (row["tool"], row["input"]) for row in map(json.loads, done.stdout.splitlines())}
    assert read == {"words": ("unit converter", "5 km"), "cjk": ("天气", "北京")}


def test_a_jsonl_lines_tools_are_honoured(tmp_path: Path) -> None:
    lines = [
        {"id": "own", "text": "ACTION: unit converter[5 km]", "tools": ["unit converter"]},
        {"id": "flag", "text": "ACTION: Use Requests[u]"},  # no tools field: --tools
        {"id": "none", "text": "ACTION: use requests[u]", "tools": []},  # its own, empty, list wins
    ]
    (tmp_path / "replies.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = react_text("parse", "replies.jsonl", "--tools", "Use Requests", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    tools = {row["id"]: row["tool"] for row in map(json.loads, done.stdout.splitlines())}
    assert tools == {"own": "unit converter", "flag": "Use Requests", "none": "use requests"}


def test_a_jsonl_line_with_bad_tools_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "replies.jsonl").write_text(json.dumps({"text": "x", "tools": "unit converter"}) + "\n")
    done = react_text("parse", "replies.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and "replies.jsonl:1: not a reply line" in done.stderr


def test_tools_given_to_compare_reach_rows_without_their_own(tmp_path: Path) -> None:
    case = ("ACTION: I will use unit converter[5 km]", {"kind": "action", "tool": "unit converter", "input": "5 km"})
    (tmp_path / "mine.jsonl").write_text(rows(case))
    without = board(react_text("parse", "--corpus", "mine.jsonl", "--no-peers", cwd=tmp_path).stdout)["all cases"]
    told = board(
        react_text("parse", "--corpus", "mine.jsonl", "--no-peers", "--tools", "unit converter", cwd=tmp_path).stdout
    )
    assert (without["tolerant"], told["all cases"]["tolerant"]) == ("0/1", "1/1")


# --- the peers ----------------------------------------------------------------------------------------


def test_peers_that_are_absent_are_shown_with_their_pip_command(tmp_path: Path) -> None:
    blocked = tmp_path / "blocked"
    for package in ("langchain_classic", "llama_index", "smolagents", "crewai"):
        (blocked / package).mkdir(parents=True)
        (blocked / package / "__init__.py").write_text("raise ImportError('not installed, for the test')\n")
    done = react_text("parse", "--compare", cwd=tmp_path, path=(blocked,))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].split() == ["naive", "strict", "tolerant"]
    for peer in peers.PEERS:
        assert f"  {peer.name:<11} not installed: pip install {peer.distribution}\n" in done.stdout


def test_no_peers_says_they_were_not_scored(tmp_path: Path) -> None:
    (tmp_path / "mine.jsonl").write_text(MINE)
    done = react_text("parse", "--corpus", "mine.jsonl", "--no-peers", cwd=tmp_path)
    assert done.stdout.splitlines()[0].split() == ["naive", "strict", "tolerant"]
    assert f"peers not scored (--no-peers): {', '.join(PEER_NAMES)}" in done.stdout


def test_the_core_imports_no_peer() -> None:
    names = {
        "langchain_classic",
        "langchain_core",
        "llama_index",
        "smolagents",
        "crewai",
        "react_text.evaluation.peers",
    }
    code = (
        "import sys, react_text, react_text.cli.main, react_text.evaluation.corpus;"
        f"print(sorted(m for m in sys.modules if m in {names!r} or m.split('.')[0] in {names!r}))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout.strip() == "[]"


# Hand-written readings of each peer's own dialect, from its documentation and source: the oracle is
# what the peer's agent does with the reply, not what react_text.evaluation.peers computes.
PEER_READINGS = {
    "lc-react": [
        ("Thought: x\nAction: search\nAction Input: cats", ACTION | {"tool": "search"}),
        # its agent stops the model at "\nObservation": the invented rest never reaches the parser
        (
            "Thought: x\nAction: search\nAction Input: cats\nObservation: 3\nFinal Answer: 3",
            ACTION | {"tool": "search"},
        ),
        ("Thought: done\nFinal Answer: 42", {"kind": "final", "answer": "42"}),
        ("Final Answer: 4\n\nAction: search\nAction Input: cats", {"kind": "error"}),  # both: it refuses
        ("just prose", {"kind": "error"}),
    ],
    "lc-mrkl": [
        ('Action: search\nAction Input: "cats"', ACTION | {"tool": "search"}),
        (
            "Final Answer: 4\n\nAction: search\nAction Input: cats",
            {"kind": "final", "answer": "4"},
        ),  # answer first wins
        ("Action: search", {"kind": "error"}),
    ],
    "llamaindex": [
        (
            'Thought: x\nAction: add\nAction Input: {"a": 1, "b": 2}',
            {"kind": "action", "tool": "add", "input": '{"a": 1, "b": 2}'},
        ),
        ("Thought: done\nAnswer: 4", {"kind": "final", "answer": "4"}),
        ("it is four", {"kind": "final", "answer": "it is four"}),  # no labels: the reply is the answer
        ("Thought: x\nAction: search\nAction Input: cats", {"kind": "error"}),  # the input must be JSON
        ("", {"kind": "error"}),
    ],
    "smolagents": [
        (
            'Action:\n{"name": "search", "arguments": {"q": "cats"}}',
            {"kind": "action", "tool": "search", "input": '{"q": "cats"}'},
        ),
        ('{"name": "final_answer", "arguments": {"answer": "42"}}', {"kind": "final", "answer": "42"}),
        ('{"name": "final_answer", "arguments": "done"}', {"kind": "final", "answer": "done"}),
        (
            'Action: {"name": "s", "arguments": "x"}\nObservation: {"name": "final_answer", "arguments": "1"}',
            {"kind": "action", "tool": "s", "input": "x"},
        ),
        ('{"action": "search", "action_input": "cats"}', {"kind": "error"}),  # no "name" key
        ("no blob here", {"kind": "error"}),
    ],
    "crewai": [
        (
            'Thought: x\nAction: search\nAction Input: {"q": "cats"}',
            {"kind": "action", "tool": "search", "input": '{"q": "cats"}'},
        ),
        ("Thought: x\nAction: **search**\nAction Input: cats", ACTION | {"tool": "search"}),
        ("Thought: done\nFinal Answer: 4", {"kind": "final", "answer": "4"}),
        (
            "Thought: x\nAction: search\nAction Input: cats\nObservation: 3\nFinal Answer: 3",
            ACTION | {"tool": "search"},
        ),
        ("Thought: hmm", {"kind": "error"}),
    ],
}
MODULES = {"lc-react": "langchain_classic", "lc-mrkl": "langchain_classic", "llamaindex": "llama_index.core"}


@pytest.mark.peers
@pytest.mark.parametrize("peer", peers.PEERS, ids=PEER_NAMES)
def test_each_peer_reads_its_own_dialect_as_its_agent_does(peer: peers.Peer) -> None:
    pytest.importorskip(MODULES.get(peer.name, peer.name), reason=f"{peer.name} is not installed ({peer.install})")
    parse = peer.parser()
    cases = [Case(str(i), "own", "", "chat", text, want) for i, (text, want) in enumerate(PEER_READINGS[peer.name])]
    (result,) = score(cases, {peer.name: parse})
    assert result.wrong == [], [(case.text, got) for case, got in result.wrong]


@pytest.mark.peers
def test_installed_peers_are_scored_on_the_corpus(tmp_path: Path) -> None:
    present = []
    for peer in peers.PEERS:
        try:
            peer.load()
        except ImportError:
            continue
        present.append(peer.name)
    if not present:
        pytest.skip(f"no peer is installed (pip install 'react-text[peers]'): {', '.join(PEER_NAMES)}")
    done = react_text("parse", "--compare", cwd=tmp_path)
    cells = board(done.stdout)["all cases"]
    total = len(load(CORPUS)) + len(load(FAMILIES))  # the default scoreboard: the replies and the families
    for name in present:
        right = int(cells[name].split("/")[0])
        assert cells[name].endswith(f"/{total}") and 0 < right < total
