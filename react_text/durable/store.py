"""Where run states are kept: one small Protocol, a file a run, or SQLite for many runs.

    store = FileStore("runs/")                  # runs/<run_id>.json, each written atomically
    store = FileStore.single("run.json")        # one run, one named file (`react-text run --state FILE`)
    store = SQLiteStore("eval.db")              # many runs (an eval): stdlib sqlite3, WAL, a row a run
    store.save(state); store.load(run_id); store.runs(); store.delete(run_id)

A save is all or nothing: a crash during one leaves the state saved before it. FileStore writes a
temporary file in the same directory, flushes and fsyncs it, renames it over the old one, and
fsyncs the directory; SQLiteStore writes one row in one transaction (WAL, synchronous=FULL).

Your own database plugs in by the four methods of `Store`: in Postgres, a table
`runs(id text primary key, state jsonb)` and `INSERT ... ON CONFLICT (id) DO UPDATE` in `save`; in
Redis, `SET run:<id> <json>` (and `SCAN` for `runs`). Store the text of `state.dumps(state)` and
give `state.loads` what you stored: the schema check on load is the same for every store.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, runtime_checkable

from react_text.core.errors import ConfigError
from react_text.durable.state import RunState, dumps, loads

__all__ = ["FileStore", "SQLiteStore", "Store"]


@runtime_checkable
class Store(Protocol):
    def save(self, state: RunState) -> None:
        """Keep `state` under its run_id, replacing what was kept; all or nothing."""

    def load(self, run_id: str) -> RunState:
        """The state kept for `run_id` (checked); a ConfigError when there is none or it is damaged."""

    def runs(self) -> tuple[str, ...]:
        """The run ids kept, in order."""

    def delete(self, run_id: str) -> None:
        """Forget `run_id` (nothing when it is not kept)."""


class FileStore:
    """A JSON file a run, in `folder` (`<run_id>.json`); or one named file (`FileStore.single`)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self._single: Path | None = None

    @classmethod
    def single(cls, path: str | os.PathLike[str]) -> FileStore:
        """A store of one run, kept in `path` whatever its id."""
        store = cls(Path(path).parent)
        store._single = Path(path)
        return store

    @property
    def single_file(self) -> Path | None:
        """The one file this store keeps (FileStore.single), or None for a folder of runs."""
        return self._single

    def path(self, run_id: str) -> Path:
        if self._single is not None:
            return self._single
        if not run_id or "/" in run_id or "\\" in run_id or run_id.startswith("."):
            raise ValueError(f"a run id names a file: letters, digits, '-', '_', not {run_id!r}")
        return self.folder / f"{run_id}.json"

    def save(self, state: RunState) -> None:
        write_atomically(self.path(state.run_id), dumps(state).encode())

    def load(self, run_id: str) -> RunState:
        path = self.path(run_id)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise ConfigError(f"no run state at {path}") from None
        except OSError as exc:
            raise ConfigError(f"{path} cannot be read: {exc.strerror or exc}") from None
        return loads(data, where=str(path))

    def runs(self) -> tuple[str, ...]:
        if self._single is not None:
            return (loads(self._single.read_bytes(), where=str(self._single)).run_id,) if self._single.exists() else ()
        return tuple(sorted(p.stem for p in self.folder.glob("*.json")))

    def delete(self, run_id: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(run_id).unlink()


def write_atomically(path: Path, data: bytes) -> None:
    """Replace `path` with `data`, all or nothing: a temporary file beside it, fsynced, renamed over
    it, and the directory fsynced (so the rename itself survives a power cut)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _sync_directory(path.parent)


def _sync_directory(folder: Path) -> None:
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:  # a platform that cannot open a directory (Windows): the rename is what it has
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


class SQLiteStore:
    """Run states in one SQLite file: a row a run, written in one transaction (WAL). Safe for many
    threads of one process (a connection each) and for several processes (SQLite's own locking)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        self._local = threading.local()
        with self._connection() as db:
            db.execute("CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, state TEXT NOT NULL)")

    @contextlib.contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        try:
            db: sqlite3.Connection | None = getattr(self._local, "db", None)
            if db is None:
                db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=FULL")
                self._local.db = db
            yield db
        except sqlite3.DatabaseError as exc:  # a file that is no database, or a damaged one: the user's file
            raise ConfigError(f"{self.path} is not a run-state database SQLite can read ({exc})") from None

    def save(self, state: RunState) -> None:
        text = dumps(state)
        with self._connection() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.execute(
                    "INSERT INTO runs (id, state) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET state = excluded.state",
                    (state.run_id, text),
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def load(self, run_id: str) -> RunState:
        with self._connection() as db:
            row = db.execute("SELECT state FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise ConfigError(f"no run {run_id!r} in {self.path}")
        return loads(row[0], where=f"run {run_id!r} in {self.path}")

    def runs(self) -> tuple[str, ...]:
        with self._connection() as db:
            return tuple(r[0] for r in db.execute("SELECT id FROM runs ORDER BY id"))

    def delete(self, run_id: str) -> None:
        with self._connection() as db:
            db.execute("DELETE FROM runs WHERE id = ?", (run_id,))

    def close(self) -> None:
        """Close this thread's connection (others close when their threads end)."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None
