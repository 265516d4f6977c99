"""The embedded model on the task suite, as it comes and with each grammar change on its own.

    python bench/suite_changes.py ROW [FIRST LAST] [--transcripts FILE] [--tasks FILE]

One row a run (run each under flock /tmp/react-text-llama.lock, in pieces: FIRST LAST are task
numbers, 0-based, LAST excluded); prints one JSON line a task (id, right, stop reason, steps).
`--transcripts FILE` appends each run's transcript to FILE, one JSON line a task, to read why a
run went wrong. `--tasks FILE`: another task file over the same folder (default: the suite; the
held-out file-tool tasks, bench/tasks/heldout.jsonl, check that a change is not fitted to it).

    as-it-comes   LocalModel() and the Agent's defaults: the protocol grammar is on in-process
    no-grammar    Prompting(grammar=False)
    typed         each tool's input typed by its signature (react_text.grammar.inputs), the grammar
                  made again from the tools: since the episode types inputs itself (4d0f367) this
                  is the grammar as it comes, and the transcripts are the same
    think         LocalModel(think=True): a free <think> block may come before the protocol

Candidate changes, each on its own (what the wrong runs' transcripts showed the model tripping on):
    final-note    the forced-final note names no text to copy after `FINAL:` (the model copied
                  "your best answer from what you know so far" into its answer); not kept
    search-example  the search tool's worked example (prompts/examples/search.txt) for the file
                  tools without the calculator, instead of the generic one made from the tool,
                  whose placeholders the model copied (`search[words]`, "FINAL: the answer, as the
                  observation says it"); kept: now as it comes
    generic-example  the generic example for those tools: as it came before search-example was kept
    short-answer  the grammar bounds an answer to 100 characters, not 200 (a run-on answer stops
                  sooner); not run yet
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from react_text import Agent
from react_text.backends.local import LocalModel
from react_text.core.types import Reply, Request
from react_text.evaluation import correct, load, toolset
from react_text.grammar.protocol import protocol_grammar
from react_text.prompting import generic_example

SUITE = Path(__file__).resolve().parent / "tasks" / "suite.jsonl"

FINAL_NOTE = (
    "You have reached the limit ($limit). Answer now from what you know so far: a THOUGHT line, then a FINAL "
    "line with your answer."
)


def _override(name: str, text: str) -> None:
    """One prompt template replaced for this process (a candidate row, before it is a file)."""
    import string

    from react_text import prompting

    original = prompting._template
    prompting._template = lambda n: string.Template(text) if n == name else original(n)  # type: ignore[assignment]


class Typed:
    """The in-process model, with each request's grammar made again from the tools themselves."""

    def __init__(self, inner: LocalModel, tools: Any) -> None:
        self.inner, self.tools = inner, tuple(tools)
        self.api, self.name, self.accepts_grammar = inner.api, inner.name, True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def generate(self, request: Request) -> Reply:
        grammar = request.grammar
        if grammar and "\naction ::= " in grammar:
            directive = next(line for line in grammar.splitlines() if line.startswith("directive ::= "))
            grammar = protocol_grammar(
                self.tools, after_cue=grammar.startswith('root ::= " "'), final="final" in directive
            )
        return self.inner.generate(dataclasses.replace(request, grammar=grammar))


def main() -> None:
    args = sys.argv[1:]
    transcripts = None
    if "--transcripts" in args:
        at = args.index("--transcripts")
        transcripts = Path(args[at + 1])
        del args[at : at + 2]
    suite = SUITE
    if "--tasks" in args:
        at = args.index("--tasks")
        suite = Path(args[at + 1])
        del args[at : at + 2]
    row = args[0]
    tasks = load(suite)
    first, last = (int(args[1]), int(args[2])) if len(args) > 2 else (0, len(tasks))
    model = LocalModel(think=row == "think")
    if row == "final-note":
        _override("corrections/force_final", FINAL_NOTE)
    if row == "short-answer":
        from react_text.core import final
        from react_text.grammar import protocol as grammar

        grammar.MAX_ANSWER = final.MAX_ANSWER = 100  # type: ignore[misc]
    for task in tasks[first:last]:
        tools = toolset(task.tools, SUITE.parent / "docs")
        chosen: Any = Typed(model, tools) if row == "typed" else model
        agent = Agent(chosen, tools=tools)
        if row == "no-grammar":
            agent = dataclasses.replace(agent, prompting=dataclasses.replace(agent.prompting, grammar=False))
        names = {t.name for t in tools}
        if row in ("search-example", "generic-example") and "search" in names and "calculator" not in names:
            example = "search" if row == "search-example" else generic_example(tools)
            agent = dataclasses.replace(agent, prompting=dataclasses.replace(agent.prompting, example=example))
        started = time.perf_counter()
        result = agent.run(task.task)
        print(
            json.dumps(
                {
                    "row": row,
                    "id": task.id,
                    "right": bool(correct(result.answer, task.answer)),
                    "stop_reason": result.stop_reason,
                    "steps": len(result.steps),
                    "answer": result.answer,
                    "seconds": round(time.perf_counter() - started, 1),
                }
            ),
            flush=True,
        )
        if transcripts is not None:
            with transcripts.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"row": row, "id": task.id, "transcript": result.transcript}, default=repr) + "\n")


if __name__ == "__main__":
    main()
