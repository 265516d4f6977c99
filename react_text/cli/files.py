"""The files a command names: read with a one-line error, and no output written over an input."""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from react_text.core.errors import ConfigError

__all__ = [
    "looked_up",
    "read_text",
    "same_file",
    "sources_read",
    "writes_no_input",
]


def read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


def writes_no_input(outputs: Sequence[tuple[str, str | None]], inputs: Sequence[tuple[str, str]]) -> None:
    """ConfigError when an output file is an input (or another output): a slip of the tab key
    (`eval tasks.jsonl --out tasks.jsonl`) would destroy what the command reads. Paths are
    compared resolved (symbolic links followed), and as files (device and inode: a hard link) when
    they exist; each path is looked up once, so a folder of a thousand traces costs a thousand."""
    seen: dict[object, tuple[str, str]] = {}
    for what, given in inputs:
        for key in _file_keys(given):
            seen.setdefault(key, (what, given))
    for flag, path in outputs:
        if not path:
            continue
        keys = _file_keys(path)
        clash = next((seen[key] for key in keys if key in seen), None)
        if clash is not None:
            what, other = clash
            raise ConfigError(f"{flag} {path} is {what} ({other}): it would be written over; give another file")
        for key in keys:
            seen.setdefault(key, (flag, path))


def sources_read(args: argparse.Namespace) -> list[tuple[str, str]]:
    """The files a command reads besides its main input: --script, and --tools modules that are files."""
    found = [("the script", args.script)] if args.script else []
    return found + [("the module of --tools", m) for m in (args.tools or ()) if looked_up(Path(m).is_file)]


def looked_up(check: Callable[[], bool]) -> bool:
    """`path.is_file()` or `.is_dir()`; False for a name the system cannot look up (too long, say)."""
    try:
        return check()
    except (OSError, ValueError):
        return False


def _file_keys(path: str) -> list[object]:
    """What names a file whatever the path: its resolved path, and its device and inode if it exists."""
    keys: list[object] = []
    with contextlib.suppress(OSError, RuntimeError, ValueError):  # too long a name, a symbolic link loop
        keys.append(Path(path).resolve())
    with contextlib.suppress(OSError, ValueError):
        found = os.stat(path)
        keys.append((found.st_dev, found.st_ino))
    return keys


def same_file(a: Path, b: Path) -> bool:
    return bool(set(_file_keys(str(a))) & set(_file_keys(str(b))))
