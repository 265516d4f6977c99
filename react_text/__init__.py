"""react-text: ReAct agents over a plain-text protocol, on any chat or completion model."""

from react_text.backends.local import LocalModel
from react_text.backends.openai_api import OpenAIChat, OpenAICompletion
from react_text.backends.scripted import ScriptedModel
from react_text.core.agent import Agent, AsyncRun, Run
from react_text.core.errors import ConfigError, ContextLengthError, ModelError, ReactTextError, TokenizerError
from react_text.core.limits import Limits
from react_text.core.protocol import STOP_SEQUENCES
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

__all__ = [
    "STOP_SEQUENCES",
    "Action",
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
    "OpenAIChat",
    "OpenAICompletion",
    "ParseError",
    "Prompting",
    "ReactTextError",
    "Reply",
    "Request",
    "Rest",
    "Run",
    "RunResult",
    "ScriptedModel",
    "Step",
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
