"""A round trip without loss, judged by the Berkeley Function Calling Leaderboard's own checker.

For every entry of BFCL's four Python categories (simple, multiple, parallel, parallel_multiple),
the request carries the entry's functions as tools (their schemas made JSON Schema as BFCL's
OpenAI conversion makes them, `bfcl.json_schema`), a scripted upstream writes the ground-truth
calls in the text protocol (one ACTION line a call, its input the arguments' JSON), and the
`tool_calls` that come back, decoded, go to BFCL's `ast_checker` with the entry's own function
descriptions and possible answers. Every entry must be accepted, but for the four whose ground
truth breaks its own schema (a required argument left out, a name the schema does not have, a
string for an array of numbers: `bfcl.contradiction`, judged by `jsonschema`): those must be
refused (asked again, then answered with why), never sent on as calls that break the schema.

The checker is BFCL's code, read from the bfcl-eval wheel (tests/bfcl.py finds or fetches it).
One module of the wheel is stood in for: `constants.model_config`, which imports every model
handler of the leaderboard (and their SDKs) only so that the checker can ask whether a model's
function names had their dots made underscores; the stand-in says no, as names are sent here as
written.
"""

from __future__ import annotations

import json
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bfcl
import httpx
import openai
import pytest
from serving_support import serving  # skips without the serve extra

from react_text import Limits, ScriptedModel
from react_text.parser import render_action
from react_text.serving import app


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


def bfcl_checker(source: Path) -> tuple[Callable[..., dict[str, Any]], Any]:
    """BFCL's ast_checker and its Language enum, imported from the wheel (or its unpacked copy)."""
    sys.path.insert(0, str(source))
    config = sys.modules.setdefault("bfcl_eval.constants.model_config", types.ModuleType("model_config"))
    if not hasattr(config, "MODEL_CONFIG_MAPPING"):  # a stand-in already there (another test's) is added to
        config.MODEL_CONFIG_MAPPING = {}  # type: ignore[attr-defined]
    config.MODEL_CONFIG_MAPPING["react-text"] = types.SimpleNamespace(underscore_to_dot=False)  # type: ignore[attr-defined]
    try:
        from bfcl_eval.constants.enums import Language
        from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    finally:
        sys.path.remove(str(source))
    return ast_checker, Language


def entries(source: Path) -> list[tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    """(category, entry, ground truth) for every entry of the four Python categories."""
    found = []
    for category in bfcl.CATEGORIES:
        answers = {e["id"]: e["ground_truth"] for e in bfcl._lines(source, f"possible_answer/BFCL_v4_{category}.json")}
        for entry in bfcl._lines(source, f"BFCL_v4_{category}.json"):
            found.append((category, entry, answers[entry["id"]]))
    return found


def tools_of(entry: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": f["name"],
                "description": f.get("description", ""),
                "parameters": bfcl.json_schema({**f["parameters"], "type": "object"}),
            },
        }
        for f in entry["function"]
    ]


def written(ground_truth: list[dict[str, Any]]) -> str:
    """The reply a model writes for the ground truth: one ACTION a call, the first acceptable values."""
    lines = ["THOUGHT: I will make the calls."]
    for call in ground_truth:
        ((name, answers),) = call.items()
        arguments = {k: bfcl.choose(v) for k, v in answers.items() if v and v[0] != ""}
        lines.append(render_action(name, json.dumps(arguments, ensure_ascii=False)))
    return "\n".join(lines)


def contradicts(entry: dict[str, Any], ground_truth: list[dict[str, Any]]) -> bool:
    """Whether a call of the ground truth breaks its function's own schema (jsonschema says)."""
    for call in ground_truth:
        ((name, answers),) = call.items()
        spec = next(f for f in entry["function"] if f["name"] == name)
        schema = bfcl.json_schema({**spec["parameters"], "type": "object"})
        arguments = {k: bfcl.choose(v) for k, v in answers.items() if v and v[0] != ""}
        if bfcl.contradiction(bfcl.Case(entry["id"], "", name, schema, arguments, answers)):  # type: ignore[arg-type]
            return True
    return False


def test_every_bfcl_ground_truth_comes_back_as_tool_calls_that_bfcls_checker_accepts(bfcl_data: Path) -> None:
    pytest.importorskip("jsonschema", reason="the oracle of a ground truth that breaks its schema")
    ast_checker, language = bfcl_checker(bfcl_data)
    cases = entries(bfcl_data)
    broken = {entry["id"] for _, entry, truth in cases if contradicts(entry, truth)}
    tries = Limits().format_errors  # a refused reply is asked again, as often as the loop would
    model = ScriptedModel([written(truth) for _, e, truth in cases for _ in range(tries if e["id"] in broken else 1)])
    refused: list[str] = []
    unread: list[str] = []
    counts: dict[str, int] = dict.fromkeys(bfcl.CATEGORIES, 0)
    with serving(app(model, limits=Limits(actions=32))) as url:
        http = httpx.Client(timeout=60)
        client = openai.OpenAI(base_url=url, api_key="-", max_retries=0, http_client=http)
        for category, entry, truth in cases:
            made = client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": f"Make the calls of {entry['id']}."}],
                tools=tools_of(entry),
            )
            counts[category] += 1
            if made.react_text.get("unread"):  # type: ignore[attr-defined]
                unread.append(entry["id"])
                continue
            calls = made.choices[0].message.tool_calls or []
            output = [{c.function.name: json.loads(c.function.arguments)} for c in calls]
            judged = ast_checker(entry["function"], output, truth, language.PYTHON, category, "react-text")
            if not judged["valid"]:
                refused.append(f"{entry['id']}: {judged['error']} {output}")
        http.close()
    model.assert_all_used()
    assert counts == {"simple_python": 400, "multiple": 200, "parallel": 200, "parallel_multiple": 200}
    assert refused == []
    assert sorted(unread) == sorted(broken) and len(broken) == 4
