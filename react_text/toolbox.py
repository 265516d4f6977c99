"""Built-in tools, safe by construction and usable offline: `from react_text.toolbox import calculator`.

A public face kept for imports written before 0.4: the code lives in `react_text.tools.toolbox`."""

from react_text.tools.toolbox import *  # noqa: F403
from react_text.tools.toolbox import __all__ as __all__
