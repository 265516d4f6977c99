"""The messages smolagents' ToolCallingAgent sends for the two-lookups-and-add task (run in its venv).

    /tmp/peer/bin/python bench/peers/smolagents_prompts.py

Prints one JSON line per model call: the text of every message sent. bench/prompt_tokens.py
counts them with the same tokenizer it uses for react-text.
"""

from __future__ import annotations

import json

from smolagents import Tool, ToolCallingAgent
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, Model
from smolagents.monitoring import LogLevel

CALLS = [
    ("lookup", {"item": "train ticket"}),
    ("lookup", {"item": "hotel night"}),
    ("add", {"a": 89, "b": 145}),
    ("final_answer", {"answer": "234"}),
]


class Lookup(Tool):
    name = "lookup"
    description = "Return the price of one item."
    inputs = {"item": {"type": "string", "description": "the item"}}  # noqa: RUF012
    output_type = "string"

    def forward(self, item: str) -> str:
        return {"train ticket": "89", "hotel night": "145"}[item]


class Add(Tool):
    name = "add"
    description = "Add two numbers."
    inputs = {"a": {"type": "number", "description": "a"}, "b": {"type": "number", "description": "b"}}  # noqa: RUF012
    output_type = "number"

    def forward(self, a: float, b: float) -> float:
        return a + b


def text_of(message) -> str:  # type: ignore[no-untyped-def]
    content = message.content if hasattr(message, "content") else message["content"]
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


class Recording(Model):
    def __init__(self) -> None:
        super().__init__(model_id="recording")
        self.n = 0

    def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):  # type: ignore[no-untyped-def]
        print(json.dumps([text_of(m) for m in messages]))
        name, arguments = CALLS[self.n]
        self.n += 1
        call = ChatMessageToolCall(ChatMessageToolCallFunction(arguments, name), f"call_{self.n}", "function")
        return ChatMessage(role="assistant", content="", tool_calls=[call])


if __name__ == "__main__":
    agent = ToolCallingAgent(tools=[Lookup(), Add()], model=Recording(), max_steps=6, verbosity_level=LogLevel.OFF)
    agent.run("What do a train ticket and one hotel night cost together?")
