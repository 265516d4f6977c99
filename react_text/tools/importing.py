"""Import the user's own code by name or by file (`--tools mytools.py`, `--parser mine:read`): one
way to find a module and one set of messages when it cannot be imported, every failure a
ConfigError that says what to do. A name ending in `.py`, or holding a path separator, is a file;
anything else is a module on the path, looked for in the working folder first."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

from react_text.core.errors import ConfigError

__all__ = ["user_module"]


def user_module(name: str, *, flag: str, label: str, missing: str, prefix: str) -> ModuleType:
    """The module `name` imported. The messages begin with `flag` (how the user asked for it:
    "--tools x.py") when it cannot be found, and name it `label` ("the tools module 'x'") when it
    fails to import; `missing` is the message when no module has the name; a file is imported as
    `prefix` + its stem (dataclasses and pickling look a module up in sys.modules by name)."""
    path = Path(name)
    as_path = name.endswith(".py") or os.sep in name or (os.altsep is not None and os.altsep in name)
    try:
        if as_path:
            if not path.is_file():
                raise ConfigError(f"{flag}: no such file {name}")
            loader = importlib.util.spec_from_file_location(f"{prefix}{path.stem}", path)
            if loader is None or loader.loader is None:
                raise ConfigError(f"{flag}: {name} is not a Python file")
            module = importlib.util.module_from_spec(loader)
            sys.modules[loader.name] = module
            loader.loader.exec_module(module)
            return module
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        return importlib.import_module(name)
    except ConfigError:
        raise
    except ModuleNotFoundError as exc:
        if exc.name == name or name.startswith(f"{exc.name}."):
            raise ConfigError(missing) from exc
        raise ConfigError(f"{label} imports {exc.name!r}, which is not installed") from exc
    except SyntaxError as exc:
        where = f"{exc.filename}:{exc.lineno}" if exc.filename else name
        raise ConfigError(f"{where}: {label} has a syntax error: {exc.msg}") from exc
    except Exception as exc:  # the user's module ran and failed (a tool boundary): say how, in one line
        raise ConfigError(f"{label} failed to import: {type(exc).__name__}: {exc}") from exc
