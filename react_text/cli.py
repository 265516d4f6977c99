"""The `react-text` command: argument parsing and printing, no logic of its own.

react-text run "What is 17 * 23 + 5?"                  the embedded local model
react-text run --model gpt-4o-mini "..."                any OpenAI-compatible server
echo 'ACTION: add[2, 3]' | react-text parse             one reply's parse, as JSON
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from . import parser as parsing
from .errors import ModelError, ReactTextError
from .types import Action, Final, Parsed, ParseError, RunResult, Step

EXAMPLES_RUN = """examples:
  react-text run "What is 17 * 23 + 5?"
  react-text run --model gpt-4o-mini "What is 2 ** 20?"          (OPENAI_API_KEY set)
  react-text run --base-url http://127.0.0.1:8080/v1 --model local --api completion "..."
  react-text run --tools mytools --json "..."                    (functions in mytools.py)
"""
EXAMPLES_EVAL = """examples:
  react-text eval bench/tasks/suite.jsonl                         (the embedded model)
  react-text eval bench/tasks/suite.jsonl --zero-shot --no-grammar --out results.jsonl
  react-text eval tasks.jsonl --base-url http://127.0.0.1:8080/v1 --model local --concurrency 8
"""
EXAMPLES_PARSE = """examples:
  echo 'THOUGHT: x\\nACTION: add[2, 3]' | react-text parse
  react-text parse --strict < reply.txt
"""


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments().parse_args(argv)
    try:
        code: int = args.handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except ReactTextError as exc:
        print(f"react-text: {exc}", file=sys.stderr)
        return 2
    return code


def _arguments() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="react-text", description="ReAct agents over a plain-text protocol.")
    commands = top.add_subparsers(required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="run an agent on a task",
        description="Run an agent on TASK and print each step as it happens.",
        epilog=EXAMPLES_RUN,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("task", metavar="TASK")
    _model_flags(run)
    run.add_argument("--max-steps", type=_positive, default=8, help="model calls allowed (default 8)")
    run.add_argument("--max-tokens", type=_positive, default=None, help="tokens allowed over the whole run")
    run.add_argument("--reply-tokens", type=_positive, default=256, help="reply allowance per call (default 256)")
    run.add_argument("--instructions-in", choices=["system", "user"], default="system")
    run.add_argument("--zero-shot", action="store_true", help="leave the worked example out of the prompt")
    run.add_argument("--no-grammar", action="store_true", help="do not constrain decoding to the protocol")
    run.add_argument("--tools", metavar="MODULE", help="add the public functions of a Python module as tools")
    run.add_argument("--root", metavar="DIR", help="add the search and read tools over the files under DIR")
    run.add_argument("--json", action="store_true", help="print the whole RunResult as one JSON document")
    run.set_defaults(handler=_run)

    evaluate = commands.add_parser(
        "eval",
        help="run a file of tasks and score the answers",
        description="Run every task of TASKS (JSON Lines: id, task, answer, tools) and print a results table.",
        epilog=EXAMPLES_EVAL,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    evaluate.add_argument("tasks", metavar="TASKS", help="a .jsonl file of tasks")
    _model_flags(evaluate)
    evaluate.add_argument("--max-steps", type=_positive, default=6, help="model calls allowed a task (default 6)")
    evaluate.add_argument("--max-tokens", type=_positive, default=None, help="tokens allowed a task")
    evaluate.add_argument("--reply-tokens", type=_positive, default=128, help="reply allowance per call")
    evaluate.add_argument("--zero-shot", action="store_true", help="leave the worked example out")
    evaluate.add_argument("--no-grammar", action="store_true", help="do not constrain decoding")
    evaluate.add_argument("--root", metavar="DIR", help="folder for the file tools (default: docs/ beside TASKS)")
    evaluate.add_argument("--concurrency", type=_positive, default=4, help="tasks at once against a server (default 4)")
    evaluate.add_argument("--out", metavar="FILE", help="write one JSON line of results per task to FILE")
    evaluate.set_defaults(handler=_eval)

    parse = commands.add_parser(
        "parse",
        help="parse one model reply from stdin",
        description="Read one model reply on stdin (or FILE) and print how it parses, as JSON.",
        epilog=EXAMPLES_PARSE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parse.add_argument("file", nargs="?", metavar="FILE", help="read the reply from FILE instead of stdin")
    parse.add_argument("--strict", action="store_true", help="accept only the canonical form")
    parse.set_defaults(handler=_parse)
    return top


def _model_flags(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--model",
        default=os.environ.get("REACT_TEXT_MODEL"),
        help="model name on an OpenAI-compatible server, or a .gguf file to run in-process "
        "(default: the embedded SmolLM2-135M-Instruct)",
    )
    command.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"), help="server URL (OPENAI_BASE_URL)")
    command.add_argument("--api", choices=["chat", "completion"], help="chat messages or a completion transcript")
    command.add_argument("--stream", action="store_true", help="stream replies from a server")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text}")
    return value


# --- parse ----------------------------------------------------------------------------------------


def _parse(args: argparse.Namespace) -> int:
    if args.file:
        with open(args.file, encoding="utf-8") as handle:
            text = handle.read()
    else:
        text = sys.stdin.read()
    parsed = parsing.parse(text, strict=args.strict)
    print(json.dumps(parsed_dict(parsed), ensure_ascii=False, indent=2))
    return 1 if isinstance(parsed, ParseError) else 0


def parsed_dict(parsed: Parsed) -> dict[str, Any]:
    kind = {Action: "action", Final: "final", ParseError: "error"}[type(parsed)]
    return {"kind": kind, **dataclasses.asdict(parsed)}


# --- run ------------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    from .loop import Agent
    from .toolbox import default_tools

    model = _model(args)
    tool_list: list[Any] = default_tools(args.root)
    example: str | None = "examples/calculator" if not args.tools else "examples/generic"
    if args.tools:
        tool_list += _module_tools(args.tools)
    if args.zero_shot:
        example = None
    agent = Agent(
        model,
        tools=tool_list,
        max_steps=args.max_steps,
        max_tokens=args.max_tokens,
        reply_tokens=args.reply_tokens,
        instructions_in=args.instructions_in,
        example=example,
        grammar=False if args.no_grammar else None,
    )
    run = agent.iter_steps(args.task)
    out = sys.stdout
    for step in run:
        if not args.json:
            _print_step(step, out, args.max_tokens)
    result = run.result
    if args.json:
        print(json.dumps(result_dict(result), ensure_ascii=False, indent=2))
    else:
        _print_end(result, out)
    return 0 if result.stop_reason == "final" else 1


def _model(args: argparse.Namespace) -> Any:
    if args.model is None or args.model.endswith(".gguf"):
        if args.base_url:
            raise ModelError("--base-url needs --model NAME (the model's name on that server)")
        from .backends.local import LocalModel

        return LocalModel(args.model, api=args.api or "completion")
    from .backends.openai_api import OpenAIChat, OpenAICompletion

    backend = OpenAICompletion if args.api == "completion" else OpenAIChat
    return backend(args.model, base_url=args.base_url, stream=args.stream)


def _module_tools(name: str) -> list[Callable[..., object]]:
    sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(name.removesuffix(".py"))
    except ImportError as exc:
        raise ModelError(f"could not import the tools module {name!r}: {exc}") from exc
    found = [
        value
        for key, value in vars(module).items()
        if callable(value) and not key.startswith("_") and getattr(value, "__module__", None) == module.__name__
    ]
    if not found:
        raise ModelError(f"the module {name!r} defines no public functions to use as tools")
    return found


def _print_step(step: Step, out: TextIO, max_tokens: int | None) -> None:
    parsed = step.parsed
    budget = f"{step.total_usage.total_tokens}" + (f"/{max_tokens}" if max_tokens else "")
    out.write(f"── step {step.number}{' (forced)' if step.forced else ''} · {budget} tokens · {step.seconds:.2f}s\n")
    if parsed.thought:
        out.write(f"THOUGHT: {parsed.thought}\n")
    if isinstance(parsed, Action):
        out.write(f"ACTION: {parsed.tool}[{parsed.input}]\n")
    elif isinstance(parsed, Final):
        out.write(f"FINAL: {parsed.answer}\n")
    else:
        out.write(f"UNREADABLE ({parsed.reason}): {step.reply.strip()[:200]!r}\n")
    if step.cut.strip():
        out.write(f"(cut a made-up observation: {step.cut.strip()[:80]!r})\n")
    if step.observation is not None:
        out.write(f"OBSERVATION: {step.observation}\n")
    out.flush()


def _print_end(result: RunResult, out: TextIO) -> None:
    usage = result.usage
    out.write(
        f"── {result.stop_reason}{' (forced answer)' if result.forced else ''} · {len(result.steps)} steps · "
        f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion = {usage.total_tokens} tokens\n"
    )
    if result.error:
        out.write(f"stopped: {result.error}\n")
    if result.answer is not None:
        out.write(f"{result.answer}\n")


def result_dict(result: RunResult) -> dict[str, Any]:
    def step_dict(step: Step) -> dict[str, Any]:
        return {
            "number": step.number,
            "reply": step.reply,
            "parsed": parsed_dict(step.parsed),
            "observation": step.observation,
            "usage": step.usage.as_dict(),
            "total_usage": step.total_usage.as_dict(),
            "seconds": round(step.seconds, 4),
            "cut": step.cut,
            "forced": step.forced,
        }

    transcript: Any = result.transcript
    if not isinstance(transcript, str):
        transcript = [dataclasses.asdict(m) for m in transcript]
    return {
        "answer": result.answer,
        "stop_reason": result.stop_reason,
        "forced": result.forced,
        "error": result.error,
        "usage": result.usage.as_dict(),
        "tool_calls": result.tool_calls,
        "steps": [step_dict(s) for s in result.steps],
        "transcript": transcript,
    }


def _eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import evaluation

    tasks = evaluation.load(args.tasks)
    model = _model(args)
    local = getattr(model, "stats", None) is not None  # an in-process model: one task at a time
    root = Path(args.root) if args.root else Path(args.tasks).parent / "docs"
    options = {
        "max_steps": args.max_steps,
        "max_tokens": args.max_tokens,
        "reply_tokens": args.reply_tokens,
        "grammar": False if args.no_grammar else None,
    }
    outcomes = []
    out = open(args.out, "w", encoding="utf-8") if args.out else None  # noqa: SIM115 - closed below
    try:
        progress = evaluation.evaluate(
            tasks,
            model,
            root=root,
            concurrency=1 if local else args.concurrency,
            zero_shot=args.zero_shot,
            options=options,
        )
        for done, outcome in enumerate(progress, 1):
            outcomes.append(outcome)
            if out:
                out.write(evaluation.as_json(outcome) + "\n")
                out.flush()
            mark = "✓" if outcome.ok else "✗"
            end = "\r" if sys.stderr.isatty() and done < len(tasks) else "\n"
            sys.stderr.write(f"[{done}/{len(tasks)}] {mark} {outcome.id}{' ' * 20}{end}")
    finally:
        if out:
            out.close()
    print(evaluation.table(outcomes))
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
