"""`react-text eval`: a file of tasks run, many at once against servers, and scored (`react_text.evaluation`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from react_text.cli.choices import choices_of, model_recipe, refuse_unused
from react_text.cli.files import looked_up, same_file, sources_read, writes_no_input
from react_text.cli.flags import mcp_flags, model_flags, module_flag, positive, run_flags, subcommand, temperature
from react_text.cli.printing import Progress, plural
from react_text.core.errors import ConfigError
from react_text.core.limits import Limits
from react_text.core.sampling import SEEDS
from react_text.evaluation import config, scripts
from react_text.evaluation.config import Choices
from react_text.evaluation.results import stands
from react_text.observers.written import shown
from react_text.prompting import Prompting
from react_text.tools.tool import Tool

__all__ = [
    "add",
]

_EXAMPLES_EVAL = """examples:
  react-text eval bench/tasks/suite.jsonl                         (the embedded model)
  react-text eval bench/tasks/suite.jsonl --zero-shot --no-grammar --out results.jsonl
  react-text eval tasks.jsonl --model m --base-url http://127.0.0.1:8080/v1 --base-url http://127.0.0.1:8081/v1
  react-text eval tasks.jsonl --model m --base-url ... --out results.jsonl --resume   (after a crash)
  react-text eval tasks.jsonl --model m --base-url ... --out results.jsonl --state runs.db --resume   (mid-episode too)
  react-text eval bench/tasks/suite.jsonl --n 4 --temperature 0.8 --trajectories groups.jsonl   (GRPO groups)
"""


def add(commands: Any) -> None:
    """The eval command and its flags."""
    evaluate = subcommand(
        commands,
        "eval",
        "run a file of tasks and score the answers",
        "Run every task of TASKS (JSON Lines: id, task, answer, tools), many at once against servers, "
        "and print a results table.",
        _EXAMPLES_EVAL,
    )
    evaluate.add_argument("tasks", metavar="TASKS", help="a .jsonl file of tasks")
    model_flags(evaluate, servers="many")
    run_flags(evaluate)
    evaluate.add_argument("--root", metavar="DIR", help="folder for the file tools (default: docs/ beside TASKS)")
    evaluate.add_argument(
        "--concurrency",
        type=positive,
        help="episodes at once (default: 4 per server; the in-process model runs one at a time)",
    )
    evaluate.add_argument("--out", metavar="FILE", help="write one JSON line per task to FILE as each one finishes")
    evaluate.add_argument(
        "--resume",
        action="store_true",
        help="keep the results already in --out FILE and run only the other tasks (and again those that ended "
        "in model_error: the server failed, not the model)",
    )
    evaluate.add_argument(
        "--state",
        metavar="FILE",
        help="keep each episode's state in FILE (SQLite), saved after every step: with --resume, episodes "
        "stopped mid-way go on from where they were",
    )
    evaluate.add_argument(
        "--trace", metavar="DIR", help="write a trace per task to DIR/ID.jsonl (an id's odd characters escaped)"
    )
    evaluate.add_argument(
        "--trajectories",
        metavar="FILE",
        help="write one JSON line per episode to FILE: token ids, loss mask, log-probabilities, reward "
        "(a server is asked for the ids it sampled)",
    )
    evaluate.add_argument(
        "--n",
        type=positive,
        default=1,
        metavar="N",
        help="episodes per task, each with its own seed (a group for GRPO; default: 1)",
    )
    evaluate.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="the seed of a task's first episode, 0 to 2**32 - 2; episode k is sent S + k "
        "(default: 0 with --n, else the model's own)",
    )
    evaluate.add_argument(
        "--temperature",
        type=temperature,
        metavar="T",
        help="sampling temperature (default: 0, greedy; a group of --n episodes needs more to differ)",
    )
    evaluate.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run the episodes on Ray workers (the ray extra): a cluster's address (auto, ray://host:10001), "
        "or none for $RAY_ADDRESS else a local cluster; a worker that dies costs only its episodes, run again",
    )
    evaluate.add_argument("--workers", type=positive, help="with --ray: how many workers (default: one per CPU)")
    module_flag(evaluate, "add the public functions of a module (a name on the path, or a file) to every task's tools")
    mcp_flags(evaluate)
    evaluate.set_defaults(handler=_eval)


def _eval(args: argparse.Namespace) -> int:
    from react_text import evaluation

    tasks = evaluation.load(args.tasks)
    _eval_writes_no_input(args, tasks)
    refuse_unused(args)
    choices = choices_of(args)
    models: Any = None
    if args.script:  # the traces' settings and tools' sources, where the flags give none
        models, recorded = scripts.scripts(args.script, {t.id: t.task for t in tasks}, n=args.n)
        choices = choices.over(recorded)
    root = Path(choices.root) if choices.root else Path(args.tasks).parent / "docs"
    if any(name in ("search", "read") for t in tasks for name in t.tools) and not root.is_dir():
        raise ConfigError(f"the file tools need a folder: {root} is not one (give --root DIR)")
    extra: list[Tool] = [t for spec in choices.modules for t in config.module_tools(spec)]
    if not choices.mcp:
        for names in {t.tools for t in tasks}:
            evaluation.toolset(names, root, extra)  # an unknown tool name is an error before anything runs
    recipes: Any = None  # with --ray: how each worker builds the models (models do not travel)
    if args.ray is not None and (choices.mcp or args.mcp_env or args.mcp_header):
        raise ConfigError("--ray takes no --mcp: an MCP session cannot travel to a worker (use --module tools)")
    if args.workers and args.ray is None:
        raise ConfigError("--workers goes with --ray")
    if args.seed is not None and not (args.seed in SEEDS and args.seed + args.n - 1 in SEEDS):
        raise ConfigError(
            f"--seed must be from 0 to {SEEDS[-1]} less --n - 1 (2**32 - 2 is the last seed), not {args.seed}"
        )
    if args.script:
        recipes = models
        probe = models(tasks[0]) if tasks else scripts.Script(()).model()
        concurrency = args.concurrency or 4
    else:
        urls = args.base_url or [None]
        recipes = [model_recipe(args, url) for url in urls]
        models = [recipes[0]()] if args.ray is not None else [make() for make in recipes]
        probe = models[0]
        concurrency = 1 if config.is_in_process(probe) else args.concurrency or 4 * len(models)
    limits, prompting = config.settle(probe, choices)
    refuse_unused(args, probe, prompting)
    if args.resume and not args.out:
        raise ConfigError("--resume needs --out FILE: the results to keep")
    if args.state and (args.script or args.ray is not None):
        raise ConfigError(
            "--state keeps episodes in one local file for a live model: not with --script (its replies play "
            "from the first) or --ray (workers on other machines)"
        )
    done = evaluation.resume(args.out) if args.resume else []
    known = {t.id for t in tasks}
    done = [o for o in done if o.id in known and o.sample < args.n]
    if args.n > 1 and not args.temperature and not args.script:
        print(
            f"note: --n {args.n} at temperature 0: a task's episodes will be alike (give --temperature)",
            file=sys.stderr,
        )
    if args.trace:
        Path(args.trace).mkdir(parents=True, exist_ok=True)
    ray = recipes if args.ray is not None else None
    settings = _EvalSettings(tasks, done, root, models, concurrency, limits, prompting, choices, ray)
    if not (choices.mcp or args.mcp_env or args.mcp_header):
        return _eval_with(args, settings, extra)
    from react_text.tools.mcp import from_cli

    with from_cli(list(choices.mcp), args.mcp_env, args.mcp_header) as found:
        return _eval_with(args, settings, [*extra, *found])


def _eval_writes_no_input(args: argparse.Namespace, tasks: Sequence[Any]) -> None:
    """Refuse, before anything is written, an output of eval that is one of its inputs: the task
    file, the script (or a file of its folder), a --tools module file, or another output."""
    inputs = [("the task file", args.tasks), *sources_read(args)]
    folder = Path(args.script) if args.script else None
    if folder is not None and looked_up(folder.is_dir):
        with contextlib.suppress(OSError):  # a folder it cannot list: scripts.scripts says so
            inputs += [("a script of --script", str(p)) for p in sorted(folder.iterdir()) if looked_up(p.is_file)]
    outputs = [("--out", args.out), ("--trajectories", args.trajectories)]
    if args.trace:
        if folder is not None and same_file(Path(args.trace), folder):
            raise ConfigError(f"--trace {args.trace} is the folder --script plays: its traces would be written over")
        names = [f"{t.id}#{k}" if args.n > 1 else t.id for t in tasks for k in range(args.n)]
        outputs += [("--trace", str(Path(args.trace) / scripts.trace_name(name))) for name in names]
    writes_no_input(outputs, inputs)


def _close_in_process(models: Any) -> None:
    """Stop and free an in-process model before the interpreter shuts down (after Ctrl-C, its
    thread would otherwise run on in native code while the interpreter is torn down around it).
    A second Ctrl-C does not interrupt this: the model stops at its next token."""
    in_process = [m for m in models if config.is_in_process(m)] if isinstance(models, list) else []
    if not in_process:
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        for model in in_process:
            model.close()
    finally:
        signal.signal(signal.SIGINT, previous)


@dataclass(frozen=True, slots=True)
class _EvalSettings:
    tasks: list[Any]
    done: list[Any]
    root: Path
    models: Any
    concurrency: int
    limits: Limits
    prompting: Prompting
    choices: Choices  # the parser, and where the tools came from (for the traces)
    ray: Any = None  # the recipes, when the episodes run on Ray


def _eval_with(args: argparse.Namespace, settings: _EvalSettings, extra: Sequence[Tool]) -> int:
    from react_text import evaluation

    tasks, done, root = settings.tasks, settings.done, settings.root
    for names in {t.tools for t in tasks}:
        evaluation.toolset(names, root, extra)  # an unknown or clashing name: an error before anything runs
    outcomes = list(done)
    progress = Progress(len(tasks) * args.n, len(done), sys.stderr)
    try:
        out = open(args.out, "a" if args.resume else "w", encoding="utf-8") if args.out else None  # noqa: SIM115
    except OSError as exc:
        raise ConfigError(f"cannot write {args.out}: {exc.strerror}") from exc
    if args.trajectories:
        try:
            Path(args.trajectories).open("a" if args.resume else "w", encoding="utf-8").close()
        except OSError as exc:
            raise ConfigError(f"cannot write {args.trajectories}: {exc.strerror}") from exc

    if args.state and not args.resume:  # a new eval: the states of an earlier one in FILE go, as --out's results do
        from react_text.durable import SQLiteStore

        earlier = SQLiteStore(args.state)
        for run_id in earlier.runs():
            earlier.delete(run_id)
        earlier.close()
    options = evaluation.Options(
        root=root,
        limits=settings.limits,
        prompting=settings.prompting,
        parser=config.parser_named(settings.choices.parser),
        traces=Path(args.trace) if args.trace else None,
        tools=tuple(extra),
        modules=settings.choices.modules,
        mcp=settings.choices.mcp,
        trajectories=Path(args.trajectories) if args.trajectories else None,
        n=args.n,
        seed=args.seed,
        states=Path(args.state) if args.state else None,
    )

    def episodes() -> Any:
        if settings.ray is None:
            return evaluation.aevaluate(tasks, settings.models, options, concurrency=settings.concurrency, done=done)
        from react_text.evaluation import cluster

        return cluster.aevaluate(
            tasks,
            settings.ray,
            options,
            address=args.ray or None,
            workers=args.workers,
            concurrency=settings.concurrency,
            done=done,
        )

    async def run_all() -> None:
        async for outcome in episodes():
            outcomes.append(outcome)
            if out:
                out.write(evaluation.as_json(outcome) + "\n")
                out.flush()
            progress.update(outcome)

    try:
        asyncio.run(run_all())
    finally:
        _close_in_process(settings.models)
        progress.close()
        if out:
            out.close()
    order = {t.id: n for n, t in enumerate(tasks)}
    outcomes.sort(key=lambda o: (order[o.id], o.sample))
    print(shown(evaluation.table(outcomes)))  # the answers and ids as a model and a task file wrote them
    failed = sum(not stands(o) for o in outcomes)
    if failed:
        again = f"--resume --out {args.out}" if args.out else "--out FILE, then --resume"
        print(
            f"note: {plural(failed, 'episode')} ended in model_error, a failure of the server or the network (the "
            f"reason is in the table), not a result: run again with {again} to redo only those",
            file=sys.stderr,
        )
    return 0 if all(o.ok for o in outcomes) else 1
