"""BFCL in function-calling mode through an OpenAI-compatible endpoint, judged by BFCL's own checker.

    python bench/bfcl_endpoint.py [--per-category N] [--url URL] [--model NAME] [--script] [--json FILE]

For each of the Berkeley Function Calling Leaderboard's categories simple (simple_python),
multiple, parallel and parallel_multiple, the first N entries (20 by default) are sent as OpenAI
chat.completions requests through the real `openai` client, as BFCL's own OpenAI FC handler sends
them: the entry's first turn as the messages, its functions as `tools=` (the language hint added
to each description and the types made OpenAPI's, dots in names made underscores:
`openai_tools`, a copy of BFCL's `convert_to_tool` for OpenAI), temperature 0.001. The
`tool_calls` that come back go to BFCL's `ast_checker` (read from the bfcl-eval wheel, as
tests/test_serve_bfcl.py does), told that dots were made underscores, as for OpenAI's models.

Without --url the endpoint is react-text's own (`react_text.serving.app`) on 127.0.0.1 in this
process, over the embedded model (LocalModel; wrap the command in
`flock /tmp/react-text-llama.lock`). --url points at any running OpenAI-compatible endpoint, e.g.
`react-text serve --base-url ...` in front of a real server. --script plays a scripted upstream
that writes each entry's ground truth in the text protocol (the plumbing, no model).

Prints per category: right, total, accuracy, the replies the endpoint could not read
(`x-react-text-unread`), the requests that failed, and the median seconds per request.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import statistics
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import bfcl

CATEGORIES = {"simple": "simple_python", "multiple": "multiple", "parallel": "parallel"}
CATEGORIES["parallel_multiple"] = "parallel_multiple"
CHECKED_AS = "react-text-fc"  # the model name the checker is given (its config: dots made underscores)
TEMPERATURE = 0.001  # BFCL's default for every handler
HINT = " Note that the provided function is in Python 3 syntax."  # BFCL's, for its Python categories

# BFCL's GORILLA_TO_OPENAPI (bfcl_eval/constants/type_mappings.py), the types its OpenAI tools use
OPENAPI = {
    "integer": "integer", "number": "number", "float": "number", "string": "string", "boolean": "boolean",
    "bool": "boolean", "array": "array", "list": "array", "dict": "object", "object": "object",
    "tuple": "array", "any": "string", "byte": "integer", "short": "integer", "long": "integer",
    "double": "number", "char": "string", "ArrayList": "array", "Array": "array", "HashMap": "object",
    "Hashtable": "object", "Queue": "array", "Stack": "array", "Any": "string", "String": "string",
    "Bigint": "integer",
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Case:
    category: str  # simple, multiple, parallel, parallel_multiple
    entry: dict[str, Any]  # BFCL's entry: id, question, function
    truth: list[dict[str, Any]]  # its possible answers


@dataclass(frozen=True, slots=True)
class Result:
    id: str
    category: str
    right: bool
    unread: str  # the endpoint's x-react-text-unread ("" when the reply was read)
    failed: str  # the request's error ("" when it was answered)
    error: str  # the checker's word when not right
    seconds: float
    calls: list[dict[str, Any]]


def cases(source: Path, per_category: int) -> list[Case]:
    """The first `per_category` entries of each category, with their possible answers."""
    found = []
    for category, name in CATEGORIES.items():
        answers = {e["id"]: e["ground_truth"] for e in bfcl._lines(source, f"possible_answer/BFCL_v4_{name}.json")}
        for number, entry in enumerate(bfcl._lines(source, f"BFCL_v4_{name}.json")):
            if number >= per_category:
                break
            hinted = copy.deepcopy(entry)  # BFCL adds the hint when it loads the entries
            for function in hinted["function"]:
                function["description"] = function.get("description", "") + HINT
            found.append(Case(category, hinted, answers[entry["id"]]))
    return found


def _openapi_types(properties: dict[str, Any]) -> dict[str, Any]:
    """BFCL's `_cast_to_openai_type` (bfcl_eval/model_handler/utils.py), step for step."""
    for key, value in properties.items():
        if "type" not in value:
            value["type"] = "string"
        else:
            kind = value["type"]
            if kind == "float":
                value["format"] = "float"
                value["description"] = value.get("description", "") + " This is a float type value."
            value["type"] = OPENAPI.get(kind, "string")
        if value["type"] in ("array", "object"):
            if "properties" in value:
                value["properties"] = _openapi_types(value["properties"])
            elif "items" in value:
                items = value["items"]
                items["type"] = OPENAPI[items["type"]]
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = OPENAPI[items["items"]["type"]]
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _openapi_types(items["properties"])
        properties[key] = value
    return properties


def openai_tools(functions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """BFCL's `convert_to_tool(functions, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)`."""
    tools = []
    for function in copy.deepcopy(functions):
        function["name"] = function["name"].replace(".", "_")
        function["parameters"]["type"] = "object"
        function["parameters"]["properties"] = _openapi_types(function["parameters"]["properties"])
        tools.append({"type": "function", "function": function})
    return tools


def checker(source: Path) -> Callable[[Case, list[dict[str, Any]]], dict[str, Any]]:
    """BFCL's ast_checker from the wheel, for Python, the model's names having dots made underscores.
    Its `constants.model_config` (which imports every handler's SDK) is stood in for, as in
    tests/test_serve_bfcl.py; a stand-in already there gets this model's config added."""
    config = sys.modules.setdefault("bfcl_eval.constants.model_config", types.ModuleType("model_config"))
    if not hasattr(config, "MODEL_CONFIG_MAPPING"):
        config.MODEL_CONFIG_MAPPING = {}  # type: ignore[attr-defined]
    config.MODEL_CONFIG_MAPPING[CHECKED_AS] = types.SimpleNamespace(underscore_to_dot=True)  # type: ignore[attr-defined]
    sys.path.insert(0, str(source))
    try:
        from bfcl_eval.constants.enums import Language
        from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    finally:
        sys.path.remove(str(source))

    def judge(case: Case, calls: list[dict[str, Any]]) -> dict[str, Any]:
        name = CATEGORIES[case.category]
        judged: dict[str, Any] = ast_checker(
            case.entry["function"], calls, case.truth, Language.PYTHON, name, CHECKED_AS
        )
        return judged

    return judge


def ask(client: Any, model: str, case: Case, judge: Callable[..., dict[str, Any]]) -> Result:
    """One entry as BFCL's OpenAI FC handler sends it; its tool_calls judged."""
    import openai

    started = time.perf_counter()
    unread = failed = error = ""
    calls: list[dict[str, Any]] = []
    try:
        raw = client.chat.completions.with_raw_response.create(
            model=model,
            messages=case.entry["question"][0],
            tools=openai_tools(case.entry["function"]),
            temperature=TEMPERATURE,
        )
        unread = raw.headers.get("x-react-text-unread", "")
        made = raw.parse()
    except openai.APIError as exc:
        failed = f"{type(exc).__name__}: {exc}"[:300]
    seconds = time.perf_counter() - started
    if not failed:
        for call in made.choices[0].message.tool_calls or []:
            try:
                calls.append({call.function.name: json.loads(call.function.arguments)})
            except json.JSONDecodeError:
                error = f"arguments not JSON: {call.function.arguments[:200]}"
    right = False
    if not failed and not error:
        judged = judge(case, calls)
        right, error = bool(judged["valid"]), "" if judged["valid"] else str(judged.get("error", ""))[:300]
    return Result(case.entry["id"], case.category, right, unread, failed, error or failed, seconds, calls)


def written(truth: list[dict[str, Any]]) -> str:
    """The reply of a model that knows the answer: one ACTION line a call, the first acceptable values."""
    from react_text.parser import render_action

    lines = ["THOUGHT: I will make the calls."]
    for call in truth:
        ((name, answers),) = call.items()
        arguments = {k: bfcl.choose(v) for k, v in answers.items() if v and v[0] != ""}
        lines.append(render_action(name.replace(".", "_"), json.dumps(arguments, ensure_ascii=False)))
    return "\n".join(lines)


@dataclass
class GroundTruth:
    """A scripted upstream that writes the current entry's ground truth, however often it is asked."""

    text: str = ""
    api: str = "chat"
    name: str = "ground-truth"
    accepts_grammar: bool = False

    def generate(self, request: Any) -> Any:
        from react_text.core.types import Reply, Usage

        return Reply(self.text, Usage(0, 0), "stop")

    async def agenerate(self, request: Any) -> Any:
        return self.generate(request)


@contextlib.contextmanager
def serving(upstream: Any) -> Iterator[str]:
    """react-text's endpoint over `upstream` (None: the embedded model) on 127.0.0.1, a free port."""
    import uvicorn

    from react_text.serving import app

    server = uvicorn.Server(
        uvicorn.Config(app(upstream), host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the endpoint did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def run(url: str, model: str, chosen: list[Case], judge: Callable[..., dict[str, Any]], script: GroundTruth | None = None,
        timeout: float = 600, progress: bool = False) -> list[Result]:  # fmt: skip
    import httpx
    import openai

    results = []
    with httpx.Client(timeout=timeout) as http:
        client = openai.OpenAI(base_url=url, api_key="-", max_retries=0, http_client=http)
        for case in chosen:
            if script is not None:
                script.text = written(case.truth)
            results.append(ask(client, model, case, judge))
            if progress:
                r = results[-1]
                mark = "right" if r.right else f"wrong ({r.unread or r.error[:80]})"
                print(f"{r.id}: {mark} {r.seconds:.1f} s", file=sys.stderr, flush=True)
    return results


def table(results: list[Result]) -> str:
    rows = [
        "| category | right | total | accuracy | unread | failed | median s/request |",
        "|---|---|---|---|---|---|---|",
    ]
    for category in [*CATEGORIES, "all"]:
        some = [r for r in results if category in ("all", r.category)]
        if not some:
            continue
        right = sum(r.right for r in some)
        unread = sum(bool(r.unread) for r in some)
        failed = sum(bool(r.failed) for r in some)
        median = statistics.median(r.seconds for r in some)
        rows.append(
            f"| {category} | {right} | {len(some)} | {right / len(some):.0%} | {unread} | {failed} | {median:.2f} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> list[Result]:
    command = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    command.add_argument("--per-category", type=int, default=20, help="the first N entries of each category")
    command.add_argument("--url", help="a running OpenAI-compatible endpoint (default: react-text's, in process)")
    command.add_argument("--model", default="react-text", help="the model named in each request")
    command.add_argument("--script", action="store_true", help="a scripted upstream writing the ground truth")
    command.add_argument("--json", type=Path, help="write the results and every reply's calls to FILE")
    args = command.parse_args(argv)
    source = bfcl.data_path() or bfcl.fetch()
    chosen = cases(source, args.per_category)
    judge = checker(source)
    started = time.perf_counter()
    script = GroundTruth() if args.script else None
    if args.url:
        results = run(args.url, args.model, chosen, judge, progress=True)
    else:
        with serving(script) as url:  # None: the embedded model, loaded now
            results = run(url, args.model, chosen, judge, script, progress=True)
    where = args.url or (
        "react-text serve over a scripted ground truth" if args.script else "react-text serve, embedded model"
    )
    print(
        f"\nBFCL ({source.name}) in FC mode through {where}, {len(results)} requests in {time.perf_counter() - started:.0f} s\n"
    )
    print(table(results))
    if args.json:
        args.json.write_text(
            json.dumps(
                {"endpoint": where, "table": table(results), "results": [asdict(r) for r in results]},
                indent=1,
                ensure_ascii=False,
            )
        )
    return results


if __name__ == "__main__":
    main()
