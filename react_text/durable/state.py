"""A run's state as a value, and as versioned JSON checked on load.

    state = RunState(run_id, task, seed, window, settings, log, snapshot)
    text = dumps(state)                 # {"format": "react-text/run-state", "version": 1, ...}
    state = loads(text, where="run.json")   # a damaged or foreign file: one ConfigError line

The state is the run's identity (task, seed, the context window it was planned for, the settings
of its agent) and its event log: every event the episode was sent (replies, failures, approvals,
tool outcomes, `commands.py`'s own values) and the intent recorded before each tool call. The
episode is deterministic, so replaying the log into a fresh one rebuilds everything it holds
(`journal.replay`). The snapshot says, for people and as a check on replay, what the log came to:
the step, the history as sent, the tokens billed and the ratio learned from the server, the steps.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from react_text.core.commands import Decided, Deny, Edit, Failed, Ran, RanAll, Replied
from react_text.core.episode import EpisodeSpec
from react_text.core.errors import ConfigError, ContextLengthError, ModelError
from react_text.core.types import Outcome, Reply, Tokens, Usage

__all__ = [
    "FORMAT",
    "READS",
    "VERSION",
    "Intent",
    "Logged",
    "Pending",
    "RunState",
    "Snapshot",
    "Status",
    "dumps",
    "loads",
    "settings_of",
]

FORMAT = "react-text/run-state"
VERSION = 2  # 2: a decision may be a denial with its reason or an edited input
READS = (1, 2)  # the versions this one loads (a version 1 state is a version 2 one that holds no such decision)
Status = Literal["running", "awaiting_approval", "done"]


@dataclass(frozen=True, slots=True)
class Intent:
    """The calls about to be run, recorded before they are: (tool, input as written) each."""

    calls: tuple[tuple[str, str], ...]


Logged = Replied | Failed | Decided | Ran | RanAll | Intent


@dataclass(frozen=True, slots=True)
class Pending:
    """A call the run waits on: an approval asked for later, or an outcome that was never recorded."""

    tool: str
    input: str
    why: Literal["approval", "unknown_outcome"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the log came to, as the episode held it when the state was saved."""

    status: Status = "running"
    step: int = 0  # steps complete
    usage: Usage = field(default_factory=Usage)
    rate: float | None = None  # server tokens per local token learned (None: no server report yet)
    tool_calls: int = 0
    transcript: tuple[tuple[str, str], ...] | str = ()  # the history as sent: (role, content) each, or a transcript
    steps: tuple[Mapping[str, Any], ...] = ()  # each step as a trace writes it (trace.step_dict)
    pending: tuple[Pending, ...] = ()
    result: Mapping[str, Any] | None = None  # stop_reason, answer, error once the run is over


@dataclass(frozen=True, slots=True)
class RunState:
    run_id: str
    task: str
    seed: int | None
    window: int | None  # the context window the run was planned for
    settings: Mapping[str, Any]  # settings_of(spec, model name): compared on resume
    log: tuple[Logged, ...] = ()
    snapshot: Snapshot = field(default_factory=Snapshot)


def settings_of(spec: EpisodeSpec, model: str) -> Mapping[str, Any]:
    """What a run's episode is made of that a resume must make again: the model's name and api, the
    tools and their marks, the limits, the prompting, the parser, the grammar choice, and a hash of
    the instruction block."""
    parser = spec.parser
    return MappingProxyType(
        {
            "model": model,
            "api": spec.api,
            "tools": [[t.name, t.pure, t.idempotent, t.risky] for t in spec.tools],
            "limits": dataclasses.asdict(spec.limits),
            "prompting": dataclasses.asdict(spec.prompting),
            "parser": f"{getattr(parser, '__module__', '?')}.{getattr(parser, '__qualname__', type(parser).__name__)}",
            "grammar": spec.grammar,
            "approval": spec.asks_approval,
            "prefill": spec.prefill,
            "instructions": hashlib.sha256(spec.instructions.encode()).hexdigest(),
        }
    )


# --- to JSON ----------------------------------------------------------------------------------------


def _usage(usage: Usage | None) -> list[int] | None:
    return None if usage is None else [usage.prompt_tokens, usage.completion_tokens]


def _event(event: Logged) -> dict[str, Any]:
    if isinstance(event, Replied):
        reply = event.reply
        tokens = None if reply.tokens is None else dataclasses.asdict(reply.tokens)
        return {
            "kind": "replied",
            "text": reply.text,
            "usage": _usage(reply.usage),
            "finish_reason": reply.finish_reason,
            "reasoning": reply.reasoning,
            "tokens": tokens,
            "seconds": event.seconds,
        }
    if isinstance(event, Failed):
        error = event.error
        window = getattr(error, "window", None)
        prompt_tokens = getattr(error, "prompt_tokens", None)
        kind = "context_length" if isinstance(error, ContextLengthError) else "model"
        return {
            "kind": "failed",
            "error": kind,
            "message": str(error),
            "window": window,
            "prompt_tokens": prompt_tokens,
            "seconds": event.seconds,
        }
    if isinstance(event, Decided):
        approval = event.approval
        if isinstance(approval, Deny):
            return {"kind": "decided", "approval": {"deny": approval.reason}}
        if isinstance(approval, Edit):
            return {"kind": "decided", "approval": {"edit": approval.input}}
        return {"kind": "decided", "approval": approval}
    if isinstance(event, Ran):
        return {"kind": "ran", **_ran(event)}
    if isinstance(event, RanAll):
        return {"kind": "ran_all", "ran": [_ran(r) for r in event.ran], "seconds": event.seconds}
    return {"kind": "intent", "calls": [list(c) for c in event.calls]}


def _ran(ran: Ran) -> dict[str, Any]:
    o = ran.outcome
    return {"outcome": [o.kind, o.text, o.error_type], "seconds": ran.seconds}


def dumps(state: RunState) -> str:
    """The state as JSON text (one object; keys in a fixed order)."""
    snap = state.snapshot
    transcript: Any = snap.transcript if isinstance(snap.transcript, str) else [list(m) for m in snap.transcript]
    document = {
        "format": FORMAT,
        "version": VERSION,
        "run_id": state.run_id,
        "task": state.task,
        "seed": state.seed,
        "window": state.window,
        "settings": dict(state.settings),
        "log": [_event(e) for e in state.log],
        "snapshot": {
            "status": snap.status,
            "step": snap.step,
            "usage": _usage(snap.usage),
            "rate": snap.rate,
            "tool_calls": snap.tool_calls,
            "transcript": transcript,
            "steps": [dict(s) for s in snap.steps],
            "pending": [dataclasses.asdict(p) for p in snap.pending],
            "result": None if snap.result is None else dict(snap.result),
        },
    }
    return json.dumps(document, ensure_ascii=False, allow_nan=False)


# --- from JSON, checked ---------------------------------------------------------------------------------

_Check = Callable[[Any], bool]


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return (_int(value) or isinstance(value, float)) and math.isfinite(value) and value >= 0


def _opt(check: _Check) -> _Check:
    return lambda value: value is None or check(value)


def _str(value: Any) -> bool:
    return isinstance(value, str)


def _pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(_int(v) and v >= 0 for v in value)


def _outcome(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 3
        and value[0] in ("ok", "error", "timeout")
        and all(isinstance(v, str) for v in value)
    )


def _approval(value: Any) -> bool:
    if isinstance(value, dict):
        return len(value) == 1 and next(iter(value)) in ("deny", "edit") and all(map(_str, value.values()))
    return isinstance(value, bool) or value == "stop"


_RAN: Mapping[str, _Check] = {"outcome": _outcome, "seconds": _number}
_ENTRIES: Mapping[str, Mapping[str, _Check]] = {
    "replied": {
        "text": _str,
        "usage": _opt(_pair),
        "finish_reason": _opt(_str),
        "reasoning": _opt(_str),
        "tokens": _opt(lambda v: isinstance(v, dict)),
        "seconds": _number,
    },
    "failed": {
        "error": lambda v: v in ("model", "context_length"),
        "message": _str,
        "window": _opt(_int),
        "prompt_tokens": _opt(_int),
        "seconds": _number,
    },
    "decided": {"approval": _approval},
    "ran": _RAN,
    "ran_all": {"ran": lambda v: isinstance(v, list) and all(_fields(r, _RAN) is None for r in v), "seconds": _number},
    "intent": {
        "calls": lambda v: (
            isinstance(v, list) and all(isinstance(c, list) and len(c) == 2 and all(map(_str, c)) for c in v)
        )
    },
}
_TOP: Mapping[str, _Check] = {
    "run_id": lambda v: isinstance(v, str) and bool(v),
    "task": _str,
    "seed": _opt(_int),
    "window": _opt(lambda v: _int(v) and v > 0),
    "settings": lambda v: isinstance(v, dict),
    "log": lambda v: isinstance(v, list),
    "snapshot": lambda v: isinstance(v, dict),
}
_SNAPSHOT: Mapping[str, _Check] = {
    "status": lambda v: v in ("running", "awaiting_approval", "done"),
    "step": lambda v: _int(v) and v >= 0,
    "usage": _pair,
    "rate": _opt(_number),
    "tool_calls": lambda v: _int(v) and v >= 0,
    "transcript": lambda v: (
        isinstance(v, str)
        or (isinstance(v, list) and all(isinstance(m, list) and len(m) == 2 and all(map(_str, m)) for m in v))
    ),
    "steps": lambda v: isinstance(v, list) and all(isinstance(s, dict) for s in v),
    "pending": lambda v: (
        isinstance(v, list)
        and all(
            isinstance(p, dict) and set(p) == {"tool", "input", "why"} and p["why"] in ("approval", "unknown_outcome")
            for p in v
        )
    ),
    "result": _opt(lambda v: isinstance(v, dict)),
}


def _fields(data: Any, rules: Mapping[str, _Check], path: str = "") -> str | None:
    """What is wrong with `data` against `rules` (every field there and of its kind), or None."""
    if not isinstance(data, dict):
        return f"{path or 'the document'} is not an object"
    for name, check in rules.items():
        where = f"{path}.{name}" if path else name
        if name not in data:
            return f"{where} is missing"
        if not check(data[name]):
            return f"{where} is not what a run state holds there ({json.dumps(data[name])[:40]})"
    return None


def _problem(data: Any) -> str | None:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return f'it is not a react-text run state (no "format": "{FORMAT}")'
    if data.get("version") not in READS or isinstance(data.get("version"), bool):
        version = json.dumps(data.get("version"))[:20]
        return f"it is a run state of version {version}; this react-text reads versions {READS[0]} to {READS[-1]}"
    problem = _fields(data, _TOP) or _fields(data["snapshot"], _SNAPSHOT, "snapshot")
    if problem:
        return problem
    for index, entry in enumerate(data["log"]):
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if not isinstance(kind, str) or kind not in _ENTRIES:
            return f"log[{index}] is no event a run logs"
        if problem := _fields(entry, _ENTRIES[kind], f"log[{index}]"):
            return problem
    return None


def loads(text: str | bytes, *, where: str = "the run state") -> RunState:
    """The state in `text`, checked: anything else is one ConfigError naming `where` and what is wrong."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{where} is damaged: it is not JSON ({exc})") from None
    problem = _problem(data)
    if problem:
        raise ConfigError(f"{where} cannot be resumed: {problem}")
    snap = data["snapshot"]
    transcript = (
        snap["transcript"] if isinstance(snap["transcript"], str) else tuple(tuple(m) for m in snap["transcript"])
    )
    return RunState(
        run_id=data["run_id"],
        task=data["task"],
        seed=data["seed"],
        window=data["window"],
        settings=MappingProxyType(data["settings"]),
        log=tuple(_logged(e) for e in data["log"]),
        snapshot=Snapshot(
            status=snap["status"],
            step=snap["step"],
            usage=Usage(*snap["usage"]),
            rate=snap["rate"],
            tool_calls=snap["tool_calls"],
            transcript=transcript,
            steps=tuple(MappingProxyType(s) for s in snap["steps"]),
            pending=tuple(Pending(**p) for p in snap["pending"]),
            result=None if snap["result"] is None else MappingProxyType(snap["result"]),
        ),
    )


def _logged(entry: dict[str, Any]) -> Logged:
    kind = entry["kind"]
    if kind == "replied":
        usage = None if entry["usage"] is None else Usage(*entry["usage"])
        tokens = None if entry["tokens"] is None else _tokens(entry["tokens"])
        reply = Reply(entry["text"], usage, entry["finish_reason"], entry["reasoning"], tokens)
        return Replied(reply, entry["seconds"])
    if kind == "failed":
        error: ModelError = (
            ContextLengthError(entry["message"], window=entry["window"], prompt_tokens=entry["prompt_tokens"])
            if entry["error"] == "context_length"
            else ModelError(entry["message"])
        )
        return Failed(error, entry["seconds"])
    if kind == "decided":
        approval = entry["approval"]
        if isinstance(approval, dict):
            return Decided(Deny(approval["deny"]) if "deny" in approval else Edit(approval["edit"]))
        return Decided(approval)
    if kind == "ran":
        return _ran_from(entry)
    if kind == "ran_all":
        return RanAll(tuple(_ran_from(r) for r in entry["ran"]), entry["seconds"])
    return Intent(tuple((tool, text) for tool, text in entry["calls"]))


def _ran_from(entry: dict[str, Any]) -> Ran:
    kind, text, error_type = entry["outcome"]
    return Ran(Outcome(kind, text, error_type), entry["seconds"])


def _tokens(data: dict[str, Any]) -> Tokens:
    try:
        fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}
        return Tokens(**fields)
    except TypeError as exc:
        raise ConfigError(f"the run state's token ids are damaged ({exc})") from None
