"""Writes tests/data/families.jsonl: the four reply families of issue 34, labelled by hand.

    python tests/corpus/families.py

Each row is a reply as a model writes it in one of the shapes below, its right reading (labelled
before the parser read any of them), the tool names registered when it was written, and where the
shape comes from. The rows are written out here, not generated: the script only keeps them valid
JSON Lines in the corpus format (react_text.corpus).

Where the shapes come from (read in the sources, quoted in each row's "source"):
- continuations: ysymyth/ReAct hotpotqa.ipynb, whose harness asks again with the prompt ending in
  `Action {i}:` (stop "\\n") and takes the completion as the action ("Search[...]", "Finish[...]");
  prompts/fever.json (`Action 2:Finish[SUPPORTS]`, no space after the colon);
- call syntax: BFCL's prompt mode system prompt ("you MUST put it in the format of
  [func_name1(params_name1=params_value1, params_name2=params_value2...), func_name2(params)]"), the
  same words in Llama 3.2's and Gemma 3's chat templates, vLLM's pythonic_tool_parser.py (a Python
  list of calls, keyword arguments that are literals);
- markup calls: vLLM qwen3coder_tool_parser.py (`<tool_call>` / `<function=NAME>` /
  `<parameter=NAME>` ... `</parameter>`, one line break trimmed at each end of a value, and the
  `<function=` form without `<tool_call>`), hermes_tool_parser.py (`<tool_call>{"name", "arguments"}
  </tool_call>`), kimi_k2_tool_parser.py (`<|tool_calls_section_begin|>`, `<|tool_call_begin|>`,
  id `functions.NAME:0` whose name is `split(":")[0].split(".")[-1]`, `<|tool_call_argument_begin|>`,
  `<|tool_call_end|>`), mistral_tool_parser.py and SGLang's mistral_detector.py (`[TOOL_CALLS]`
  then a JSON array, or `NAME{...}` with the v11 tokenizer; `NAME[ARGS]{...}` later),
  llama.cpp common/chat.cpp common_chat_parse_llama_3_1 (`<|python_tag|>NAME.call(ARG=...)` and
  `{"name", "parameters"}`), XiaoConstantine/dspy-go pkg/modules/react_test.go (`thought:` /
  `action:` fields, `<action><tool_name>...</tool_name><arguments><arg key="...">...</arg>
  </arguments></action>`, `<action>Finish</action>` then `answer:`) and its examples'
  `<action><tool_name>toolname</tool_name><parameters>{"param": "value"}</parameters></action>`;
- code actions: smolagents' CodeAgent prompt ("Always provide a 'Thought:' and a 'Code:\\n```py'
  sequence ending with '```<end_code>' sequence") and tests/test_utils.py::test_parse_code_blobs;
  its later prompts open the code with `<code>` and close it with `</code>`.

A code action is read for a registered code tool, one whose name says it runs code (python,
python_interpreter, code_interpreter, ...): the input is the code. `final_answer(<literal>)` as the
whole code is the final answer (smolagents' own way to finish).

The negatives: a call quoted or shown as an example inside a thought, or in the middle of a
sentence, is no call; an unregistered name in a markup call or a call list is an action of that
(unknown) tool, not skipped; a FINAL and an action in one reply read as the first of them (outside
parallel mode the answer after an action is never taken).
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "families.jsonl"

PAPER = "ysymyth/ReAct hotpotqa.ipynb webthink(): llm(prompt + f'Thought {i}: {thought}\\nAction {i}:', stop=['\\n'])"
FEVER = "ysymyth/ReAct prompts/fever.json webthink_simple3 ('Action 2:Finish[SUPPORTS]')"
BFCL = "BFCL prompt mode system prompt: [func_name1(params_name1=params_value1, ...), func_name2(params)]"
LLAMA32 = "Llama 3.2 chat template (tool calls as a python list of calls); vLLM pythonic_tool_parser.py"
QWEN3C = "vLLM qwen3coder_tool_parser.py: <tool_call><function=NAME><parameter=NAME>value</parameter></function>"
HERMES = 'vLLM hermes_tool_parser.py: <tool_call>{"name", "arguments"}</tool_call>'
KIMI = "vLLM kimi_k2_tool_parser.py: <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}"
MISTRAL = "vLLM mistral_tool_parser.py and SGLang mistral_detector.py: [TOOL_CALLS]"
LLAMA31 = "llama.cpp common/chat.cpp common_chat_parse_llama_3_1: <|python_tag|>"
DSPYGO = "XiaoConstantine/dspy-go pkg/modules/react_test.go: action: <action><tool_name>...</tool_name>"
SMOL = "smolagents CodeAgent prompt: Thought: then Code:\\n```py ... ```<end_code>"

ROWS: list[tuple[str, str, str, str, dict[str, str], list[str], str]] = []
# (family, id suffix, source, text, expected, tools, mode) -- mode "chat" unless given


def act(tool: str, value: str) -> dict[str, str]:
    return {"kind": "action", "tool": tool, "input": value}


def fin(answer: str) -> dict[str, str]:
    return {"kind": "final", "answer": answer}


ERR = {"kind": "error"}


def row(family: str, source: str, text: str, expected: dict[str, str], tools: list[str], mode: str = "chat") -> None:
    ROWS.append((family, str(len([r for r in ROWS if r[0] == family]) + 1), source, text, expected, tools, mode))


# --- continuations -------------------------------------------------------------------------------
C = "continuations"
HOTPOT = ["search", "lookup"]
row(C, PAPER, " Search[Colorado orogeny]", act("search", "Colorado orogeny"), HOTPOT)
row(C, PAPER, " Finish[1,800 to 7,000 ft]", fin("1,800 to 7,000 ft"), HOTPOT)
row(C, PAPER, " Lookup[eastern sector]\n", act("lookup", "eastern sector"), HOTPOT)
row(C, PAPER, "Search[Milhouse]", act("search", "Milhouse"), HOTPOT)
row(C, FEVER, "Finish[SUPPORTS]", fin("SUPPORTS"), [])
row(C, FEVER + ", the answer with no tools registered", " Finish[NOT ENOUGH INFO]", fin("NOT ENOUGH INFO"), [])
row(
    C,
    "brief of issue 34: a numbered label in the middle of a line",
    "Thought 5: Jonny Craig has been a member of more bands than Pete Doherty. Action 5: Finish[Jonny Craig]",
    fin("Jonny Craig"),
    HOTPOT,
)
row(
    C,
    PAPER + "; the thought and its action on one line",
    " I need to search Adam Clayton Powell and find his documentary. Action 1: Search[Adam Clayton Powell]",
    act("search", "Adam Clayton Powell"),
    HOTPOT,
)
row(
    C,
    PAPER + "; the 'ohh...' branch: a thought, then the call without its Action label",
    "I need to search Colorado orogeny and find the area its eastern sector extends into.\nSearch[Colorado orogeny]",
    act("search", "Colorado orogeny"),
    HOTPOT,
)
row(
    C,
    FEVER,
    "Thought 1:I should search for Stranger Things, and see if it is set in Bloomington, Indiana.\n"
    "Action 1:Search[Stranger Things]",
    act("search", "Stranger Things"),
    HOTPOT,
)
row(
    C,
    PAPER + "; the registered spelling is returned",
    " SEARCH[Nikolaj Coster-Waldau]",
    act("search", "Nikolaj Coster-Waldau"),
    HOTPOT,
)
row(
    C,
    PAPER + "; a continuation of Thought 3: in completion mode",
    " The elevation range is 1,800 to 7,000 ft.\nAction 3: Finish[1,800 to 7,000 ft]",
    fin("1,800 to 7,000 ft"),
    HOTPOT,
    "completion",
)
# negatives
row(
    C,
    "constructed negative: a call named in the middle of a sentence, no label",
    "I could Search[Colorado orogeny] again, but the passage already gives the range.",
    ERR,
    HOTPOT,
)
row(
    C, "constructed negative: an unregistered name with no label is no call", "Wikipedia[Colorado orogeny]", ERR, HOTPOT
)
row(C, "constructed negative: no label and no registered names", "Search[Colorado orogeny]", ERR, [])
row(
    C,
    "constructed negative: the call shown as an example in the thought; the labelled action is the call",
    "Thought 2: the tool is used as Search[entity], so I search the band.\nAction 2: Search[Jonny Craig]",
    act("search", "Jonny Craig"),
    HOTPOT,
)
row(
    C,
    "constructed negative: FINAL and ACTION in one reply read as the first",
    "Search[Colorado orogeny]\nFINAL: 1,800 to 7,000 ft",
    act("search", "Colorado orogeny"),
    HOTPOT,
)
row(
    C,
    "constructed negative: a footnote bracket in prose",
    "The High Plains rise from 1,800 to 7,000 ft [1].",
    ERR,
    HOTPOT,
)

# --- call syntax ---------------------------------------------------------------------------------
S = "call syntax"
row(
    S,
    "brief of issue 34: finish(answer=...) as the action line",
    'Action: finish(answer="1,800 to 7,000 ft")',
    fin("1,800 to 7,000 ft"),
    ["search"],
)
row(
    S,
    "brief of issue 34: finish(answer=...) with no label",
    'finish(answer="1,800 to 7,000 ft")',
    fin("1,800 to 7,000 ft"),
    ["search"],
)
row(
    S,
    "brief of issue 34: search(query=...) as the action line",
    'Thought: I need the range.\nAction: search(query="Colorado orogeny")',
    act("search", 'query="Colorado orogeny"'),
    ["search"],
)
row(
    S,
    "brief of issue 34: search(query=...) with no label",
    'search(query="Colorado orogeny")',
    act("search", 'query="Colorado orogeny"'),
    ["search"],
)
row(
    S,
    BFCL,
    "[get_weather(location='New York', unit='celsius'), get_time(zone='EST')]",
    act("get_weather", "location='New York', unit='celsius'"),
    ["get_weather", "get_time"],
)
row(
    S,
    LLAMA32 + "; after prose",
    "I'll check the weather first.\n\n[get_weather(location='New York', unit='celsius'), f(x=1)]",
    act("get_weather", "location='New York', unit='celsius'"),
    ["get_weather", "f"],
)
row(
    S,
    BFCL + "; one call, no tools registered",
    "[calculate_area(base=10, height=5)]",
    act("calculate_area", "base=10, height=5"),
    [],
)
row(
    S,
    BFCL + "; an unregistered name is an unknown tool, not skipped",
    "[book_flight(destination='Rome', date='2024-05-01')]",
    act("book_flight", "destination='Rome', date='2024-05-01'"),
    ["get_weather"],
)
row(S, "constructed: finish with a positional answer", 'Action: Finish("Jonny Craig")', fin("Jonny Craig"), ["search"])
row(
    S,
    "constructed: final_answer(answer=...) as the whole reply",
    "final_answer(answer='Shanghai')",
    fin("Shanghai"),
    ["web_search"],
)
row(
    S,
    "constructed: an argument holding a code fence",
    'Thought: write the install note\nAction: write_file(path="INSTALL.md", content="```bash\\npip install react-text\\n```")',
    act("write_file", 'path="INSTALL.md", content="```bash\\npip install react-text\\n```"'),
    ["write_file"],
)
row(
    S,
    "constructed: an argument holding protocol words, no label",
    'write_note(text="FINAL: send the report\\nACTION: file it")',
    act("write_note", 'text="FINAL: send the report\\nACTION: file it"'),
    ["write_note"],
)
row(
    S,
    "constructed: an argument holding protocol words on their own lines",
    "Action: write_note(text='''\nTHOUGHT: draft\nFINAL: not yet\n''')",
    act("write_note", "text='''\nTHOUGHT: draft\nFINAL: not yet\n'''"),
    ["write_note"],
)
# negatives
row(
    S,
    "constructed negative: a call quoted in the thought, then the answer",
    'Thought: it would be search(query="Colorado orogeny"), but the passage is here already.\nFinal Answer: 1,800 to 7,000 ft',
    fin("1,800 to 7,000 ft"),
    ["search"],
)
row(
    S,
    "constructed negative: a call in the middle of a sentence, no label",
    'I could call search(query="Colorado orogeny") but I already know it is 7,000 ft.',
    ERR,
    ["search"],
)
row(
    S,
    "constructed negative: prose in parentheses",
    "The eastern sector (the High Plains) rises to 7,000 ft.",
    ERR,
    ["search"],
)
row(
    S,
    "constructed negative: FINAL and ACTION in one reply read as the first",
    'search(query="Colorado orogeny")\nFINAL: 1,800 to 7,000 ft',
    act("search", 'query="Colorado orogeny"'),
    ["search"],
)
row(
    S,
    "constructed negative: a bracketed list of words is no call list",
    "The candidates are [Colorado, Wyoming, Nebraska].",
    ERR,
    ["search"],
)

# --- markup calls --------------------------------------------------------------------------------
M = "markup calls"
row(
    M,
    QWEN3C,
    "<tool_call>\n<function=execute_bash>\n<parameter=command>\nls -la\n</parameter>\n</function>\n</tool_call>",
    act("execute_bash", '{"command": "ls -la"}'),
    ["execute_bash", "str_replace_editor"],
)
row(
    M,
    QWEN3C + " (the back-off form without <tool_call>, as coding agents write it)",
    "Let me look at the files first.\n<function=execute_bash>\n<parameter=command>ls</parameter>\n</function>",
    act("execute_bash", '{"command": "ls"}'),
    ["execute_bash"],
)
row(
    M,
    QWEN3C + "; two parameters",
    "<function=str_replace_editor>\n<parameter=command>view</parameter>\n<parameter=path>/repo/setup.py</parameter>\n</function>",
    act("str_replace_editor", '{"command": "view", "path": "/repo/setup.py"}'),
    ["execute_bash", "str_replace_editor"],
)
row(
    M,
    QWEN3C + "; a parameter holding protocol words and a fence",
    "<function=str_replace_editor>\n<parameter=command>create</parameter>\n<parameter=path>/repo/NOTES.md</parameter>\n"
    "<parameter=file_text>\nAction: none\nFINAL: draft\n```py\nprint(1)\n```\n</parameter>\n</function>",
    act(
        "str_replace_editor",
        '{"command": "create", "path": "/repo/NOTES.md", "file_text": "Action: none\\nFINAL: draft\\n```py\\nprint(1)\\n```"}',
    ),
    ["execute_bash", "str_replace_editor"],
)
row(
    M,
    QWEN3C + "; an unregistered name is an unknown tool, not skipped",
    "<function=delete_repository>\n<parameter=name>react-text</parameter>\n</function>",
    act("delete_repository", '{"name": "react-text"}'),
    ["execute_bash"],
)
row(
    M,
    HERMES,
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    act("get_weather", '{"city": "Paris"}'),
    ["get_weather"],
)
row(
    M,
    HERMES + "; thinking and prose first",
    '<think>\nThe user wants the weather.\n</think>\n\nI will check.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
    act("get_weather", '{"city": "Paris"}'),
    ["get_weather"],
)
row(
    M,
    KIMI,
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    '{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>',
    act("get_weather", '{"city": "Beijing"}'),
    ["get_weather"],
)
row(
    M,
    KIMI + "; prose first, the id without its namespace",
    "I'll look that up.\n<|tool_calls_section_begin|>\n<|tool_call_begin|>search:1<|tool_call_argument_begin|>"
    '{"query": "Colorado orogeny"}<|tool_call_end|>\n<|tool_calls_section_end|>',
    act("search", '{"query": "Colorado orogeny"}'),
    ["search"],
)
row(
    M,
    MISTRAL + " (the JSON array form)",
    '[TOOL_CALLS] [{"name": "get_current_weather", "arguments": {"location": "Boston, MA", "unit": "fahrenheit"}}]',
    act("get_current_weather", '{"location": "Boston, MA", "unit": "fahrenheit"}'),
    ["get_current_weather"],
)
row(
    M,
    MISTRAL + " (v11 tokenizer: NAME{...})",
    '[TOOL_CALLS]add{"a": 3.5, "b": 4}',
    act("add", '{"a": 3.5, "b": 4}'),
    ["add"],
)
row(
    M,
    MISTRAL + " (NAME[ARGS]{...})",
    '[TOOL_CALLS]get_weather[ARGS]{"location": "NYC"}',
    act("get_weather", '{"location": "NYC"}'),
    ["get_weather"],
)
row(
    M,
    LLAMA31 + " (built-in tool: NAME.call(ARG=...))",
    '<|python_tag|>brave_search.call(query="current weather in Menlo Park, California")<|eom_id|>',
    act("brave_search", 'query="current weather in Menlo Park, California"'),
    ["brave_search", "wolfram_alpha"],
)
row(
    M,
    LLAMA31 + ' ({"name", "parameters"})',
    '\n\n<|python_tag|>{"type": "function", "name": "get_github_readme", "parameters": {"repository": "pharia-kernel"}}',
    act("get_github_readme", '{"repository": "pharia-kernel"}'),
    ["get_github_readme"],
)
row(
    M,
    DSPYGO,
    'thought:\nI should use the tool\n\naction:\n<action><tool_name>test_tool</tool_name><arguments><arg key="question">'
    "What is the meaning of\nlife?</arg></arguments></action>\n",
    act("test_tool", '{"question": "What is the meaning of\\nlife?"}'),
    ["test_tool"],
)
row(
    M,
    DSPYGO + " (<action>Finish</action>, then answer:)",
    "thought:\nI have the answer\n\naction:\n<action>Finish</action>\n\nanswer:\n42\n",
    fin("42"),
    ["test_tool"],
)
row(
    M,
    "XiaoConstantine/dspy-go examples: <action><tool_name>toolname</tool_name><parameters>{...}</parameters></action>, under ## thought: headers",
    '## thought:\nI need the population of Shanghai.\n\n## action:\n<action><tool_name>search</tool_name><parameters>{"query": "Shanghai population"}</parameters></action>',
    act("search", '{"query": "Shanghai population"}'),
    ["search", "calculator"],
)
# negatives
row(
    M,
    "constructed negative: a markup call quoted in a thought, then the answer",
    "Thought: this harness calls tools as <function=name><parameter=p>v</parameter></function>, but I know it.\nFinal Answer: 42",
    fin("42"),
    ["execute_bash"],
)
row(
    M,
    "constructed negative: FINAL and a markup call in one reply read as the first",
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\nFINAL: sunny',
    act("get_weather", '{"city": "Paris"}'),
    ["get_weather"],
)
row(
    M,
    "constructed negative: the answer first, a markup call after it",
    'FINAL: sunny\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    fin("sunny"),
    ["get_weather"],
)
row(
    M,
    "constructed negative: a function tag with no name",
    "<function=>\n<parameter=command>ls</parameter>\n</function>",
    ERR,
    ["execute_bash"],
)

# --- code actions --------------------------------------------------------------------------------
K = "code actions"
PY = ["python_interpreter", "web_search"]
row(
    K,
    SMOL,
    "Thought: I will use Python code to compute the result.\nCode:\n```py\nresult = 5 + 3 + 1294.678\nprint(result)\n```<end_code>",
    act("python_interpreter", "result = 5 + 3 + 1294.678\nprint(result)"),
    PY,
)
row(
    K,
    SMOL + "; the answer through final_answer",
    'Thought: Now I know that Shanghai has the highest population.\nCode:\n```py\nfinal_answer("Shanghai")\n```<end_code>',
    fin("Shanghai"),
    PY,
)
row(
    K,
    "smolagents tests/test_utils.py::test_parse_code_blobs",
    "\nHere is how to solve the problem:\nCode:\n```py\nimport numpy as np\n```<end_code>\n",
    act("python", "import numpy as np"),
    ["python"],
)
row(
    K,
    SMOL + "; ```python and no <end_code>",
    'Thought: I need to find the interview.\nCode:\n```python\npages = web_search(query="1979 interview Stanislaus Ulam")\nprint(pages)\n```',
    act("python_interpreter", 'pages = web_search(query="1979 interview Stanislaus Ulam")\nprint(pages)'),
    PY,
)
row(
    K,
    SMOL + "; <end_code> without the Code: label",
    "Thought: compute it.\n```py\nprint(88 ** 0.36)\n```<end_code>",
    act("python_interpreter", "print(88 ** 0.36)"),
    PY,
)
row(
    K,
    "smolagents code_agent.yaml (later): code opened with <code> and closed with </code>",
    "Thought: I will read the first page.\n<code>\nwhole_page = visit_webpage(url)\nprint(whole_page)\n</code>",
    act("python_interpreter", "whole_page = visit_webpage(url)\nprint(whole_page)"),
    PY,
)
row(
    K,
    SMOL + "; code holding protocol words",
    "Thought: print a reminder.\nCode:\n```py\nprint(\"FINAL: not yet\")\nprint('Action: none')\n```<end_code>",
    act("python_interpreter", "print(\"FINAL: not yet\")\nprint('Action: none')"),
    PY,
)
row(
    K,
    SMOL + "; another code tool name",
    "Thought: run it.\nCode:\n```py\nimport math\nprint(math.sqrt(2))\n```<end_code>",
    act("code_interpreter", "import math\nprint(math.sqrt(2))"),
    ["code_interpreter"],
)
row(
    K,
    SMOL + "; final_answer with a number",
    "Code:\n```py\nfinal_answer(1302.678)\n```<end_code>",
    fin("1302.678"),
    PY,
)
row(
    K,
    SMOL + "; a code block with a Thought label in bold",
    "**Thought:** multiply.\n**Code:**\n```py\nprint(17 * 23)\n```<end_code>",
    act("python_interpreter", "print(17 * 23)"),
    PY,
)
# negatives
row(
    K,
    "constructed negative: code with no code tool registered",
    'Thought: search.\nCode:\n```py\npages = web_search(query="x")\nprint(pages)\n```<end_code>',
    ERR,
    ["web_search"],
)
row(
    K,
    "constructed negative: a fenced example in prose, no Code: label, no <end_code>",
    "You could compute it like this:\n```py\nprint(2 + 2)\n```",
    ERR,
    PY,
)
row(
    K,
    "constructed negative: a fence inside the final answer",
    "Thought: the user wants the script.\nFinal Answer: Here it is:\n```py\nprint('hi')\n```",
    fin("Here it is:\n```py\nprint('hi')\n```"),
    PY,
)
row(
    K,
    "constructed negative: FINAL and a code action in one reply read as the first",
    "Code:\n```py\nprint(2 ** 10)\n```<end_code>\nFinal Answer: 1024",
    act("python_interpreter", "print(2 ** 10)"),
    PY,
)
row(
    K,
    "constructed negative: 'Code:' in the middle of a thought's sentence",
    "Thought: I will write a Code: block after I search.\nAction: web_search[Stanislaus Ulam interview]",
    act("web_search", "Stanislaus Ulam interview"),
    PY,
)


def main() -> None:
    lines = []
    for family, number, source, text, expected, tools, mode in ROWS:
        slug = family.replace(" ", "-")
        record = {
            "id": f"fam-{slug}-{int(number):03d}",
            "category": f"family: {family}",
            "source": source,
            "mode": mode,
            "text": text,
            "expected": expected,
            "tools": tools,
        }
        lines.append(json.dumps(record, ensure_ascii=False))
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(lines)} replies")


if __name__ == "__main__":
    main()
