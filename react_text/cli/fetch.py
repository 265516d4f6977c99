"""`react-text fetch`: a stronger local model downloaded (needs a network)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from react_text.cli.flags import subcommand

__all__ = [
    "add",
]

_EXAMPLES_FETCH = """examples:
  react-text fetch qwen2.5-0.5b
  react-text run --model qwen2.5-0.5b "What is 17 * 23 + 5?"
"""


def add(commands: Any) -> None:
    """The fetch command."""
    fetch = subcommand(
        commands,
        "fetch",
        "download a stronger local model (needs a network)",
        "Download a GGUF model to ~/.cache/react-text/models; then use it with --model NAME.",
        _EXAMPLES_FETCH,
    )
    fetch.add_argument("name", choices=sorted(_known_models()), metavar="NAME", help="one of: %(choices)s")
    fetch.set_defaults(handler=_fetch)


def _known_models() -> list[str]:
    from react_text.backends.download import MODELS

    return list(MODELS)


def _fetch(args: argparse.Namespace) -> int:
    from react_text.backends.download import fetch_model

    def progress(done: int, total: int | None) -> None:
        share = f" of {total / 1e6:.0f} MB" if total else ""
        sys.stderr.write(f"\r{done / 1e6:.0f} MB{share}")

    path = fetch_model(args.name, progress if sys.stderr.isatty() else None)
    print(f"\n{path}")
    return 0
