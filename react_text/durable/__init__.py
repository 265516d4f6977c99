"""Durable runs: a run's state as a value (state.py), kept in a store (store.py), and its log
replayed into a fresh episode to resume it exactly (journal.py). See docs/concepts/durable-runs.md."""

from react_text.durable.journal import Journal, Replayed, replay, unknown_outcome
from react_text.durable.state import Intent, Pending, RunState, Snapshot, dumps, loads, settings_of
from react_text.durable.store import FileStore, SQLiteStore, Store

__all__ = [
    "FileStore",
    "Intent",
    "Journal",
    "Pending",
    "Replayed",
    "RunState",
    "SQLiteStore",
    "Snapshot",
    "Store",
    "dumps",
    "loads",
    "replay",
    "settings_of",
    "unknown_outcome",
]
