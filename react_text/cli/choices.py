"""What the flags choose: the run's choices, the model's recipe, and the flags refused as doing nothing."""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from typing import Any

from react_text.core.errors import ConfigError
from react_text.core.model_info import describe as describe_model
from react_text.core.model_info import no_grammar
from react_text.core.protocol import THINK_OPEN
from react_text.evaluation import config
from react_text.evaluation.config import Choices
from react_text.prompting import Prompting

__all__ = [
    "choices_of",
    "model_recipe",
    "refuse_unused",
]


def choices_of(args: argparse.Namespace) -> Choices:
    """What the flags choose (what they leave unset comes from a trace, else the model)."""
    limits = {
        name: value
        for name, value in (
            ("steps", args.max_steps),
            ("tokens", args.max_tokens),
            ("reply_tokens", args.reply_tokens),
            ("actions", getattr(args, "max_actions", None)),
        )
        if value is not None
    }
    prompt: dict[str, Any] = {}
    if args.zero_shot:
        prompt["example"] = None
    for name in ("grammar", "act_first", "instructions_in", "parallel"):
        if getattr(args, name, None) is not None:
            prompt[name] = getattr(args, name)
    return Choices(
        limits=limits,
        prompting=prompt,
        parser=args.parser,
        root=getattr(args, "root", None),
        modules=tuple(getattr(args, "tools", None) or ()),
        mcp=tuple(getattr(args, "mcp", None) or ()),
    )


def model_recipe(args: argparse.Namespace, base_url: str | None) -> Callable[[], Any]:
    """How the model flags (`model_flags`, `run_flags`) make the model at `base_url`, for run
    and eval alike: a recipe to call, which travels to a Ray worker (eval --ray) by pickle."""
    return functools.partial(
        config.model,
        args.model,
        base_url=base_url,
        api=args.api,
        stream=args.stream,
        grammar=args.grammar,
        threads=args.threads,
        server=args.server,
        temperature=getattr(args, "temperature", None),  # eval's flag; run samples at the model's default
        think=args.think,
        token_ids=getattr(args, "trajectories", None) is not None,  # eval --trajectories asks a server for its ids
    )


def refuse_unused(args: argparse.Namespace, model: Any = None, prompting: Prompting | None = None) -> None:
    """A flag that would do nothing in this run is refused at once, saying what to add or leave out.
    The flags alone say so for --script and --no-grammar (before a model is made or loaded); the
    model and the settled prompting (a trace's settings included), for the rest.

    --think changes only the grammar (a free <think> block may come first): a server is sent the
    grammar only when asked. --threads sets the in-process model's threads: a server runs its own.
    --max-actions caps the actions of one reply, which only --parallel runs."""
    if args.think and args.script:
        raise ConfigError("--think does nothing with --script (its replies are played as they are): leave it out")
    if args.think and args.grammar is False:
        raise ConfigError("--think works under the grammar, which --no-grammar turns off: leave one of them out")
    if args.threads is not None and args.script:
        raise ConfigError("--threads sets the in-process model's threads, and --script plays replies: leave it out")
    actions = getattr(args, "max_actions", None) is not None
    if actions and not args.script and getattr(args, "parallel", None) is not True:  # no trace to make it parallel
        raise ConfigError(_ACTIONS_ALONE)
    if model is None or prompting is None:
        return
    info = describe_model(model)
    if args.think and no_grammar(info, prompting.grammar):
        raise ConfigError(
            f"--think lets the model think in a {THINK_OPEN} block before the protocol, under the grammar, "
            "and a server is sent the grammar only with --grammar: add --grammar (or leave --think out)"
        )
    if args.threads is not None and not info.in_process:
        raise ConfigError("--threads sets the in-process model's threads, and a server runs its own: leave it out")
    if actions and not prompting.parallel:
        raise ConfigError(_ACTIONS_ALONE)


_ACTIONS_ALONE = (
    "--max-actions caps the actions of one reply that run, which only --parallel runs: "
    "add --parallel (or leave --max-actions out)"
)
