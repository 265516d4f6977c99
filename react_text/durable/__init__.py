"""Durable runs: a run's state as a value (state.py), kept in a store (store.py), and its log
replayed into a fresh episode to resume it exactly (journal.py), by the keeper a run that keeps its
state tells each step (keeping.py). `Deny(reason)` and `Edit(input)` are decisions an approver or a
resume may give. See docs/concepts/durable-runs.md."""

from react_text.core.commands import Deny, Edit
from react_text.durable.journal import Journal, Replayed, replay, unknown_outcome
from react_text.durable.state import Intent, Pending, RunState, Snapshot, dumps, loads, settings_of
from react_text.durable.store import FileStore, SQLiteStore, Store

__all__ = [
    "Deny",
    "Edit",
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
