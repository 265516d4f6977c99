"""A GBNF grammar that admits only the protocol, generated from the registered tools.

llama.cpp (in-process or its servers) samples only tokens the grammar allows, so even a 135M model
writes `THOUGHT: ...` and then `ACTION: <a registered tool>[...]` or `FINAL: ...`, and nothing
after it. Inputs may hold balanced brackets and span no lines; a thought and an answer are one
line of at most 300 characters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

MAX_THOUGHT = 300  # characters: a small model otherwise fills its whole allowance with one thought
MAX_ANSWER = 300


def protocol_grammar(tool_names: Sequence[str], *, after_cue: bool = False, final: bool = True) -> str:
    """The grammar for one reply. `after_cue`: the prompt already ends with `THOUGHT:`.
    `final=False` admits only an action (a run that must use a tool before it answers)."""
    start = '" " thought' if after_cue else '"THOUGHT: " thought'
    choices = ["final"] if final or not tool_names else []
    rules = [
        f'root ::= {start} "\\n" directive',
        f"thought ::= [^\\n]{{1,{MAX_THOUGHT}}}",
        f'final ::= "FINAL: " [^\\n]{{1,{MAX_ANSWER}}}',
    ]
    if tool_names:
        names = " | ".join(json.dumps(name) for name in tool_names)
        choices.insert(0, "action")
        rules += [
            'action ::= "ACTION: " tool "[" input "]"',
            f"tool ::= {names}",
            'input ::= ([^\\[\\]\\n] | "[" input "]")+',
        ]
    rules.insert(1, f"directive ::= {' | '.join(choices)}")
    return "\n".join(rules) + "\n"


def after_cue(grammar: str) -> str:
    """The same grammar for a prompt that already ends with `THOUGHT:`."""
    return grammar.replace('root ::= "THOUGHT: " thought', 'root ::= " " thought', 1)
