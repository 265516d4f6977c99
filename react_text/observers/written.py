"""Text as it leaves the engine: into a JSON file (traces, results), and onto a terminal.

    written.json_text({"observation": "caf\\udce9"})   # '{"observation": "caf\\\\udce9"}': always encodes
    written.shown("page \\x1b[2J text")              # 'page \\\\x1b[2J text': nothing the terminal obeys

Text need not be valid Unicode: a file name or a terminal in Latin-1 reaches Python as lone
surrogates (`caf\\udce9`), and a tool or a model may say anything. The policy, in one place:

- A JSON file keeps the text exactly: `json_text` writes lone surrogates (and DEL and the C1
  controls) as JSON's `\\uXXXX` escapes, so the line is always UTF-8 and `json.loads` reads back the
  same string (a trace replays to the same steps). JSON escapes the other controls itself.
- A terminal sees text it cannot obey: `shown` writes every control character but newline and tab
  (ESC, BEL, CR, backspace, DEL, the C1 controls) and every lone surrogate as a Python escape
  (`\\x1b`, `\\r`, `\\udce9`), so a tool's page cannot clear the screen, set the clipboard or pass a
  `\\r` line for the engine's own. The CLI shows every model's and tool's text through it; a trace
  keeps the raw text.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["json_text", "shown"]

_SURROGATES = range(0xD800, 0xE000)
_C1 = range(0x7F, 0xA0)  # DEL and the C1 controls (0x9b is a CSI on an 8-bit terminal)
_IN_JSON = {c: f"\\u{c:04x}" for r in (_C1, _SURROGATES) for c in r}
_ON_TERMINAL = {
    **{c: f"\\x{c:02x}" for r in (range(0x20), _C1) for c in r if chr(c) not in "\n\t"},
    ord("\r"): "\\r",
    **{c: f"\\u{c:04x}" for c in _SURROGATES},
}


def json_text(value: Any, *, indent: int | None = None) -> str:
    """`json.dumps(value, ensure_ascii=False)`, with lone surrogates, DEL and the C1 controls
    escaped: valid UTF-8 whatever the text, read back by `json.loads` as it was."""
    return json.dumps(value, ensure_ascii=False, indent=indent).translate(_IN_JSON)


def shown(text: str) -> str:
    """`text` with every control character but newline and tab, and every lone surrogate,
    written as an escape (`\\x1b`, `\\r`, `\\udce9`): fit for a terminal, piped or not."""
    return text.translate(_ON_TERMINAL)
