"""The `react-text` command: argument parsing and printing, no logic of its own."""

from react_text.cli.main import main

__all__ = ["main"]
