"""What the server is, as a backend keeps it: what it said (or what was given), where the grammar
goes and why, said once in the log and in a trace's run_start (`Identity.said`)."""

from __future__ import annotations

import dataclasses
import logging

from react_text.backends import identify, wire

__all__ = ["settle"]

log = logging.getLogger(__name__)


def settle(found: identify.Identity, *, grammar: bool, who: str) -> identify.Identity:
    """Keep what the server said (asked once per model, even when it could not be reached: the
    run's own call will say why) and say, once, where the grammar goes and why. `grammar`: the
    backend was built with grammar=True, which alone means llama.cpp for a server that does not say."""
    server = found.server
    if server is None and grammar:
        server = "llama.cpp"
        said = f"{found.said}; grammar=True alone means llama.cpp: the grammar goes in {identify.FIELDS[server]}"
    elif server is None:
        said = f"{found.said}: no grammar is sent (say server=... to choose where it goes)"
    elif grammar or server not in wire.GRAMMAR_SERVERS:
        said = f"{found.said}: {server}; the grammar goes {_where(server, found.version)}"
    else:
        said = f"{found.said}: {server}; a grammar would go {_where(server, found.version)} (grammar=True sends one)"
    if found.reasoning_parser and server in wire.GRAMMAR_SERVERS:
        said += f"; its reasoning parser ({found.reasoning_parser}) starts the grammar after the thinking"
    if grammar and server not in wire.GRAMMAR_SERVERS:
        log.warning("%s: %s (grammar=True is not honoured)", who, said)
    else:
        log.info("%s: %s", who, said)
    return dataclasses.replace(found, server=server, said=said)


def _where(server: wire.Server, version: str | None) -> str:
    if server == "vllm" and "guided_grammar" in wire.grammar_fields(server, "", version):
        return "in `guided_grammar` (EBNF, xgrammar: a vLLM before 0.12)"
    return ("in " + identify.FIELDS[server]) if server in wire.GRAMMAR_SERVERS else identify.FIELDS[server]
