"""The end of a run's answer: the forced final call at a limit, and an answer that ran on.

    step, ending = yield from forced(asker, "max_steps", number)    # one last call asks for the answer
    trimmed = ran_on(final, asked, allowance, grammar=True)         # (answer, what happened) or None

At the step limit, the token budget or the context window, one last call asks for the final answer
(`Limits.force_final`); its room was reserved by the token account before every normal call, so
it fits when it comes (a short note if the whole one does not; with no slack kept, rather than
none). The context window ends a run as "max_tokens", and says so in its error. An answer that
repeated itself until it was cut (at the allowance, or at the grammar's bound on an answer) is kept
as far as its first repeat, rather than asked again.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace

from react_text.core.asking import Asked, Asker, Ending
from react_text.core.commands import Command, Event
from react_text.core.types import Final, Step, StopReason
from react_text.grammar.protocol import MAX_ANSWER
from react_text.parser import runon
from react_text.tokens.account import WINDOW, Window

__all__ = [
    "forced",
    "ran_on",
]


def forced(asker: Asker, at: StopReason | Window, number: int) -> Generator[Command, Event, tuple[Step | None, Ending]]:
    """One last call that asks for the final answer, at a limit (the context window ends a run as
    "max_tokens"); `number` is the call's step. The step it took (None: no call was made) and how
    the run ends."""
    account = asker.account
    words = account.words(at)
    limit: StopReason = "max_tokens" if at == WINDOW else at
    if not asker.limits.force_final:
        return None, Ending(limit, error=words)
    allowance, note = account.forced(number, at, squeeze=True)  # the last call: rather tight than none
    if allowance is None:
        return None, Ending(limit, error=f"{words}; no room was left for the forced final call")
    account.add_note(note)
    asked = yield from asker.ask(number, allowance, forced=True)
    if isinstance(asked, Ending):
        return None, replace(asked, reason=limit, error=f"{words}; the forced final call failed: {asked.error}")
    if not isinstance(asked, Asked):  # a forced call is never sent on to another forced call
        raise RuntimeError("the forced final call ended the window again")
    parsed = asked.parsed
    if isinstance(parsed, Final) and (ran := ran_on(parsed, asked, allowance, grammar=asker.grammar is not None)):
        return asked.step, Ending(limit, ran[0], forced=True, error=f"{words}; {ran[1]}")
    if isinstance(parsed, Final):
        cut = (
            f"; the answer reached the reply allowance of {allowance} tokens and may be cut" if asked.truncated else ""
        )
        said = cut or at == WINDOW  # a window, unlike a budget or a step limit, is not in the stop reason
        return asked.step, Ending(limit, parsed.answer, forced=True, error=f"{words}{cut}" if said else None)
    return asked.step, Ending(limit, error=f"{words}; no final answer when asked for one")


def ran_on(final: Final, asked: Asked, allowance: int, *, grammar: bool) -> tuple[str, str] | None:
    """An answer that repeated itself until it was cut (at the allowance, or, under a `grammar`, at
    its bound on an answer): the answer as far as its first repeat, and what happened, in words.
    Kept rather than asked again: the model gave its answer, and asked again it runs on again."""
    cut = asked.truncated and not final.discarded.strip()
    bounded = grammar and len(final.answer) >= MAX_ANSWER - 1
    if not (cut or bounded) or (ran := runon.trim(final.answer)) is None:
        return None
    where = f"the reply allowance of {allowance} tokens" if cut else f"the grammar's {MAX_ANSWER} characters"
    note = (
        f"the answer ran on ({ran.unit.strip()!r} {ran.repeats} times) until {where} cut it; "
        "kept as far as its first repeat"
    )
    return ran.answer, note
