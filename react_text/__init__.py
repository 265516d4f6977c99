"""react-text: ReAct agents over a plain-text protocol, on any chat or completion model.

The public names are imported when first used (PEP 562), so `import react_text` costs little and a
program that never makes an `OpenAIChat` never imports `openai`; type checkers read the imports below.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from react_text.backends.local import LocalModel
    from react_text.backends.openai_api import OpenAIChat, OpenAICompletion
    from react_text.backends.scripted import ScriptedModel
    from react_text.core.agent import Agent, AsyncRun, Run
    from react_text.core.errors import ConfigError, ContextLengthError, ModelError, ReactTextError, TokenizerError
    from react_text.core.limits import Limits
    from react_text.core.protocol import STOP_SEQUENCES
    from react_text.core.streaming import (
        ActionReady,
        AStream,
        Observed,
        Revision,
        RunEnd,
        RunEvent,
        StepEnd,
        Stream,
        TextDelta,
    )
    from react_text.core.types import (
        Action,
        Actions,
        Final,
        Message,
        Model,
        ParseError,
        Reply,
        Request,
        RunResult,
        Step,
        Usage,
    )
    from react_text.grammar.protocol import protocol_grammar
    from react_text.parser import parse, render_action
    from react_text.parser.guard import cut
    from react_text.parser.several import parse_several
    from react_text.prompting import Prompting
    from react_text.tools.binding import Rest
    from react_text.tools.tool import Tool, tool

_WHERE = {  # each public name, and the module that defines it: imported when first used
    "LocalModel": "react_text.backends.local",
    "OpenAIChat": "react_text.backends.openai_api",
    "OpenAICompletion": "react_text.backends.openai_api",
    "ScriptedModel": "react_text.backends.scripted",
    "Agent": "react_text.core.agent",
    "AsyncRun": "react_text.core.agent",
    "Run": "react_text.core.agent",
    "ConfigError": "react_text.core.errors",
    "ContextLengthError": "react_text.core.errors",
    "ModelError": "react_text.core.errors",
    "ReactTextError": "react_text.core.errors",
    "TokenizerError": "react_text.core.errors",
    "Limits": "react_text.core.limits",
    "STOP_SEQUENCES": "react_text.core.protocol",
    "AStream": "react_text.core.streaming",
    "ActionReady": "react_text.core.streaming",
    "Observed": "react_text.core.streaming",
    "Revision": "react_text.core.streaming",
    "RunEnd": "react_text.core.streaming",
    "RunEvent": "react_text.core.streaming",
    "StepEnd": "react_text.core.streaming",
    "Stream": "react_text.core.streaming",
    "TextDelta": "react_text.core.streaming",
    "Action": "react_text.core.types",
    "Actions": "react_text.core.types",
    "Final": "react_text.core.types",
    "Message": "react_text.core.types",
    "Model": "react_text.core.types",
    "ParseError": "react_text.core.types",
    "Reply": "react_text.core.types",
    "Request": "react_text.core.types",
    "RunResult": "react_text.core.types",
    "Step": "react_text.core.types",
    "Usage": "react_text.core.types",
    "protocol_grammar": "react_text.grammar.protocol",
    "parse": "react_text.parser",
    "render_action": "react_text.parser",
    "cut": "react_text.parser.guard",
    "parse_several": "react_text.parser.several",
    "Prompting": "react_text.prompting",
    "Rest": "react_text.tools.binding",
    "Tool": "react_text.tools.tool",
    "tool": "react_text.tools.tool",
}

__all__ = [
    "STOP_SEQUENCES",
    "AStream",
    "Action",
    "ActionReady",
    "Actions",
    "Agent",
    "AsyncRun",
    "ConfigError",
    "ContextLengthError",
    "Final",
    "Limits",
    "LocalModel",
    "Message",
    "Model",
    "ModelError",
    "Observed",
    "OpenAIChat",
    "OpenAICompletion",
    "ParseError",
    "Prompting",
    "ReactTextError",
    "Reply",
    "Request",
    "Rest",
    "Revision",
    "Run",
    "RunEnd",
    "RunEvent",
    "RunResult",
    "ScriptedModel",
    "Step",
    "StepEnd",
    "Stream",
    "TextDelta",
    "TokenizerError",
    "Tool",
    "Usage",
    "cut",
    "parse",
    "parse_several",
    "protocol_grammar",
    "render_action",
    "tool",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'react_text' has no attribute {name!r}")
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
