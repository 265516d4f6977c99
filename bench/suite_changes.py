"""The embedded model on the task suite, as it comes and with each grammar change on its own.

    python bench/suite_changes.py ROW [FIRST LAST]      ROW: as-it-comes, no-grammar, typed, think

One row a run (run each under flock /tmp/react-text-llama.lock, in pieces: FIRST LAST are task
numbers, 0-based, LAST excluded); prints one JSON line a task (id, right, stop reason, steps).

    as-it-comes   LocalModel() and the Agent's defaults: the protocol grammar is on in-process
    no-grammar    Prompting(grammar=False)
    typed         each tool's input typed by its signature (react_text.grammar_inputs); the episode
                  sends the names-only grammar today, so a thin model here re-makes it from the tools
    think         LocalModel(think=True): a free <think> block may come before the protocol
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
from react_text.evaluation import correct, load, toolset
from react_text.grammar import protocol_grammar
from react_text.types import Reply, Request

SUITE = Path(__file__).resolve().parent / "tasks" / "suite.jsonl"


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
    row = sys.argv[1]
    tasks = load(SUITE)
    first, last = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (0, len(tasks))
    model = LocalModel(think=row == "think")
    for task in tasks[first:last]:
        tools = toolset(task.tools, SUITE.parent / "docs")
        chosen: Any = Typed(model, tools) if row == "typed" else model
        agent = Agent(chosen, tools=tools)
        if row == "no-grammar":
            agent = dataclasses.replace(agent, prompting=dataclasses.replace(agent.prompting, grammar=False))
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


if __name__ == "__main__":
    main()
