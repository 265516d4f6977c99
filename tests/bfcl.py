"""Binding held against calls nobody here wrote: the Berkeley Function Calling Leaderboard's ground truth.

The data ships inside the `bfcl-eval` wheel on PyPI (it is never committed here): `data_path()`
finds it ($REACT_TEXT_BFCL, a wheel or an unpacked directory, else ~/.cache/react-text/bfcl) and
`fetch()` downloads the pinned wheel there with `pip download --no-deps`.

Each function a ground-truth call names is served by a real MCP server (tests/mcp_servers/echo.py)
under its parameter schema, made JSON Schema as BFCL's own OpenAI conversion makes it ("dict" is
"object", "float" is "number", "tuple" is "array"; "any" takes any value). The server answers with
the JSON arguments it received. Each call is written as a model would write it:

    json            fn[{"base": 10, "height": 5}]
    keywords        fn[base=10, height=5, flag=True]         Python literals
    json_keywords   fn[flag=true, note=null]                  only calls holding true, false or null
    positional      fn[10, 5]                                 only calls whose arguments lead the list

and run through the public API: an `Agent` with a `ScriptedModel` whose first reply is
`ACTION: <the call>`, so the parser, the binder and `react_text.tools.mcp` all take part. A call binds
exactly when the server received every argument the model wrote with an acceptable value and
nothing else. The value written for an argument is the first BFCL accepts; an argument whose first
acceptable value is "" (BFCL's "may be left out") is left out, as a model would.

Some ground truths contradict their own schema (a string for an integer, a name the schema does
not have): those are checked against the schema with `jsonschema`, an oracle independent of the
binder, and counted apart (`Outcome.contradicts`).
"""

from __future__ import annotations

import collections
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import typing
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VERSION = "2026.3.23"  # the bfcl-eval release the README's table was measured on
CATEGORIES = ("simple_python", "multiple", "parallel", "parallel_multiple")
FORMS = ("json", "keywords", "json_keywords", "positional")
ECHO = Path(__file__).resolve().parent / "mcp_servers" / "echo.py"
RECEIVED = "RECEIVED "  # the echo server's answer: this, then the JSON arguments

_TYPES = {"dict": "object", "float": "number", "tuple": "array", "list": "array", "bool": "boolean"}


def cache_dir() -> Path:
    return Path.home() / ".cache" / "react-text" / "bfcl"


def data_path() -> Path | None:
    """The bfcl-eval wheel (or an unpacked copy of it), if it is here."""
    given = os.environ.get("REACT_TEXT_BFCL")
    if given:
        return Path(given) if Path(given).exists() else None
    wheels = sorted(cache_dir().glob(f"bfcl_eval-{VERSION}-*.whl"))
    return wheels[-1] if wheels else None


def fetch() -> Path:
    """Download the pinned wheel into the cache (no dependencies: only its data is read)."""
    cache_dir().mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(cache_dir()), f"bfcl-eval=={VERSION}"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    found = data_path()
    if found is None:
        raise FileNotFoundError(f"pip download left no bfcl_eval-{VERSION} wheel in {cache_dir()}")
    return found


def _lines(source: Path, name: str) -> Iterator[dict[str, Any]]:
    member = f"bfcl_eval/data/{name}"
    if source.is_dir():
        text = (source / member).read_text(encoding="utf-8")
    else:
        with zipfile.ZipFile(source) as wheel:
            text = wheel.read(member).decode("utf-8")
    for line in text.splitlines():
        if line.strip():
            yield json.loads(line)


# --- the cases ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Case:
    """One ground-truth call: the tool it names, what the model writes, what BFCL accepts."""

    id: str  # "parallel_12#1": the entry, then the call's place in it
    category: str
    tool: str  # the served name (a suffix tells apart two schemas of one BFCL name)
    schema: dict[str, Any]  # the tool's JSON Schema
    written: dict[str, Any]  # the arguments the model writes
    acceptable: dict[str, list[Any]]  # BFCL's possible answers, per argument


def json_schema(bfcl: object) -> object:
    """BFCL's parameter schema as JSON Schema, as its OpenAI conversion does it ("any": any value)."""
    if isinstance(bfcl, list):
        return [json_schema(item) for item in bfcl]
    if not isinstance(bfcl, dict):
        return bfcl
    made = {key: json_schema(value) for key, value in bfcl.items() if key != "properties"}
    if isinstance(bfcl.get("properties"), dict):
        made["properties"] = {name: json_schema(sub) for name, sub in bfcl["properties"].items()}
    kind = bfcl.get("type")
    if kind == "any":
        del made["type"]
    elif isinstance(kind, str):
        made["type"] = _TYPES.get(kind, kind)
    return made


def choose(acceptable: Sequence[Any]) -> Any:
    """The value a model writes: the first BFCL accepts (a nested object's members chosen the same way)."""
    return _chosen(acceptable[0])


def _chosen(value: Any) -> Any:
    if isinstance(value, dict):  # BFCL writes a nested object as possible answers per member
        return {k: choose(v) for k, v in value.items() if isinstance(v, list) and v and v[0] != ""}
    if isinstance(value, list):
        return [_chosen(v) for v in value]
    return value


def load(source: Path) -> list[Case]:
    """Every ground-truth call of the four Python categories, in file order."""
    cases: list[Case] = []
    served: dict[str, list[str]] = collections.defaultdict(list)  # BFCL name -> schemas seen, in order
    for category in CATEGORIES:
        functions = {e["id"]: e["function"] for e in _lines(source, f"BFCL_v4_{category}.json")}
        for entry in _lines(source, f"possible_answer/BFCL_v4_{category}.json"):
            for place, call in enumerate(entry["ground_truth"]):
                ((name, answers),) = call.items()
                spec = next(f for f in functions[entry["id"]] if f["name"] == name)
                schema = typing.cast(dict[str, Any], json_schema({**spec["parameters"], "type": "object"}))
                key = json.dumps(schema, sort_keys=True)
                if key not in served[name]:
                    served[name].append(key)
                variant = served[name].index(key)
                written = {k: choose(v) for k, v in answers.items() if v and v[0] != ""}
                cases.append(
                    Case(
                        id=f"{entry['id']}#{place}",
                        category=category,
                        tool=name if variant == 0 else f"{name}_{variant + 1}",
                        schema=schema,
                        written=written,
                        acceptable=answers,
                    )
                )
    return cases


def tool_specs(cases: Iterable[Case]) -> list[dict[str, Any]]:
    """What the echo server serves: each tool once."""
    specs: dict[str, dict[str, Any]] = {}
    for case in cases:
        specs.setdefault(case.tool, {"name": case.tool, "inputSchema": case.schema})
    return list(specs.values())


def sample(cases: Sequence[Case], size: int, seed: int = 26) -> list[Case]:
    """A deterministic sample of `size` cases, each category in proportion (at least 10 of each)."""
    by_category: dict[str, list[Case]] = collections.defaultdict(list)
    for case in cases:
        by_category[case.category].append(case)
    rng = random.Random(seed)
    picked: list[Case] = []
    for members in by_category.values():
        share = max(10, round(size * len(members) / len(cases)))
        picked += rng.sample(members, min(share, len(members)))
    return sorted(picked, key=cases.index)


# --- writing a call -------------------------------------------------------------------------------


def python_literal(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a double-quoted Python literal too
    if isinstance(value, list):
        return "[" + ", ".join(python_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _has_json_literal(value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, list):
        return any(_has_json_literal(v) for v in value)
    if isinstance(value, dict):
        return any(_has_json_literal(v) for v in value.values())
    return False


def listed_order(schema: dict[str, Any]) -> list[str]:
    """The parameters in the order the tool list shows them: required first (react_text.tools.mcp's order)."""
    properties = list(schema.get("properties") or {})
    required = [k for k in schema.get("required") or () if isinstance(k, str)]
    return (
        [k for k in properties if k in required]
        + [k for k in required if k not in properties]
        + [k for k in properties if k not in required]
    )


def written_as(case: Case, form: str) -> str | None:
    """The input text of the call in `form`; None where the form does not apply to this call."""
    args = case.written
    if form == "json":
        return json.dumps(args, ensure_ascii=False)
    if form == "keywords":
        return ", ".join(f"{k}={python_literal(v)}" for k, v in args.items())
    if form == "json_keywords":
        if not _has_json_literal(list(args.values())):
            return None
        return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    if form == "positional":
        order = listed_order(case.schema)[: len(args)]
        if sorted(order) != sorted(args):
            return None
        return ", ".join(python_literal(args[k]) for k in order)
    raise ValueError(f"no such form: {form}")


# --- judging what arrived ---------------------------------------------------------------------------


def same(received: Any, wanted: Any) -> bool:
    """JSON equality: numbers by value (5 and 5.0), but a boolean is never a number."""
    if isinstance(received, bool) or isinstance(wanted, bool):
        return type(received) is type(wanted) and received == wanted
    if isinstance(received, int | float) and isinstance(wanted, int | float):
        return float(received) == float(wanted)
    if isinstance(received, list) and isinstance(wanted, list):
        return len(received) == len(wanted) and all(same(r, w) for r, w in zip(received, wanted, strict=True))
    if isinstance(received, dict) and isinstance(wanted, dict):
        return received.keys() == wanted.keys() and all(same(received[k], wanted[k]) for k in wanted)
    return type(received) is type(wanted) and received == wanted


def accepted(received: Any, acceptable: Sequence[Any]) -> bool:
    return any(same(received, _chosen(option)) for option in acceptable if option != "")


def contradiction(case: Case) -> str:
    """Why the ground truth does not fit its own schema, or ""."""
    import jsonschema

    unknown = sorted(set(case.written) - set(case.schema.get("properties") or {}))
    if unknown:
        return f"names no parameter of the schema: {', '.join(unknown)}"
    errors = sorted(jsonschema.Draft202012Validator(case.schema).iter_errors(case.written), key=str)
    if errors:
        error = errors[0]
        where = "/".join(map(str, error.absolute_path)) or "the call"
        return f"{where}: {error.message}"
    return ""


@dataclass(frozen=True, slots=True)
class Outcome:
    case: Case
    form: str
    text: str  # the input as written
    observation: str
    exact: bool
    contradicts: str  # why the ground truth breaks its schema, or ""

    @property
    def kind(self) -> str:
        return "exact" if self.exact else "refused" if not self.observation.startswith(RECEIVED) else "wrong"


def judge(case: Case, form: str, text: str, observation: str, contradicts: str) -> Outcome:
    exact = False
    if observation.startswith(RECEIVED):
        received = json.loads(observation[len(RECEIVED) :]) or {}
        exact = received.keys() == case.written.keys() and all(
            accepted(received[k], case.acceptable[k]) for k in case.written
        )
    return Outcome(case, form, text, observation, exact, contradicts)


# --- running --------------------------------------------------------------------------------------


def run(cases: Sequence[Case], forms: Sequence[str] = FORMS) -> list[Outcome]:
    """Every case in every form that applies, each as one Agent run against one real MCP server."""
    from react_text import Agent, ScriptedModel
    from react_text.tools.mcp import mcp_tools

    with tempfile.TemporaryDirectory() as folder:
        listing = Path(folder) / "tools.json"
        listing.write_text(json.dumps(tool_specs(cases)), encoding="utf-8")
        outcomes: list[Outcome] = []
        with mcp_tools(shlex.join([sys.executable, str(ECHO), str(listing)])) as served:
            by_name = {t.name: t for t in served}
            for case in cases:
                contradicts = contradiction(case)
                for form in forms:
                    text = written_as(case, form)
                    if text is None:
                        continue
                    reply = f"ACTION: {case.tool}[{text}]"
                    result = Agent(ScriptedModel([reply, "FINAL: done"]), tools=[by_name[case.tool]]).run("Call it.")
                    observation = result.steps[0].observation or ""
                    outcomes.append(judge(case, form, text, observation, contradicts))
    return outcomes


def table(outcomes: Sequence[Outcome]) -> str:
    """Exact bindings per form (rows) and category (columns); ground truths that break their schema apart."""
    lines = ["| form | " + " | ".join(CATEGORIES) + " | all | schema broken by the ground truth |"]
    lines.append("|---" * (len(CATEGORIES) + 3) + "|")
    for form in FORMS:
        mine = [o for o in outcomes if o.form == form]
        if not mine:
            continue
        cells = []
        for category in (*CATEGORIES, None):
            fair = [o for o in mine if not o.contradicts and category in (None, o.case.category)]
            right = sum(o.exact for o in fair)
            cells.append(f"{right} / {len(fair)} ({100 * right / max(len(fair), 1):.1f}%)")
        broken = [o for o in mine if o.contradicts]
        cells.append(f"{len(broken)} ({sum(o.kind == 'refused' for o in broken)} refused)")
        lines.append(f"| {form} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
