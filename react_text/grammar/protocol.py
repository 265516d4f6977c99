"""A GBNF grammar that admits only the protocol, generated from the registered tools.

llama.cpp (in-process or its servers) samples only tokens the grammar allows, so even a 135M model
writes `THOUGHT: ...` and then `ACTION: <a registered tool>[...]` or `FINAL: ...`, and nothing
after it. Inputs may hold balanced brackets and span no lines; a thought and an answer are one
line of at most 200 characters.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from react_text.core.protocol import ACTION_LABEL, FINAL_LABEL, THINK_CLOSE, THINK_OPEN, THOUGHT_LABEL
from react_text.grammar import gbnf
from react_text.grammar import inputs as grammar_inputs

if TYPE_CHECKING:
    from react_text.tools.tool import Tool

__all__ = [
    "MAX_ANSWER",
    "after_cue",
    "ignored",
    "ignored_words",
    "protocol_grammar",
    "with_thinking",
]

# The protocol's words, as GBNF string literals: each label with the space after it, the think tags.
_THOUGHT, _ACTION, _FINAL = (json.dumps(f"{label} ") for label in (THOUGHT_LABEL, ACTION_LABEL, FINAL_LABEL))
_OPEN, _CLOSE = json.dumps(THINK_OPEN), json.dumps(THINK_CLOSE)

# Characters. A small model otherwise fills its whole allowance with one thought, or with one
# answer said over and over; both together stay within a 256-token allowance for most text.
MAX_THOUGHT = 200
MAX_ANSWER = 200


def protocol_grammar(
    tool_names: Sequence[str | Tool],
    *,
    after_cue: bool = False,
    final: bool = True,
    action: bool = True,
    actions: int = 1,
    think: bool = False,
) -> str:
    """The grammar for one reply. `after_cue`: the model goes on after `THOUGHT:` (a completion
    transcript ends with it; a chat turn may be prefilled with it, `Request.prefill`).
    `final=False` admits only an action (a run that must use a tool before it answers);
    `action=False` only a final answer (the forced final call at a limit). `actions`: the most
    ACTION lines a reply may hold (more than 1 with parallel actions). `think`: a free <think>
    block may come first (`with_thinking`). A tool given as a Tool, not a name, has its input
    typed by what it takes (`grammar_inputs`); a name takes any bracket-balanced text."""
    if think:
        return with_thinking(
            protocol_grammar(tool_names, after_cue=after_cue, final=final, action=action, actions=actions)
        )
    if not (final or action):
        raise ValueError("a reply must admit an action or a final answer")
    start = '" " thought' if after_cue else f"{_THOUGHT} thought"
    tool_names = tool_names if action else ()
    choices = ["final"] if final or not tool_names else []
    rules = [
        f'root ::= {start} "\\n" directive',
        f"thought ::= [^\\n]{{1,{MAX_THOUGHT}}}",
        f"final ::= {_FINAL} [^\\n]{{1,{MAX_ANSWER}}}",
    ]
    if tool_names:
        choices.insert(0, "action" if actions == 1 else f'action ("\\n" action){{0,{actions - 1}}}')
    if tool_names and all(isinstance(t, str) for t in tool_names):
        names = " | ".join(json.dumps(name) for name in tool_names)
        rules += [
            f'action ::= {_ACTION} tool "[" input "]"',
            f"tool ::= {names}",
            'input ::= ([^\\[\\]\\n] | "[" input "]")+',
        ]
    elif tool_names:
        rules += _typed_calls(tool_names)
    rules.insert(1, f"directive ::= {' | '.join(choices)}")
    return "\n".join(rules) + "\n"


def _typed_calls(tools: Sequence[str | Tool]) -> list[str]:
    """One call rule a tool: its name, then its input as what it takes lets it be written."""
    calls, rules, used = [], [], set()
    for number, one in enumerate(tools):
        if isinstance(one, str):
            calls.append(f'{json.dumps(one)} "[" input "]"')
            used.add("input")
            continue
        rule, needs = grammar_inputs.input_rule(one, f"in-{number}")
        calls.append(f'{json.dumps(one.name)} "[" in-{number} "]"')
        rules.append(rule)
        used |= needs
    return [
        f"action ::= {_ACTION} ({' | '.join(calls)})",
        *rules,
        *(grammar_inputs.VALUE_RULES[name] for name in sorted(used)),
    ]


def after_cue(grammar: str) -> str:
    """The same grammar for a model that goes on after `THOUGHT:` (`protocol_grammar(after_cue=True)`
    writes it so at once)."""
    if grammar.startswith(_THINK_ROOT):
        return grammar.replace(_THINK_ROOT, _THINK_AFTER_CUE, 1)
    return grammar.replace(f"root ::= {_THOUGHT} thought", 'root ::= " " thought', 1)


# Thinking first: a free <think> block before the protocol, for a model that reasons before it
# answers (the grammar would otherwise force `THOUGHT:` at its first token). The block holds any
# text but its closing tag; after the `THOUGHT:` cue of a transcript it comes before the label,
# written again. A server with a reasoning parser of its own (SGLang's, vLLM's) starts the grammar
# after the thinking itself; the block, being optional, does no harm there either.
_THINK_ROOT = f"root ::= think? {_THOUGHT} thought"
_THINK_AFTER_CUE = f'root ::= " " (think {_THOUGHT})? thought'
# Any text but the closing tag: a character other than the tag's first, or each start of the tag
# followed by a character other than its next one.
_NOT_CLOSE = " | ".join(
    [
        f"[^{THINK_CLOSE[0]}]",
        *(f"{json.dumps(THINK_CLOSE[:n])} [^{THINK_CLOSE[n]}]" for n in range(1, len(THINK_CLOSE))),
    ]
)
THINK_RULES = f'think ::= {_OPEN} think-text {_CLOSE} "\\n"{{0,2}}\nthink-text ::= ({_NOT_CLOSE})*\n'


def with_thinking(grammar: str) -> str:
    """The same grammar with an optional free <think> block before the protocol (unchanged when
    it has one already, or when it is not one written here)."""
    if "\nthink ::= " in grammar:
        return grammar
    for plain, thinking in (
        (f"root ::= {_THOUGHT} thought", _THINK_ROOT),
        ('root ::= " " thought', _THINK_AFTER_CUE),
    ):
        if grammar.startswith(plain):
            return grammar.replace(plain, thinking, 1) + THINK_RULES
    return grammar


def ignored(grammar: str, text: str, *, cut: bool = False) -> bool:
    """Whether a reply to a request that carried `grammar` could not have been written under it
    (a server that takes the field but does not apply it). `cut`: the reply stopped at its
    allowance, so only its beginning is known. Lenient where a server may add what the grammar
    does not say: a leading <think> block (a server that starts the grammar after the thinking)
    and whitespace at the end. A grammar not written here cannot be judged: never ignored."""
    body = text
    if body.lstrip().startswith(THINK_OPEN) and THINK_CLOSE in body:
        body = body[body.index(THINK_CLOSE) + len(THINK_CLOSE) :].lstrip("\n")
    try:
        return not gbnf.admits(grammar, body.rstrip(), cut=cut)
    except gbnf.GrammarError:
        return False


def ignored_words(where: str, text: str) -> str:
    """What is said, once, about a server that ignores the grammar."""
    glimpse = text if len(text) <= 120 else text[:117] + "..."
    return (
        f"{where} does not apply the grammar it is sent: its reply {glimpse!r} could not have been "
        "written under it. Replies are still read and cut as without one; check that the server "
        "applies its grammar field (vLLM 0.12+ structured_outputs, SGLang with a grammar backend, "
        "llama.cpp's grammar), or say what it is with server=... (--server)"
    )
