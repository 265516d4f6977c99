"""Code actions: smolagents' CodeAgent writes its action as code, not as a call.

    Thought: I will compute it.
    Code:
    ```py
    result = 5 + 3 + 1294.678
    print(result)
    ```<end_code>

The code is the input of the registered code tool, a tool that runs code (its name is one of
`CODE_TOOLS`: python, python_interpreter, code_interpreter, ...). `final_answer(<literal>)` as the
whole code is the final answer, with or without a code tool. The code opens after a `Code:` label
at a line start (any case, decorated as labels are: "**Code:**") with a fence on the next line, or
with a fence at a line start whose closing is followed by `<end_code>`, or after `<code>` at a
line start up to `</code>` (smolagents' later prompts). A fence in prose with neither is an
example, not an action; without a code tool, code other than `final_answer(...)` is no action.
"""

from __future__ import annotations

import ast
import re

from react_text.core.types import Action, Final, Parsed
from react_text.parser.common import Names

__all__ = ["CODE_TOOLS", "code_action", "code_start"]

CODE_TOOLS = (
    "python_interpreter", "python", "code_interpreter", "python_repl", "ipython", "run_python",
    "execute_python", "python_exec", "run_code", "execute_code", "code", "jupyter",
)  # fmt: skip
_FOLDED = {name: i for i, name in enumerate(CODE_TOOLS)}
_LABEL = re.compile(r"[ \t>#*_\-]{0,12}+[Cc][Oo][Dd][Ee][ \t*_]{0,6}+:[ \t*_]{0,6}+\n[ \t]*+(?=`{3}|~{3})")
_FENCE = re.compile(r"(?P<fence>`{3,}+|~{3,}+)[ \t]*+(?:py|python|python3)?[ \t]*+\n")
_END_CODE = "<end_code>"
_ANSWER_SIZE = 4096


def code_start(text: str, at: int) -> int | None:
    """Where the code's fence (or `<code>` tag) begins when a code action opens at the line start
    `at`, else None."""
    label = _LABEL.match(text, at, at + 256)
    if label is not None:
        return label.end()
    if text.startswith("<code>", at):
        return at
    fence = _FENCE.match(text, at)
    if fence is not None:
        close = text.find("\n" + fence.group("fence"), fence.end())
        if close != -1 and text.startswith(_END_CODE, close + 1 + len(fence.group("fence"))):
            return at
    return None


def code_action(text: str, line: int, thought: str, names: Names | None) -> Parsed | None:
    """The code action that opens at the line start `line` (its label, fence or tag), or None."""
    at = code_start(text, line)
    if at is None:
        return None
    if text.startswith("<code>", at):
        close = text.find("</code>", at)
        if close == -1:
            return None
        code, after = text[at + len("<code>") : close], close + len("</code>")
    else:
        fence = _FENCE.match(text, at)
        if fence is None:
            return None
        run = fence.group("fence")
        close = text.find("\n" + run, fence.end() - 1)
        if close == -1:
            return None
        code, after = text[fence.end() : close + 1], close + 1 + len(run)
    if text.startswith(_END_CODE, after):
        after += len(_END_CODE)
    code = code.strip("\n")
    answer = _final_answer(code)
    if answer is not None:
        return Final(answer, thought, text[after:])
    tool = _code_tool(names)
    if tool is None or not code.strip():
        return None
    return Action(tool, code, thought, text[after:], True)


def _code_tool(names: Names | None) -> str | None:
    """The registered code tool (the first of CODE_TOOLS registered, any case), or None."""
    if names is None:
        return None
    found = [(rank, name) for name in names.exact if (rank := _FOLDED.get(name.casefold())) is not None]
    return min(found)[1] if found else None


def _final_answer(code: str) -> str | None:
    """The answer when the whole code is `final_answer(<literal>)`: a string's text, a number as written."""
    if not code.lstrip().startswith("final_answer(") or len(code) > _ANSWER_SIZE:
        return None
    try:
        tree = ast.parse(code.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not (isinstance(tree, ast.Call) and len(tree.args) + len(tree.keywords) == 1):
        return None
    value = tree.args[0] if tree.args else tree.keywords[0].value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.Constant) and isinstance(value.value, int | float) and not isinstance(value.value, bool):
        return ast.get_source_segment(code.strip(), value)
    return None
