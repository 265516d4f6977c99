"""The parser corpus and the robustness scoreboard: `load`, `reading`, `score`, `scoreboard`.

A public face kept for imports written before 0.4: the code lives in `react_text.evaluation.corpus`."""

from react_text.evaluation.corpus import *  # noqa: F403
from react_text.evaluation.corpus import __all__ as __all__
