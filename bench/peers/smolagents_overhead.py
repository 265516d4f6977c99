"""smolagents' ToolCallingAgent per-step overhead, with a canned model (run in a venv that has smolagents).

    /tmp/peer/bin/python bench/peers/smolagents_overhead.py

Prints "steps median_us_per_step" lines; bench/engine_overhead.py runs it and reads them.
"""

from __future__ import annotations

from smolagents import Tool, ToolCallingAgent
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, Model
from smolagents.monitoring import LogLevel
from timing import report  # bench/peers/timing.py, beside this script


class Echo(Tool):
    name = "echo"
    description = "Return the input."
    inputs = {"text": {"type": "string", "description": "the text"}}  # noqa: RUF012
    output_type = "string"

    def forward(self, text: str) -> str:
        return text


class Canned(Model):
    def __init__(self, steps: int) -> None:
        super().__init__(model_id="canned")
        self.steps = steps
        self.n = 0

    def generate(self, messages, stop_sequences=None, response_format=None, tools_to_call_from=None, **kwargs):  # type: ignore[no-untyped-def]
        self.n += 1
        if self.n < self.steps:
            name, arguments = "echo", {"text": f"item {self.n}"}
        else:
            name, arguments = "final_answer", {"answer": "42"}
        call = ChatMessageToolCall(ChatMessageToolCallFunction(arguments, name), f"call_{self.n}", "function")
        return ChatMessage(role="assistant", content="", tool_calls=[call])


def episode(steps: int) -> None:
    agent = ToolCallingAgent(tools=[Echo()], model=Canned(steps), max_steps=steps + 1, verbosity_level=LogLevel.OFF)
    agent.run("Find the answer.")


if __name__ == "__main__":
    report(episode)
