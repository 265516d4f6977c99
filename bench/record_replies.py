"""Record what real local models write, for the parser corpus (tests/data/replies.jsonl).

    python bench/record_replies.py MODEL.gguf NAME > /tmp/replies-NAME.jsonl

Runs the task suite in chat and completion mode, zero-shot and few-shot, with no grammar (so the
model writes freely) and prints every distinct reply as a JSON line with its source. The readings
are then labelled by hand into the corpus.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from react_text import Agent, Limits, Prompting
from react_text.backends.local import LocalModel
from react_text.core.errors import ModelError
from react_text.evaluation import load, toolset

SUITE = Path(__file__).parent / "tasks" / "suite.jsonl"


def main(path: str, name: str, limit: int = 12) -> None:
    seen: set[str] = set()
    tasks = load(SUITE)[::2][:limit]
    for api in ("chat", "completion"):
        try:
            model = LocalModel(path, api=api)  # type: ignore[arg-type]
        except ModelError as exc:  # a base model has no chat template: completion only
            print(f"{name}: no {api} mode ({exc})", file=sys.stderr)
            continue
        for few_shot in (False, True):
            for task in tasks:
                agent = Agent(
                    model,
                    tools=toolset(task.tools, SUITE.parent / "docs"),
                    limits=Limits(steps=3, reply_tokens=96, format_errors=2),
                    prompting=Prompting(example="auto" if few_shot else None, grammar=False),
                )
                for step in agent.iter_steps(task.task):
                    if step.reply in seen:
                        continue
                    seen.add(step.reply)
                    shot = "few-shot" if few_shot else "zero-shot"
                    source = f"{name} {api} {shot}, task {task.id}, step {step.number}, grammar off"
                    print(json.dumps({"source": source, "mode": api, "text": step.reply}, ensure_ascii=False))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
