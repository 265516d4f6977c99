"""What the commands print: a step and a run's end (run, replay), a run as it is written (`Live`:
run on a terminal), and an eval's progress."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import TextIO

from react_text.core.protocol import ACTION_LABEL, FINAL_LABEL, OBSERVATION_LABEL, THOUGHT_LABEL, call
from react_text.core.streaming import Observed, Revision, RunEvent, StepEnd, Stream, TextDelta
from react_text.core.types import Action, Actions, Final, RunResult, Step
from react_text.evaluation.results import TaskResult, label, said
from react_text.observers.written import shown

__all__ = [
    "Live",
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


class Live:
    """A run printed as it is written (`agent.stream`): the reply's text as it comes (thinking dim),
    the observation, and after each step the line `print_step` heads it with. Iterate it for the
    steps, as `iter_steps` hands them out; then `result`."""

    def __init__(self, stream: Stream, out: TextIO, max_tokens: int | None, paint: Paint) -> None:
        self._stream = stream
        self._out = out
        self._max_tokens = max_tokens
        self._paint = paint
        self._step = 0  # the step whose text is being written
        self._at_line_start = True

    @property
    def result(self) -> RunResult:
        return self._stream.result

    def __iter__(self) -> Iterator[Step]:
        for event in self._stream:
            self.show(event)
            if isinstance(event, StepEnd):
                yield event.step

    def show(self, event: RunEvent) -> None:
        out, paint = self._out, self._paint
        if isinstance(event, TextDelta | Revision) and event.step != self._step:
            self._step = event.step
            self._write(paint.dim(f"── step {event.step}") + "\n")
        if isinstance(event, TextDelta):
            text = event.text
            if event.kind == "thinking":
                self._write(paint.dim(shown(text)))
            elif event.kind == "label":
                self._write(paint.label(text, _section(text)))
            else:
                self._write(shown(text))
        elif isinstance(event, Revision):
            self._newline()
            self._write(paint.dim("(the reply so far does not stand; it reads:)") + "\n")
            for delta in event.deltas:
                self._write(paint.dim(shown(delta.text)) if delta.kind == "thinking" else shown(delta.text))
        elif isinstance(event, Observed):
            self._newline()
            label = "" if event.parts else f"{paint.label(OBSERVATION_LABEL, 'observation')} "
            self._write(
                f"{label}{paint.label(shown(event.text), 'observation') if event.parts else shown(event.text)}\n"
            )
        elif isinstance(event, StepEnd):
            self._newline()
            step = event.step
            budget = f"{step.total_usage.total_tokens}" + (f"/{self._max_tokens}" if self._max_tokens else "")
            forced = " (forced)" if step.forced else ""
            cut = f" · cut a made-up observation: {step.cut.strip()[:60]!r}" if step.cut.strip() else ""
            self._write(paint.dim(f"   step {step.number}{forced} · {budget} tokens · {step.seconds:.2f}s{cut}") + "\n")
        out.flush()

    def _write(self, text: str) -> None:
        if text:
            self._out.write(text)
            self._at_line_start = text.endswith("\n")

    def _newline(self) -> None:
        if not self._at_line_start:
            self._write("\n")


def _section(label: str) -> str:
    """The colour of a protocol label as written (`**Final Answer:**`, `ACTION:`)."""
    word = label.strip(" *_#>:\uff1a").lower()
    return "final" if word.startswith("final") else "action" if word.startswith("action") else "thought"


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
