"""The `react-text` command: argument parsing and printing, no logic of its own (`main` is its entry)."""

__all__: list[str] = []
