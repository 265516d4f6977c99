"""bench/bfcl_endpoint.py's plumbing, without a model: its tools are BFCL's own conversion's, and
through the endpoint a scripted upstream that writes BFCL's ground truth scores what the endpoint
lets through, every entry of the four categories judged by BFCL's checker.

What it cannot score is known beforehand, from the data: the four ground truths that break their
own schema (refused, so unread: tests/test_serve_bfcl.py) and the entries of more calls than the
endpoint's default `Limits.actions` (the first calls are kept, so the checker counts too few).
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import os
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import bfcl
import pytest
import serving_support  # noqa: F401  (skips without the serve extra)

from react_text import Limits

_BENCH = Path(__file__).resolve().parent.parent / "bench" / "bfcl_endpoint.py"
_spec = importlib.util.spec_from_file_location("bfcl_endpoint", _BENCH)
assert _spec is not None and _spec.loader is not None
bench = importlib.util.module_from_spec(_spec)
sys.modules["bfcl_endpoint"] = bench
_spec.loader.exec_module(bench)


@pytest.fixture(scope="module")
def bfcl_data() -> Path:
    found = bfcl.data_path()
    if found is not None:
        return found
    try:
        return bfcl.fetch()
    except Exception as exc:  # no network, no pip: say why and skip (CI requires it)
        if os.environ.get("REACT_TEXT_BFCL_REQUIRED"):
            raise
        pytest.skip(f"no bfcl-eval {bfcl.VERSION} data (set REACT_TEXT_BFCL, or let pip reach PyPI): {exc}")


def bfcl_convert_to_tool(source: Path) -> Any:
    """BFCL's own `convert_to_tool` for OpenAI: its two functions' source, read from the wheel and
    run alone (the module around them imports parsers and SDKs the conversion does not use)."""
    member = "bfcl_eval/model_handler/utils.py"
    if source.is_dir():
        text = (source / member).read_text(encoding="utf-8")
    else:
        with zipfile.ZipFile(source) as wheel:
            text = wheel.read(member).decode("utf-8")
    wanted = {"_cast_to_openai_type", "convert_to_tool"}
    functions = [node for node in ast.parse(text).body if isinstance(node, ast.FunctionDef) and node.name in wanted]
    assert {f.name for f in functions} == wanted
    sys.path.insert(0, str(source))
    try:
        from bfcl_eval.constants.enums import ModelStyle
        from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
    finally:
        sys.path.remove(str(source))
    space: dict[str, Any] = {"copy": copy, "re": re, "ModelStyle": ModelStyle, "GORILLA_TO_OPENAPI": GORILLA_TO_OPENAPI}
    exec(compile(ast.Module(body=functions, type_ignores=[]), member, "exec"), space)
    return lambda functions: space["convert_to_tool"](functions, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)


def test_the_tools_sent_are_the_ones_bfcls_openai_handler_makes(bfcl_data: Path) -> None:
    convert = bfcl_convert_to_tool(bfcl_data)
    every = bench.cases(bfcl_data, 10_000)
    assert len(every) == 1000
    for case in every:
        assert bench.openai_tools(case.entry["function"]) == convert(case.entry["function"]), case.entry["id"]
    dotted = [c for c in every if any("." in f["name"] for f in c.entry["function"])]
    assert dotted  # the checker is told names had dots made underscores: some do
    assert all(f["description"].endswith(bench.HINT) for c in every for f in c.entry["function"])


def test_a_scripted_ground_truth_scores_all_but_what_the_endpoint_cannot_pass(bfcl_data: Path) -> None:
    every = bench.cases(bfcl_data, 10_000)
    judge = bench.checker(bfcl_data)
    script = bench.GroundTruth()
    with bench.serving(script) as url:
        results = bench.run(url, "scripted", every, judge, script)
    assert [r.id for r in results] == [c.entry["id"] for c in every]
    broken = {"simple_python_200", "parallel_multiple_21", "parallel_multiple_26", "parallel_multiple_94"}
    many = {c.entry["id"] for c in every if len(c.truth) > Limits().actions}
    assert len(many) == 4
    assert {r.id for r in results if r.unread} == broken
    assert {r.id for r in results if not r.right} == broken | many
    assert all(len(r.calls) == Limits().actions for r in results if r.id in many)
    assert not any(r.failed for r in results)
    table = bench.table(results)
    assert "| simple | 399 | 400 | 100% | 1 | 0 |" in table
    assert "| parallel | 197 | 200 | 98% | 0 | 0 |" in table
    assert "| all | 992 | 1000 | 99% | 4 | 0 |" in table


def test_the_command_prints_the_table_and_saves_it(
    bfcl_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "bfcl.json"
    results = bench.main(["--script", "--per-category", "3", "--json", str(saved)])
    assert [r.category for r in results] == [c for c in bench.CATEGORIES for _ in range(3)]
    printed = capsys.readouterr().out
    for category in bench.CATEGORIES:
        assert f"| {category} | 3 | 3 | 100% | 0 | 0 |" in printed
    assert '"id": "parallel_multiple_2"' in saved.read_text(encoding="utf-8")
