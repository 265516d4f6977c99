"""The protocol as it is spelled: the one place that knows its labels.

    THOUGHT: one line of reasoning
    ACTION: tool[input]                       a reply ends with one directive: an action ...
    FINAL: the answer                         ... or the final answer
    OBSERVATION: what the tool returned       written by the engine, never by the model

With parallel actions a reply holds several ACTION lines, and each observation names the call it
answers: `OBSERVATION (weather[Athens]): 24 C`. A model that reasons first may open its reply with
a `<think>...</think>` block.

Here: the label words and labels; the cue a completion transcript ends with, which is also what a
chat model's turn is begun with when its backend takes a prefill (`Request.prefill`); the stop
sequences; the think tags; the decoration a label may wear at a line start and the full-width
colon it may end with; and how a call, an action and the directive line are written. The guard,
the parser, the grammar, several.py, the prompts' rendering, the history and the CLI build from
these, and the backends know none of them. tests/test_protocol.py fails when a label is spelled
anywhere else in the package's code.

Not here: the prompt files spell the labels too, as text for the model (tests/test_prompting.py
checks that the rendered instructions hold every label below); and the other frameworks'
spellings that the reader tolerates ("Action Input:", "Final Answer:", "Observation:", in five
languages) live with the reader, in parser/labels.py and the guard, which add these words to
theirs.
"""

from __future__ import annotations

from react_text.core.types import Action, Actions, Reading

__all__ = [
    "ACTION",
    "ACTION_LABEL",
    "DECOR",
    "FINAL",
    "FINAL_LABEL",
    "FULL_WIDTH_COLON",
    "LABELS",
    "OBSERVATION",
    "OBSERVATION_LABEL",
    "OBSERVATION_OF_CALL",
    "PARALLEL_STOP",
    "STOP_SEQUENCES",
    "THINK_CLOSE",
    "THINK_OPEN",
    "THOUGHT",
    "THOUGHT_CUE",
    "THOUGHT_LABEL",
    "WORDS",
    "action_line",
    "call",
    "call_line",
    "directive_line",
    "fold_colons",
    "observation_label",
]

# --- the labels -----------------------------------------------------------------------------------

THOUGHT = "THOUGHT"
ACTION = "ACTION"
FINAL = "FINAL"
OBSERVATION = "OBSERVATION"
WORDS = (THOUGHT, ACTION, FINAL, OBSERVATION)

THOUGHT_LABEL = f"{THOUGHT}:"
ACTION_LABEL = f"{ACTION}:"
FINAL_LABEL = f"{FINAL}:"
OBSERVATION_LABEL = f"{OBSERVATION}:"
LABELS = (THOUGHT_LABEL, ACTION_LABEL, FINAL_LABEL, OBSERVATION_LABEL)

# What a completion transcript ends with, for the model to continue; and the prefill of a chat
# model's turn when its backend takes one (the turn then reads as it would in a transcript).
THOUGHT_CUE = THOUGHT_LABEL

# How an observation labelled with its call begins (parallel actions): "OBSERVATION (weather[Athens]):".
OBSERVATION_OF_CALL = f"{OBSERVATION} ("

# --- what servers stop at ---------------------------------------------------------------------------

# Sent to servers as `stop`; the guard is the real cut (see `guard` for why these three): the
# protocol's own observation label, LangChain's, and LangChain's in bold, each at a line start.
STOP_SEQUENCES: tuple[str, ...] = (f"\n{OBSERVATION_LABEL}", "\nObservation:", "\n**Observation:**")
# With parallel actions the observations are labelled with their calls.
PARALLEL_STOP: tuple[str, ...] = (f"\n{OBSERVATION_OF_CALL}",)

# --- thinking ---------------------------------------------------------------------------------------

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

# --- how a label may be written -------------------------------------------------------------------

# What may come before a label at a line start: spaces, quoting, headings, bold, rules, list marks.
# Possessive: no label word starts with one of these characters.
DECOR = r"[ \t>#*_\-]{0,12}+"
# A label may end with a full-width colon (U+FF1A); readers fold it to ":" first, which keeps
# every position (`fold_colons`).
FULL_WIDTH_COLON = "："


def fold_colons(text: str) -> str:
    """`text` with full-width colons made ASCII: the same length, so the same positions."""
    return text.replace(FULL_WIDTH_COLON, ":") if FULL_WIDTH_COLON in text else text


# --- writing an action ------------------------------------------------------------------------------


def call(tool: str, value: str) -> str:
    """A call as written: `tool[value]`."""
    return f"{tool}[{value}]"


def call_line(action: Action) -> str:
    """A call on one line, its input's whitespace runs made single spaces: `weather[Athens]` (how an
    observation names its call, and what a reply is elided to)."""
    return call(action.tool, " ".join(action.input.split()))


def action_line(tool: str, value: str) -> str:
    """An action as the protocol writes it: `ACTION: tool[value]` (for one that `parse` reads back
    exactly, whatever the value holds, see `parser.render_action`)."""
    return f"{ACTION_LABEL} {call(tool, value)}"


def directive_line(parsed: Reading) -> str:
    """The directive of a reply as one line (a line an action, for several), what is left of the
    reply when it is elided; "" for anything but actions."""
    if isinstance(parsed, Action):
        return f"{ACTION_LABEL} {call_line(parsed)}"
    if isinstance(parsed, Actions):
        return "\n".join(f"{ACTION_LABEL} {call_line(a)}" for a in parsed.actions)
    return ""


def observation_label(call_words: str | None = None) -> str:
    """`OBSERVATION:`, or `OBSERVATION (weather[Athens]):` for the observation of one call of several."""
    return OBSERVATION_LABEL if call_words is None else f"{OBSERVATION_OF_CALL}{call_words}):"
