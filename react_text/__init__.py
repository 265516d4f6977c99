"""react-text: ReAct agents over a plain-text protocol, on any chat or completion model."""

from .backends.local import LocalModel
from .backends.openai_api import OpenAIChat, OpenAICompletion
from .backends.scripted import ScriptedModel
from .binding import Rest
from .errors import ConfigError, ContextLengthError, ModelError, ReactTextError, TokenizerError
from .grammar import protocol_grammar
from .guard import cut
from .limits import Limits
from .loop import Agent, AsyncRun, Run
from .parser import parse, render_action
from .prompt_style import Prompting
from .protocol import STOP_SEQUENCES
from .several import parse_several
from .tools import Tool, tool
from .types import (
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
