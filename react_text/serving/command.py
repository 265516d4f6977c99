"""`react-text serve`: the endpoint on a port, over the embedded model, a server's, or a script.

    react-text serve                                               the embedded model, offline
    react-text serve --base-url http://127.0.0.1:8080/v1 --model m an OpenAI-compatible server
    react-text serve --base-url ... --model m --api completion     a completion-only endpoint
    react-text serve --script replies.txt                          replies played in order

Argument parsing and printing only: `add_parser(subparsers)` adds the command, `run(args)` runs it
until Ctrl-C, printing the URL once it listens.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from typing import Any

from react_text.core.errors import ConfigError, set_up
from react_text.core.limits import Limits
from react_text.core.types import Model
from react_text.evaluation import config, scripts
from react_text.prompting import Prompting

__all__ = ["add_parser", "run"]

_EXAMPLES = """examples:
  react-text serve                                          (the embedded model; http://127.0.0.1:8000/v1)
  react-text serve --base-url http://127.0.0.1:8080/v1 --model smollm2 --grammar   (a llama.cpp server)
  react-text serve --base-url http://a:8080/v1 --base-url http://b:8080/v1 --model m   (conversations spread)
  react-text serve --script replies.txt --port 9000         (replies between lines of ---, one a request)
  REACT_TEXT_API_KEY=secret react-text serve                (requests must send Authorization: Bearer secret)
  react-text serve --script replies.txt --trace traces/     (one trace a request, read back by run --script)

then, from any OpenAI client:
  OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="-").chat.completions.create(model="m", messages=..., tools=...)
"""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `serve` to the command line's subcommands."""
    serve: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="an OpenAI-compatible endpoint with tool calling, for any text model",
        description="Serve POST /v1/chat/completions (tools and tool_calls over the text protocol) and GET /v1/models.",
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8000, help="the port (default 8000; 0: any free port)")
    serve.add_argument(
        "--model",
        default=os.environ.get("REACT_TEXT_MODEL"),
        help="the model's name on --base-url's server, or a .gguf file (default: the embedded SmolLM2-135M-Instruct)",
    )
    serve.add_argument(
        "--base-url",
        action="append",
        metavar="URL",
        help="an OpenAI-compatible server to put the endpoint in front of; given again, several servers: "
        "each conversation sticks to one, and an unreachable one passes its requests to the next",
    )
    serve.add_argument("--api", choices=["chat", "completion"], help="chat messages or a completion transcript")
    serve.add_argument("--script", metavar="FILE", help="play the replies of a trace or a text file, one a request")
    serve.add_argument(
        "--grammar",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="constrain decoding to the protocol (default: on in-process, off on a server)",
    )
    serve.add_argument(
        "--server", choices=["llama.cpp", "vllm", "sglang", "ollama", "openai"], help="what --base-url is"
    )
    serve.add_argument("--threads", type=_positive, help="threads of the in-process model")
    serve.add_argument("--reply-tokens", type=_positive, help="the reply allowance when a request sets no max_tokens")
    serve.add_argument("--context-tokens", type=_positive, help="the model's context window, when it cannot say")
    serve.add_argument(
        "--api-key",
        default=os.environ.get("REACT_TEXT_API_KEY"),
        help="a key every request must present (default: $REACT_TEXT_API_KEY; none: no key asked)",
    )
    serve.add_argument(
        "--trace", metavar="DIR", help="write one trace a request to DIR (made if need be), ending with the response"
    )
    serve.set_defaults(handler=run)
    return serve


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; the URL is printed once the server listens."""
    try:
        import uvicorn
    except ImportError:
        from . import INSTALL

        raise ConfigError(INSTALL) from None
    from . import app

    listening = _bound(args.host, args.port)  # before the model loads: a busy port is said at once
    model = None
    try:
        models = _models(args)
        model = models[0]
        limits, prompting = _settled(model, args)
        with set_up():
            upstream = models if len(models) > 1 else model
            endpoint = app(upstream, api_key=args.api_key or None, limits=limits, prompting=prompting, trace=args.trace)
        server = uvicorn.Server(
            uvicorn.Config(
                endpoint, host=args.host, port=args.port, log_level="warning", access_log=False, lifespan="off"
            )
        )
        asyncio.run(_serve(server, listening))
    finally:
        listening.close()
        from react_text.backends.local import LocalModel

        if isinstance(model, LocalModel):
            model.close()
    return 0 if server.started else 1


def _bound(host: str, port: int) -> socket.socket:
    """A socket bound to host:port, or a ConfigError saying in one line why there is none (a port
    in use, an address not this machine's, a name that does not resolve)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        made = socket.socket(family, kind, proto)
        try:
            made.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: not past a listener
            made.bind(address)
        except OSError:
            made.close()
            raise
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return made


async def _serve(server: Any, listening: socket.socket) -> None:
    task = asyncio.create_task(server.serve(sockets=[listening]))
    while not server.started and not task.done():
        await asyncio.sleep(0.05)
    if server.started:
        host, port = server.servers[0].sockets[0].getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        print(f"react-text serve: listening on http://{shown}:{port}/v1", flush=True)
    else:
        print(f"react-text serve: could not listen on {server.config.host}:{server.config.port}", file=sys.stderr)
    await task


def _models(args: argparse.Namespace) -> list[Model]:
    """The upstream, or one a --base-url."""
    if args.script:
        if args.base_url or args.model or args.threads is not None:
            raise ConfigError("--script plays replies instead of a model: leave --base-url, --model and --threads out")
        return [scripts.script(args.script).model(api=args.api, grammar=args.grammar)]
    return [
        config.model(
            args.model, base_url=url, api=args.api, grammar=args.grammar, threads=args.threads, server=args.server
        )
        for url in args.base_url or [None]
    ]


def _settled(model: Model, args: argparse.Namespace) -> tuple[Limits, Prompting]:
    """The flags' limits and grammar choice, the rest as the model recommends."""
    chosen = {
        name: value
        for name, value in (("reply_tokens", args.reply_tokens), ("context_tokens", args.context_tokens))
        if value is not None
    }
    grammar = {"grammar": args.grammar} if args.grammar is not None and not args.script else {}
    return config.settle(model, config.Choices(limits=chosen, prompting=grammar))


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive whole number, not {text}")
    return value


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 0 to 65535, not {text}")
    return int(text)
