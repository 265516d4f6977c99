"""The core: how the protocol is spelled, the values that flow, the commands and events, the sans-IO
episode, and the Agent with its two drivers (sync and async: the awaits only)."""

__all__: list[str] = []
