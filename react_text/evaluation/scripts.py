"""Replies played back instead of a model: a trace's or a text file's, one per task of an eval.

    played = scripts.script("trace.jsonl")          # the replies and how the run was made
    agent = config.agent(played.model(), tools, played.choices)
    models, choices = scripts.scripts("traces/", {"t1": "What is 2 + 2?"}, n=2)   # models.for_sample(task, k)
    scripts.trace_name("q 1")                         # "q_201.jsonl": the file eval --trace writes

`react-text run --script` and `eval --script` build their models here. A trace recorded for another
task is refused, never played; whatever is not a script is a ConfigError with one line.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from react_text.core.errors import ConfigError, ModelError
from react_text.core.types import Api, Model, Reply
from react_text.evaluation.config import Choices
from react_text.tokens import meter as budget

__all__ = ["Played", "Script", "script", "scripts", "task_id", "trace_name"]


@dataclass(frozen=True, slots=True)
class Script:
    """Replies to play instead of calling a model: a trace's (with how its run was made), or a
    text file's (replies between lines of `---`)."""

    replies: tuple[str | Reply | ModelError, ...]
    start: Mapping[str, Any] = field(default_factory=dict)  # the trace's run_start event; {} for text
    window: int | None = None  # the context window the recorded run was planned against

    @property
    def task(self) -> str | None:
        task = self.start.get("task")
        return task if isinstance(task, str) else None

    @property
    def choices(self) -> Choices:
        recorded = Choices.recorded(self.start)
        if self.window is None or recorded.limits.get("context_tokens") is not None:
            return recorded
        return dataclasses.replace(recorded, limits={**recorded.limits, "context_tokens": self.window})

    def model(self, *, api: Api | None = None, grammar: bool | None = None) -> Model:
        """A fresh ScriptedModel of these replies, as the recorded model was (api, name, grammar)."""
        from react_text.backends.scripted import ScriptedModel

        recorded = self.start.get("model") or {}
        return ScriptedModel(
            list(self.replies),
            api=api or recorded.get("api") or "chat",
            name=recorded.get("name") or "scripted",
            # the grammar as the recorded run used it (a trace before 0.3 says only whether it could)
            accepts_grammar=bool(grammar or recorded.get("grammar", recorded.get("accepts_grammar"))),
        )

    def count_tokens(self) -> budget.Counter | None:
        """The recorded run's token counter, when it counted by the model's name (a server's model)."""
        recorded = self.start.get("model") or {}
        if recorded.get("tokenizer") in (None, "model") or not recorded.get("name"):
            return None
        return budget.counter(recorded["name"])


def script(path: str | Path) -> Script:
    """The replies of a trace (`.jsonl`) or of a text file; ConfigError when there are none."""
    from react_text.observers import trace

    if str(path).endswith(".jsonl"):
        start = trace.start(path)
        found: tuple[str | Reply | ModelError, ...] = tuple(trace.replies(path))
        if not found:
            raise ConfigError(f"{path} holds no replies to play")
        ends = [e for e in trace.read(path) if e["event"] == "run_end"]
        window = ends[-1].get("context_window") if ends else None
        return Script(found, start, window if isinstance(window, int) else None)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such script file") from None
    except IsADirectoryError:
        raise ConfigError(f"{path} is a folder, not a trace") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the script {path}: {exc}") from exc
    if not text.strip():  # an empty file is not one empty reply
        raise ConfigError(f"{path} holds no replies to play")
    return Script(tuple(r.strip("\n") for r in text.split("\n---\n")))


@dataclass(frozen=True, slots=True)
class Played:
    """The scripted model of each episode of an eval: `played(task)` for a task's first (or only)
    episode, `played.for_sample(task, k)` for sample k of a group (`eval --n`), each a fresh model of
    its own script; or, given `one`, every episode plays that one script from its start."""

    each: Mapping[tuple[str, int], Script] = field(default_factory=dict)  # (task id, sample) -> script
    one: Script | None = None

    def __call__(self, task: Any) -> Model:
        return self.for_sample(task, 0)

    def for_sample(self, task: Any, k: int) -> Model:
        return (self.one or self.each[(task.id, k)]).model()


def scripts(path: str | Path, tasks: Mapping[str, str], n: int = 1) -> tuple[Played, Choices]:
    """A script for each episode of an eval (`tasks`: each id's task text; `n` episodes a task),
    and the choices its traces recorded (their budgets, prompting and parser, and where the tools
    came from: the root, the modules and MCP servers of `eval --tools` and `--mcp`; which tools a
    task has, its line says). `path` is a folder of traces as `eval --trace DIR` writes them
    (`trace_name(id)`; `trace_name(id#k)` for sample k of a group, `eval --n`) or of `<id>.txt`
    scripts, or one script that every episode plays from its start. Sample k of a group plays its
    own trace, else the task's own script (every sample alike). Each episode gets a model of its
    own, so what it is answered never depends on which episode asked first; a trace recorded for
    another task, or another sample of the group, is refused, never played."""
    folder = Path(path)
    if not _is(folder, Path.is_dir):
        one = script(folder)
        return Played(one=one), one.choices
    each: dict[tuple[str, int], Script] = {}
    for id_, text in tasks.items():
        for k in range(n):
            each[(id_, k)] = _found(folder, id_, text, k if n > 1 else None)
    recorded_choices = next((s.choices for s in each.values() if s.start), Choices())
    return Played(each), recorded_choices


def _found(folder: Path, id_: str, text: str, k: int | None) -> Script:
    """The script of task `id_` (of sample `k` of its group, None: no group) in `folder`, checked
    against what its trace recorded."""
    stems = [trace_name(f"{id_}#{k}").removesuffix(".jsonl"), _legacy_name(f"{id_}#{k}")] if k is not None else []
    stems += [trace_name(id_).removesuffix(".jsonl"), _legacy_name(id_)]
    names = dict.fromkeys(f"{stem}{suffix}" for stem in stems for suffix in (".jsonl", ".txt"))
    found = [folder / name for name in names if _is(folder / name, Path.is_file)]
    if not found:
        looked = list(names)
        shown = f"{', '.join(looked[:-1])} and {looked[-1]}"
        group = k is None and _is(folder / trace_name(f"{id_}#0"), Path.is_file)
        hint = f" ({trace_name(f'{id_}#0')} is a sample of a group: give --n)" if group else ""
        raise ConfigError(f"no script for the task {id_!r} in {folder} (looked for {shown}){hint}")
    played = script(found[0])
    recorded = played.start.get("task_id")
    if played.start and (recorded != id_ if recorded is not None else played.task != text):
        whose = f"the task {recorded!r}" if recorded is not None else "another task"
        raise ConfigError(
            f"{found[0]} is the trace of {whose} ({played.task!r}), not of {id_!r}: "
            "give each task its own trace (eval --trace DIR writes them)"
        )
    sample = played.start.get("sample")
    if sample is not None and sample != k:
        of = f"sample {k} of {id_!r}" if k is not None else f"{id_!r} (no --n)"
        raise ConfigError(f"{found[0]} is the trace of sample {sample} of {id_!r}, not of {of}")
    return played


def _is(path: Path, kind: Callable[[Path], bool]) -> bool:
    """`path.is_file()` or `.is_dir()`; False for a name the system cannot look up (too long, say)."""
    try:
        return kind(path)
    except (OSError, ValueError):  # ENAMETOOLONG from a 0.2 name that is not shortened
        return False


_NAME_SAFE = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")
_NAME_LONGEST = 200


def trace_name(id_: str) -> str:
    """The file name of a task's trace in `eval --trace DIR`: `<name>.jsonl`, one name per id.

    Lower-case letters, digits, `-` and `.` (not first) stand for themselves; every other
    character is `_` and the two hex digits of each of its UTF-8 bytes (`q 1` is `q_201`, `q_1` is
    `q_5f1`, `T1` is `_541`; a lone surrogate, which a Python caller's id may hold, is its
    three bytes as UTF-8 would write it). So no two ids share a file, even on a file system that ignores case,
    no name leaves the folder, and `task_id(name)` gives the id back. A name longer than 200
    characters is cut and ends in a hash of the id instead (unique, not reversible); the trace's
    `run_start` records the id either way.
    """
    name = "".join(c if c in _NAME_SAFE and (c != "." or i) else _escaped(c) for i, c in enumerate(id_))
    if len(name) > _NAME_LONGEST:
        name = f"{name[: _NAME_LONGEST - 17]}~{hashlib.sha256(id_.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
    return f"{name}.jsonl"


def task_id(name: str) -> str | None:
    """The task id a `trace_name` stands for; None for a name it does not make (or a hashed one)."""
    stem = name.removesuffix(".jsonl")
    out = bytearray()
    i = 0
    while i < len(stem):
        c = stem[i]
        if c == "_":
            try:
                out.append(int(stem[i + 1 : i + 3], 16))
            except ValueError:
                return None
            i += 3
        elif c in _NAME_SAFE:
            out += c.encode()
            i += 1
        else:
            return None
    try:
        id_ = out.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    return id_ if trace_name(id_) == name else None


def _escaped(c: str) -> str:
    return "".join(f"_{byte:02x}" for byte in c.encode("utf-8", "surrogatepass"))  # a lone surrogate too


def _legacy_name(id_: str) -> str:
    """The name 0.2 gave a task's trace or script (not unique: `q 1` and `q_1` were both `q_1`)."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in id_)
