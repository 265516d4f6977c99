"""Record what SmolLM2-135M writes when prompted in other agents' dialects (one-off; kept for the record).

    flock /tmp/react-text-llama.lock python tests/corpus/record_dialects.py > /tmp/dialects.jsonl

Three prompts, each zero-shot and with one worked example: LangChain's ReAct (MRKL) template,
LangChain's structured-chat template, and react-text's own protocol; the tools have names as people
register them (spaces, a hyphen, a dot, Chinese). Completion mode, temperature 0, 120 tokens, stop
at a line-start observation label. Each distinct reply is printed once as JSON with its source; the
expected readings were then labelled by hand into round2.jsonl (ids rec2-*) before any parser ran.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from react_text.backends.local import LocalModel
from react_text.core.types import Request

TOOLS = [
    ("Wikipedia Research Tool", "look a topic up on Wikipedia; input: a search query"),
    ("Use Requests", "fetch a URL; input: the URL"),
    ("get-weather", "the weather in a city; input: the city"),
    ("fs.read_file", "read a file; input: the path"),
    ("加法", "add two numbers; input: two numbers separated by a comma"),
]
TASKS = [
    "Who wrote the novel Dune?",
    "What is the weather in Paris today?",
    "What does the file notes/todo.txt say?",
    "What is 17 plus 25?",
    "Fetch https://example.com and tell me its title.",
    "When was the Eiffel Tower built?",
]
STOP = ("\nObservation:", "\nOBSERVATION:")


def mrkl(task: str) -> str:
    tools = "\n".join(f"{n}: {d}" for n, d in TOOLS)
    names = ", ".join(n for n, _ in TOOLS)
    return (
        "Answer the following questions as best you can. You have access to the following tools:\n\n"
        f"{tools}\n\nUse the following format:\n\nQuestion: the input question you must answer\n"
        "Thought: you should always think about what to do\n"
        f"Action: the action to take, should be one of [{names}]\n"
        "Action Input: the input to the action\nObservation: the result of the action\n"
        "... (this Thought/Action/Action Input/Observation can repeat N times)\n"
        "Thought: I now know the final answer\nFinal Answer: the final answer to the original input question\n\n"
        f"Begin!\n\nQuestion: {task}\nThought:"
    )


def structured(task: str) -> str:
    tools = "\n".join(f"{n}: {d}, args: {{'input': {{'type': 'string'}}}}" for n, d in TOOLS)
    names = ", ".join(f'"{n}"' for n, _ in TOOLS)
    return (
        "Respond to the human as helpfully and accurately as possible. You have access to the following tools:\n\n"
        f"{tools}\n\nUse a json blob to specify a tool by providing an action key (tool name) and an "
        "action_input key (tool input).\n\n"
        f'Valid "action" values: "Final Answer" or {names}\n\n'
        'Provide only ONE action per $JSON_BLOB, as shown:\n\n```\n{\n  "action": $TOOL_NAME,\n'
        '  "action_input": $INPUT\n}\n```\n\n'
        "Follow this format:\n\nQuestion: input question to answer\nThought: consider previous and subsequent steps\n"
        "Action:\n```\n$JSON_BLOB\n```\nObservation: action result\n... (repeat Thought/Action/Observation N times)\n"
        'Thought: I know what to respond\nAction:\n```\n{\n  "action": "Final Answer",\n'
        '  "action_input": "Final response to human"\n}\n```\n\n'
        "Begin! Reminder to ALWAYS respond with a valid json blob of a single action. Use tools if necessary. "
        "Respond directly if appropriate. Format is Action:```$JSON_BLOB```then Observation\n\n"
        f"Question: {task}\nThought:"
    )


def protocol(task: str) -> str:
    tools = "\n".join(f"{n}[input]   {d}" for n, d in TOOLS)
    return (
        "Solve the task one step at a time. Tools:\n"
        f"{tools}\n"
        "Reply in exactly this format, one action per reply:\nTHOUGHT: your reasoning\nACTION: tool[input]\n"
        "When you know the answer, reply:\nTHOUGHT: your reasoning\nFINAL: your answer\n\n"
        f"QUESTION: {task}\nTHOUGHT:"
    )


MRKL_SHOT = (
    "Question: Who painted the Mona Lisa?\nThought: I should look it up.\nAction: Wikipedia Research Tool\n"
    "Action Input: Mona Lisa painter\nObservation: The Mona Lisa was painted by Leonardo da Vinci.\n"
    "Thought: I now know the final answer\nFinal Answer: Leonardo da Vinci\n\n"
)
STRUCTURED_SHOT = (
    'Question: What is the weather in Rome?\nThought: I need the weather tool.\nAction:\n```\n{\n  "action": '
    '"get-weather",\n  "action_input": "Rome"\n}\n```\nObservation: sunny, 24 C\nThought: I know what to respond\n'
    'Action:\n```\n{\n  "action": "Final Answer",\n  "action_input": "It is sunny in Rome, 24 C."\n}\n```\n\n'
)
PROTOCOL_SHOT = (
    "QUESTION: What is the weather in Rome?\nTHOUGHT: I need the weather tool.\nACTION: get-weather[Rome]\n"
    "OBSERVATION: sunny, 24 C\nTHOUGHT: I have it.\nFINAL: It is sunny in Rome, 24 C.\n\n"
)


def with_example(build: Callable[[str], str], example: str, before: str) -> Callable[[str], str]:
    """The same prompt with one worked example put before the last question."""

    def built(task: str) -> str:
        text = build(task)
        at = text.rindex(before)
        return text[:at] + example + text[at:]

    return built


def main() -> None:
    model = LocalModel(api="completion", n_threads=2)
    runs = {
        "": [
            ("langchain-mrkl", mrkl),
            ("langchain-structured-chat", structured),
            ("react-text-registered-names", protocol),
        ],
        " one-shot": [
            ("langchain-mrkl", with_example(mrkl, MRKL_SHOT, "Question: ")),
            ("langchain-structured-chat", with_example(structured, STRUCTURED_SHOT, "Question: ")),
            ("react-text-registered-names", with_example(protocol, PROTOCOL_SHOT, "QUESTION: ")),
        ],
    }
    for shot, styles in runs.items():
        seen: set[str] = set()
        for style, build in styles:
            for task in TASKS:
                reply = model.generate(Request(build(task), STOP, 120))
                if reply.text in seen:
                    continue
                seen.add(reply.text)
                source = f"SmolLM2-135M-Instruct Q4_1, {style}{shot} prompt, completion, temperature 0, task {task!r}"
                print(json.dumps({"source": source, "mode": "completion", "text": reply.text}, ensure_ascii=False))


if __name__ == "__main__":
    main()
