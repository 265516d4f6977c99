"""What the commands print: a step and a run's end (run, replay), and an eval's progress."""

from __future__ import annotations

import os
import time
from typing import TextIO

from react_text.core.protocol import ACTION_LABEL, FINAL_LABEL, OBSERVATION_LABEL, THOUGHT_LABEL, call
from react_text.core.types import Action, Actions, Final, RunResult, Step
from react_text.evaluation.results import TaskResult, label, said
from react_text.observers.written import shown

__all__ = [
    "Paint",
    "Progress",
    "plural",
    "print_end",
    "print_step",
]


class Paint:
    """ANSI colour on a terminal (unless NO_COLOR is set), plain text otherwise."""

    def __init__(self, on: bool) -> None:
        self.on = on

    @classmethod
    def for_stream(cls, stream: TextIO) -> Paint:
        return cls(stream.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb")

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.on else text

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def label(self, name: str, colour: str) -> str:
        codes = {"thought": "36", "action": "33", "observation": "32", "final": "1;35", "error": "31"}
        return self._wrap(codes[colour], name)


def print_step(step: Step, out: TextIO, max_tokens: int | None, paint: Paint) -> None:
    parsed = step.parsed
    budget = f"{step.total_usage.total_tokens}" + (f"/{max_tokens}" if max_tokens else "")
    forced = " (forced)" if step.forced else ""
    out.write(paint.dim(f"── step {step.number}{forced} · {budget} tokens · {step.seconds:.2f}s") + "\n")
    if parsed.thought:
        out.write(f"{paint.label(THOUGHT_LABEL, 'thought')} {shown(parsed.thought)}\n")
    if isinstance(parsed, Action):
        out.write(f"{paint.label(ACTION_LABEL, 'action')} {shown(call(parsed.tool, parsed.input))}\n")
    elif isinstance(parsed, Actions):
        for action in parsed.actions:
            out.write(f"{paint.label(ACTION_LABEL, 'action')} {shown(call(action.tool, action.input))}\n")
    elif isinstance(parsed, Final):
        out.write(f"{paint.label(FINAL_LABEL, 'final')} {shown(parsed.answer)}\n")
    else:
        out.write(f"{paint.label(f'UNREADABLE ({parsed.reason}):', 'error')} {step.reply.strip()[:200]!r}\n")
    if step.cut.strip():
        out.write(paint.dim(f"(cut a made-up observation: {step.cut.strip()[:80]!r})") + "\n")
    if isinstance(parsed, Actions) and step.observation is not None:
        out.write(paint.label(shown(step.observation), "observation") + "\n")
    elif step.observation is not None:
        out.write(f"{paint.label(OBSERVATION_LABEL, 'observation')} {shown(step.observation)}\n")
    out.flush()


def print_end(result: RunResult, out: TextIO, paint: Paint) -> None:
    usage = result.usage
    forced = " (forced answer)" if result.forced else ""
    out.write(
        paint.dim(
            f"── {result.stop_reason}{forced} · {plural(len(result.steps), 'step')} · {usage.prompt_tokens} prompt + "
            f"{usage.completion_tokens} completion = {usage.total_tokens} tokens"
        )
        + "\n"
    )
    if result.error:
        out.write(f"stopped: {shown(result.error)}\n")
    if result.answer is not None:
        out.write(paint.bold(shown(result.answer)) + "\n")


class Progress:
    """How far an eval has got: a bar redrawn in place on a terminal, one line a task when piped."""

    def __init__(self, total: int, done: int, out: TextIO) -> None:
        self.total = total
        self.done = done
        self.right = 0
        self.out = out
        self.live = out.isatty()
        self.started = time.monotonic()
        self.first = done
        if done:
            out.write(f"{done} of {total} tasks already done: running the other {total - done}\n")

    def update(self, outcome: TaskResult) -> None:
        self.done += 1
        self.right += outcome.ok
        if not self.live:
            mark = "✓" if outcome.ok else "✗"
            why = f": {said(outcome)}" if outcome.answer is None and outcome.error else ""
            self.out.write(
                f"[{self.done}/{self.total}] {mark} {shown(label(outcome))} · {outcome.stop_reason}{shown(why)} · "
                f"{plural(outcome.steps, 'step')} · {outcome.seconds:.2f}s\n"
            )
            self.out.flush()
            return
        elapsed = time.monotonic() - self.started
        rate = (self.done - self.first) / elapsed if elapsed > 0 else 0.0
        left = f" · {(self.total - self.done) / rate:.0f}s left" if rate and self.done < self.total else ""
        width = 30
        filled = width * self.done // max(self.total, 1)
        bar = "█" * filled + "░" * (width - filled)
        ran = self.done - self.first
        self.out.write(f"\r{bar} {self.done}/{self.total} · {self.right}/{ran} right · {rate:.1f} tasks/s{left}\033[K")
        self.out.flush()

    def close(self) -> None:
        if self.live and self.done > self.first:
            self.out.write("\n")
            self.out.flush()


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
