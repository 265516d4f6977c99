"""Traces: one JSON line per event, written and flushed as it happens, so a crash loses nothing done.

    events: run_start, request, reply, step, run_end (and model_error; grammar_ignored, once, when
            a server's reply could not have been written under the grammar it was sent)

`run_start` records the task and the whole configuration (`config.describe`: the api, the model's
name and server URL without credentials, the tools and their listing, the parser, the Limits, the
Prompting), so a trace says how its run was made and `react-text run --script TRACE` can make it
again. `agent.run(task, observer=tracer.observer)` records every request and reply as it happens:
the drivers tell their observer each command and what came of it, and know nothing of tracing.
A request records only what is new since the previous one (the messages or transcript text
appended), so a trace grows linearly with the run. A step
records what the Step holds, its reasoning, finish_reason and elided steps included. Secrets
never reach a trace: API keys and bearer tokens are scrubbed from every string written.

`replies(path)` reads a trace's replies (and model failures) back, to drive a `ScriptedModel`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import time
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from react_text.core.commands import Command, Event, Failed, Replied, Send
from react_text.core.errors import ConfigError, ContextLengthError, ModelError, safe_url, scrub
from react_text.core.model_info import ModelInfo, describe
from react_text.core.types import (
    Action,
    Actions,
    Final,
    Message,
    Model,
    Parsed,
    ParseError,
    Reading,
    Reply,
    Request,
    RunResult,
    Step,
    Usage,
)
from react_text.grammar import protocol as grammar
from react_text.observers import trace_schema
from react_text.observers.observing import Call, Observer, Quiet
from react_text.observers.written import json_text

__all__ = [
    "Tracer",
    "parsed_dict",
    "read",
    "replies",
    "result_dict",
    "start",
    "step_dict",
    "step_from",
    "window",
]


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def parsed_dict(parsed: Reading) -> dict[str, Any]:
    if isinstance(parsed, Actions):  # each call of a reply with parallel actions
        actions = [{"kind": "action", **dataclasses.asdict(a)} for a in parsed.actions]
        return {"kind": "actions", "actions": actions, "thought": parsed.thought, "discarded": parsed.discarded}
    kind = {Action: "action", Final: "final", ParseError: "error"}[type(parsed)]
    return {"kind": kind, **dataclasses.asdict(parsed)}


def _parsed_from(data: dict[str, Any]) -> Reading:
    if data["kind"] == "actions":
        actions = tuple(Action(**{k: v for k, v in a.items() if k != "kind"}) for a in data["actions"])
        return Actions(actions, data.get("thought", ""), data.get("discarded", ""))
    return _single(data)


def _single(data: dict[str, Any]) -> Parsed:
    fields = {k: v for k, v in data.items() if k != "kind"}
    return {"action": Action, "final": Final, "error": ParseError}[data["kind"]](**fields)  # type: ignore[no-any-return]


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
        "reasoning": step.reasoning,
        "finish_reason": step.finish_reason,
        "elided": list(step.elided),
        "observations": list(step.observations),  # [] but after several actions: always there, as `elided`
    }


def step_from(data: dict[str, Any]) -> Step:
    def usage(d: dict[str, int]) -> Usage:
        return Usage(d["prompt_tokens"], d["completion_tokens"])

    return Step(
        number=data["number"],
        reply=data["reply"],
        parsed=_parsed_from(data["parsed"]),
        observation=data["observation"],
        usage=usage(data["usage"]),
        total_usage=usage(data["total_usage"]),
        seconds=data["seconds"],
        observations=tuple(data.get("observations", ())),
        cut=data.get("cut", ""),
        forced=data.get("forced", False),
        reasoning=data.get("reasoning", ""),
        finish_reason=data.get("finish_reason"),
        elided=tuple(data.get("elided", ())),
    )


def result_dict(result: RunResult) -> dict[str, Any]:
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


class Tracer:
    """Writes events to a JSONL file, one line each, flushed at once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._file: IO[str] = self.path.open("w", encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot write the trace {path}: {exc.strerror}") from exc
        self._started = time.monotonic()

    def __enter__(self) -> Tracer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    def event(self, kind: str, **data: Any) -> None:
        line = {"event": kind, "t": round(time.monotonic() - self._started, 4), **_clean(data)}
        self._file.write(json_text(line) + "\n")  # lone surrogates escaped: see written.py
        self._file.flush()

    def start(self, task: str, configuration: dict[str, Any]) -> None:
        """The first event: the task and how the run is made (`config.describe`)."""
        from importlib.metadata import PackageNotFoundError, version

        try:
            release = version("react-text")
        except PackageNotFoundError:
            release = "unknown"
        self.event("run_start", task=task, react_text=release, **configuration)

    def step(self, step: Step) -> None:
        self.event("step", **step_dict(step))

    def end(self, result: RunResult, *, context_window: int | None = None) -> None:
        """The last event. `context_window`: the window the run was planned against, if known
        (a replay needs it to elide and size its requests as the run did)."""
        data = result_dict(result)
        del data["steps"], data["transcript"]  # already written, step by step
        self.event("run_end", **data, context_window=context_window)

    @functools.cached_property
    def observer(self) -> Observer:
        """An observer of the run (observing.py) that writes each request (what is new in it),
        each reply and each model error: `agent.iter_steps(task, observer=tracer.observer)`."""
        return _Recording(self)


class _Recording(Quiet):
    """Writes what the drivers send the model and what comes back."""

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer
        self._sent: tuple[Message, ...] | str = ()
        self._grammar: str | None = None  # the last request's
        self._ignored_said = False  # a server that does not apply the grammar: said once a trace
        self._model: ModelInfo | None = None  # the run's model, as the drivers describe it

    def begin(self, model: ModelInfo) -> None:
        self._model = model

    @contextlib.contextmanager
    def around(self, command: Command) -> Iterator[Call]:
        if isinstance(command, Send):
            self._request(command.request)
        yield self

    def record(self, event: Event, counted: Usage | None = None) -> None:
        if isinstance(event, Replied):
            self._replied(event.reply)
        elif isinstance(event, Failed):
            self._failed(event.error)

    def _request(self, request: Request) -> None:
        prompt = request.prompt
        if isinstance(prompt, str):
            sent = self._sent if isinstance(self._sent, str) else ""
            new: Any = prompt[len(sent) :] if prompt.startswith(sent) else prompt
        else:
            sent_messages = self._sent if isinstance(self._sent, tuple) else ()
            same = prompt[: len(sent_messages)] == sent_messages
            new = [dataclasses.asdict(m) for m in (prompt[len(sent_messages) :] if same else prompt)]
        self._sent = prompt
        self._grammar = request.grammar
        self._tracer.event("request", new=new, max_tokens=request.max_tokens, stop=list(request.stop))

    def _failed(self, exc: ModelError) -> None:
        window = exc.window if isinstance(exc, ContextLengthError) else None
        self._tracer.event("model_error", error=str(exc), type=type(exc).__name__, window=window)

    def _replied(self, reply: Reply) -> None:
        usage = reply.usage.as_dict() if reply.usage else None
        self._tracer.event(
            "reply", text=reply.text, usage=usage, finish_reason=reply.finish_reason, reasoning=reply.reasoning
        )
        if not self._grammar or self._ignored_said or self._model is None or self._model.server is None:
            return
        server = self._model.server()  # a server model may not apply the grammar (asked already, to send it)
        if isinstance(server, str) and grammar.ignored(self._grammar, reply.text, cut=reply.finish_reason == "length"):
            self._ignored_said = True
            where = f"{safe_url(self._model.url).rstrip('/') if self._model.url else self._model.provider} ({server})"
            self._tracer.event("grammar_ignored", said=grammar.ignored_words(where, reply.text), reply=reply.text)


def read(path: str | Path) -> Iterator[dict[str, Any]]:
    """The events of a trace, in order (a last line cut short by a crash is skipped), each checked
    against `trace_schema`, so what is read can be trusted.

    ConfigError when there is no such file or it is not a trace (a line that is not an event, an
    event with a field missing or of the wrong type: named by line and field).
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path} is a folder, not a trace") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    lines = [line for line in lines if line.strip()]
    if not lines:
        raise ConfigError(f"{path} is empty: not a react-text trace (write one with react-text run --trace FILE)")
    for number, line in enumerate(lines, 1):
        try:
            event = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: JSON nested deeper than Python recurses
            if number == len(lines) and number > 1:
                return  # the last line, cut short by a crash
            event = None
        if not (isinstance(event, dict) and isinstance(event.get("event"), str)):
            raise ConfigError(
                f"{path} is not a react-text trace (line {number} is not an event): "
                "write one with react-text run --trace FILE"
            )
        problem = trace_schema.check(event)
        if problem:
            raise ConfigError(f"{path}:{number}: not a valid react-text trace: {problem}")
        yield event


def window(agent_limits: Any, model: object) -> int | None:
    """The context window a run was planned against: the limit given, else what the model said
    (read after the run, when the model has looked it up already: no request is made)."""
    if agent_limits.context_tokens is not None:
        return int(agent_limits.context_tokens)
    info = describe(typing.cast(Model, model))
    return info.window() if info.window is not None else None


def start(path: str | Path) -> dict[str, Any]:
    """The trace's run_start event ({} when it has none); ConfigError when it is not a trace."""
    for event in read(path):
        return event if event["event"] == "run_start" else {}
    raise ConfigError(f"{path} is empty: not a react-text trace")


def replies(path: str | Path) -> list[Reply | ModelError]:
    """The model's replies in a trace, and its failures, in order: ready for `ScriptedModel(...)`."""
    found: list[Reply | ModelError] = []
    for event in read(path):
        if event["event"] == "reply":
            usage = event.get("usage")
            found.append(
                Reply(
                    event["text"],
                    Usage(usage["prompt_tokens"], usage["completion_tokens"]) if usage else None,
                    event.get("finish_reason"),
                    event.get("reasoning"),
                )
            )
        elif event["event"] == "model_error":
            if event.get("type") == "ContextLengthError":
                found.append(ContextLengthError(event["error"], window=event.get("window")))
            else:
                found.append(ModelError(event["error"]))
    return found
