"""Watching a run: the observer seam, traces and their schema, telemetry, trajectories, and the text
as it leaves the engine."""

__all__: list[str] = []
