"""The exceptions react-text raises. What a model gets wrong is never one of them: a malformed reply,
an unknown tool or a tool that raises becomes an observation, and a run that hits a limit returns a
RunResult with its `stop_reason`.

    ReactTextError             base of everything below
    ├── ModelError             the model or the network failed (backends raise it; Agent.run
    │                          turns it into stop_reason "model_error")
    └── TokenizerError         the bundled BPE file is missing or does not match its hash

Programmer errors (two tools with one name, a bad argument) raise ValueError or TypeError.
"""

from __future__ import annotations


class ReactTextError(Exception):
    """Base class of react-text's exceptions."""


class ModelError(ReactTextError):
    """A model call failed: the server answered with an error, or could not be reached."""


class TokenizerError(ReactTextError):
    """The bundled BPE file is missing or does not match its published hash."""
