"""`react-text parse`: how one reply (or a file of them) parses, as JSON; the parsers' scoreboard.

echo 'ACTION: add[2, 3]' | react-text parse             one reply's parse, as JSON
react-text parse --compare                               the robustness scoreboard on the bundled corpus
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from react_text import parser as parsing
from react_text.cli.files import read_text
from react_text.cli.flags import subcommand, tool_names
from react_text.core.errors import ConfigError
from react_text.core.protocol import ACTION_LABEL, THOUGHT_LABEL
from react_text.core.types import Action, Final, ParseError
from react_text.observers.trace import parsed_dict
from react_text.observers.written import json_text, shown

__all__ = [
    "add",
]

_EXAMPLES_PARSE = f"""examples:
  printf '{THOUGHT_LABEL} x\\n{ACTION_LABEL} add[2, 3]\\n' | react-text parse
  react-text parse --parser naive < reply.txt
  react-text parse replies.jsonl                  one JSON line of output per reply
  echo '{ACTION_LABEL} unit converter[5 km]' | react-text parse --tools "unit converter,lookup"
  react-text parse --compare                       the robustness scoreboard on the bundled corpora
  react-text parse --corpus mine.jsonl --parser myparsers:read    your parser on your replies

A corpus is JSON lines, one reply a line: {{"text": "...", "expected": {{"kind": "action", "tool":
"lookup", "input": "cats"}}}} (or {{"kind": "final", "answer": "..."}}, or {{"kind": "error"}}), with
optional "id", "category" (a scoreboard row), "source", "mode" ("chat", or "completion": {THOUGHT_LABEL}
is put back before the reply) and "tools" (the registered tool names). --parser module:function
names any function from a reply's text to a reading: a react_text Parsed value or a dict like
"expected" (raising is an error reading); give it several times to compare several. The
scoreboard shows the peers' real parsers (LangChain, LlamaIndex, smolagents, crewAI) when they
are installed, and the pip command for each that is not.
"""


def add(commands: Any) -> None:
    """The parse command and its flags."""
    parse = subcommand(
        commands,
        "parse",
        "parse one model reply from stdin",
        "Read one model reply on stdin (or FILE) and print how it parses, as JSON.",
        _EXAMPLES_PARSE,
    )
    parse.add_argument(
        "file",
        nargs="?",
        metavar="FILE",
        help="read the reply from FILE instead of stdin; a .jsonl file holds many replies ({'text': ...} a line)",
    )
    parse.add_argument("--strict", action="store_true", help="accept only the canonical form (= --parser strict)")
    parse.add_argument(
        "--parser",
        action="append",
        default=[],
        metavar="NAME|MODULE:FUNCTION",
        help=f"which parser reads: {', '.join(sorted(parsing.PARSERS))} (default tolerant), or your own"
        " function from text to a reading; with --compare, each one given is scored too",
    )
    parse.add_argument(
        "--tools",
        type=tool_names,
        default=(),
        metavar="NAME,...",
        help=f"the registered tool names (so '{ACTION_LABEL} unit converter[5 km]' reads as tool 'unit converter');"
        ' a .jsonl line\'s own "tools" field wins',
    )
    parse.add_argument(
        "--compare",
        action="store_true",
        help="score every parser, and the peers' that are installed, on a corpus (FILE, --corpus, or the"
        " bundled replies and reply families) and print the scoreboard",
    )
    parse.add_argument("--corpus", metavar="FILE", help="the corpus to score on (implies --compare; format below)")
    parse.add_argument(
        "--peers",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with --compare, score the peers' parsers that are installed (default on; they take seconds to import)",
    )
    parse.set_defaults(handler=_parse)


def _parse(args: argparse.Namespace) -> int:
    if args.compare or args.corpus:
        from react_text.evaluation import corpus, peers

        if args.file and args.corpus:
            raise ConfigError(f"give the corpus once: {args.file} or --corpus {args.corpus}")
        given = args.corpus or args.file
        cases = corpus.load(given) if given else corpus.scoreboard_cases()
        if args.tools:
            cases = [case if case.tools else replace(case, tools=args.tools) for case in cases]
        own = [spec for spec in args.parser if spec not in parsing.PARSERS]
        parsers, notes = peers.contenders(own, with_peers=args.peers)
        print(shown(corpus.scoreboard(corpus.score(cases, parsers), notes=notes)))
        return 0
    if len(args.parser) > 1:
        raise ConfigError("give one --parser to read with (or --compare to score several)")
    read = _reader("strict" if args.strict else (args.parser or ["tolerant"])[0])
    if args.file and args.file.endswith(".jsonl"):
        for number, line in enumerate(read_text(args.file).splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                text = row["text"]
                if not isinstance(text, str):  # {"text": 5}, {"text": null}: no reply
                    raise TypeError("text is not text")
                names = _row_tools(row.get("tools"), args.tools)
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
                raise ConfigError(
                    f'{args.file}:{number}: not a reply line ({{"text": ..., "tools": [names]}})'
                ) from None
            print(json_text({"id": row.get("id"), **read(text, names)}))
        return 0
    text = read_text(args.file) if args.file else sys.stdin.read()
    reading = read(text, args.tools)
    print(json_text(reading, indent=2))
    return 1 if reading["kind"] == "error" else 0


def _row_tools(value: object, default: tuple[str, ...]) -> tuple[str, ...]:
    if value is None:
        return default
    if not (isinstance(value, list) and all(isinstance(name, str) for name in value)):
        raise TypeError("tools is not a list of names")
    return tuple(value)


def _reader(name: str) -> Callable[[str, tuple[str, ...]], dict[str, Any]]:
    """The parser named (a built-in, or the user's module:function) as text and names -> the JSON shown."""
    if name in parsing.PARSERS:
        builtin = parsing.PARSERS[name]
        return lambda text, names: parsed_dict(builtin(text, tools=names))
    from react_text.evaluation import corpus, peers

    own = peers.user(name)

    def read(text: str, names: tuple[str, ...]) -> dict[str, Any]:
        got = own(text, tools=names)
        try:
            return parsed_dict(got) if isinstance(got, Action | Final | ParseError) else corpus.as_reading(got)
        except ValueError as exc:
            raise ConfigError(f"--parser {name} read the reply as {str(got)[:60]}, which {exc}") from None

    return read
