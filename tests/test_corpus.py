"""The scoreboard: parsers compared on the corpus, and `react-text parse --compare`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from react_text.corpus import Case, agrees, load, score, scoreboard
from react_text.parser import PARSERS

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "replies.jsonl"


def test_score_counts_right_and_wrong_per_category() -> None:
    cases = [
        Case("a", "canonical", "x", "chat", "ACTION: lookup[x]", {"kind": "action", "tool": "lookup", "input": "x"}),
        Case("b", "markdown", "x", "chat", "**Action:** lookup[x]", {"kind": "action", "tool": "lookup", "input": "x"}),
        Case("c", "completion", "x", "completion", " hmm\nFINAL: 3", {"kind": "final", "answer": "3"}),
    ]
    naive, strict, tolerant = score(cases, PARSERS)
    assert (naive.right, strict.right, tolerant.right) == (2, 2, 3)
    assert strict.by_category == {"canonical": [1, 1], "markdown": [0, 1], "completion": [1, 1]}
    assert [case.id for case, _ in strict.wrong] == ["b"]
    table = scoreboard([naive, strict, tolerant])
    assert "accuracy" in table
    assert "strict misreads 1:" in table


def test_any_error_reading_agrees_with_an_expected_error() -> None:
    assert agrees({"kind": "error", "reason": "empty"}, {"kind": "error", "reason": "no_directive"})
    assert not agrees({"kind": "final", "answer": "1"}, {"kind": "error", "reason": "no_directive"})


def test_the_tolerant_parser_beats_the_baselines_on_the_corpus() -> None:
    naive, strict, tolerant = score(load(CORPUS), PARSERS)
    assert tolerant.right == tolerant.total == 212
    assert naive.accuracy < 0.6
    assert strict.accuracy < 0.6


def test_parse_compare_prints_the_scoreboard() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "parse", "--compare", str(CORPUS)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0
    first = done.stdout.splitlines()[0].split()
    assert first == ["naive", "strict", "tolerant"]
    assert "212/212" in done.stdout


def test_parse_reads_a_file_of_replies(tmp_path: Path) -> None:
    replies = tmp_path / "replies.jsonl"
    replies.write_text(
        json.dumps({"id": "r1", "text": "ACTION: a[b]"}) + "\n" + json.dumps({"id": "r2", "text": "FINAL: 4"}) + "\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "parse", "--parser", "naive", str(replies)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["id"], r["kind"]) for r in rows] == [("r1", "action"), ("r2", "final")]
