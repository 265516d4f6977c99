"""Tools from MCP servers, against a real server written with the SDK (tests/mcp_servers/demo.py),
over stdio and over streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import pytest

pytest.importorskip("mcp", reason='needs pip install "react-text[mcp]"')

from react_text import Agent, ScriptedModel, prompting
from react_text.core.errors import ConfigError
from react_text.tools.binding import Key
from react_text.tools.mcp import Parameters, Server, ToolError, mcp_tools
from react_text.tools.mcp import sessions as mcp_sessions
from react_text.tools.tool import Tool, listing

DEMO = Path(__file__).resolve().parent / "mcp_servers" / "demo.py"
STDIO = f"{shlex.quote(sys.executable)} {shlex.quote(str(DEMO))}"
T = TypeVar("T")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def http_server() -> Iterator[str]:
    """The demo server on streamable HTTP, as a subprocess on a free port; killed at the end."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(DEMO), "--http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert process.poll() is None, "the HTTP server exited at start"
                assert time.monotonic() < deadline, "the HTTP server did not listen within 30 s"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait(10)


@pytest.fixture(params=["stdio", "http"])
def server(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "stdio":
        yield STDIO
    else:
        with http_server() as url:
            yield url


@pytest.fixture(scope="module", params=["stdio", "http"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[Tool, ...]]:
    """One session with the demo server, shared by the tests that do not depend on its state."""
    with ExitStack() as stack:
        target = STDIO if request.param == "stdio" else stack.enter_context(http_server())
        yield stack.enter_context(mcp_tools(target))


def within(seconds: float, work: Callable[[], T]) -> T:
    """Run `work` and fail if it takes longer than `seconds`: a hang is a failure, not a stuck suite."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # noqa: BLE001 - carried back to the test, raised there
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} seconds"
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def by_name(tools: tuple[Tool, ...]) -> dict[str, Tool]:
    return {t.name: t for t in tools}


def observations(tools: tuple[Tool, ...], replies: list[str], **options: Any) -> list[str | None]:
    result = Agent(ScriptedModel(replies), tools=tools, **options).run("Use the tools.")
    assert result.stop_reason == "final", result.error
    return [step.observation for step in result.steps]


def reap(pidfile: Path) -> None:
    """After a failed test: end a server left behind (a --linger one would stay 60 s)."""
    if pidfile.exists() and pidfile.read_text() and alive(int(pidfile.read_text())):
        os.kill(int(pidfile.read_text()), signal.SIGKILL)


def stop(process: subprocess.Popen[str]) -> None:
    """End a child the test started and reap it, its pipes closed, whatever happened (a test that
    gives up too: a child left unreaped, or its pipes open, is a ResourceWarning in a later test)."""
    process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.communicate(timeout=10)


def sleeping(pidfile: Path, process: subprocess.Popen[str], seconds: float = 60) -> None:
    """Wait until the demo server's sleep call is under way (it writes PIDFILE.sleeping): a Ctrl-C
    sent before it would land while the client still starts (how long that takes is the machine's load)."""
    marker = pidfile.with_name(pidfile.name + ".sleeping")
    deadline = time.monotonic() + seconds
    while not marker.exists():
        assert time.monotonic() < deadline and process.poll() is None, "the sleep call did not begin"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# --- parameters from the input schema (pure) ------------------------------------------------------


def test_parameters_come_from_the_json_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "default": 5},
            "ratio": {"type": "number"},
            "exact": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "filters": {"type": "object"},
            "after": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "unit": {"enum": ["C", "F"]},
            "max-results": {"type": ["integer", "null"]},
            "from": {"$ref": "#/$defs/Day"},
            "anything": {},
        },
        "required": ["query", "ratio", "exact", "from"],
        "$defs": {"Day": {"type": "string", "enum": ["mon", "tue"]}},
    }
    parameters = Parameters.of(schema)
    got = [(p.name, p.annotation, p.default) for p in parameters.signature.parameters.values()]
    empty = inspect.Parameter.empty
    assert got == [
        ("query", str, empty),
        ("ratio", float, empty),
        ("exact", bool, empty),
        ("from_", Annotated[Literal["mon", "tue"], Key("from")], empty),  # written as the schema spells it
        ("limit", int, 5),
        ("tags", list[str] | None, None),
        ("filters", dict | None, None),
        ("after", str | None, None),
        ("unit", Literal["C", "F"] | None, None),
        ("max_results", Annotated[int | None, Key("max-results")], None),
        ("anything", Any, None),
    ]
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in parameters.signature.parameters.values())
    # Back to the server's names; what was not given is not sent (the server applies its defaults).
    assert parameters.arguments(("q", 0.5, True, "mon"), {"max_results": 3, "after": None}) == {
        "query": "q",
        "ratio": 0.5,
        "exact": True,
        "from": "mon",
        "max-results": 3,
    }


def test_schema_oddities_still_make_a_signature() -> None:
    assert str(Parameters.of({"type": "object"}).signature) == "() -> str"
    odd = Parameters.of(
        {
            "type": "object",
            "properties": {"a-b": {"type": "string"}, "a_b": {"type": "string"}, "class": {}, "1st": {}},
            "required": ["a-b", "ghost"],
            "$defs": {"Loop": {"$ref": "#/$defs/Loop"}},
        }
    )
    assert list(odd.signature.parameters) == ["a_b", "ghost", "a_b_", "class_", "_1st"]
    assert dict(odd.keys) == {"a_b": "a-b", "ghost": "ghost", "a_b_": "a_b", "class_": "class", "_1st": "1st"}
    looping = Parameters.of(
        {"type": "object", "properties": {"x": {"$ref": "#/$defs/Loop"}}, "$defs": {"Loop": {"$ref": "#/$defs/Loop"}}}
    )
    assert looping.signature.parameters["x"].annotation is Any
    # A tool that takes nothing ignores what the model wrote in its brackets.
    assert Parameters.of({"type": "object"}).arguments(("now",), {}) == {}


# --- against the real server ---------------------------------------------------------------------


def test_listing_keeps_exact_names_and_the_first_paragraph(served: tuple[Tool, ...]) -> None:
    names, text = [t.name for t in served], listing(served)
    assert names[:6] == ["describe", "count", "divide", "get-weather", "files.delete", "files.read"]
    assert "- get-weather[city]: The weather in a city." in text.splitlines()
    assert "- files.read[path]: Read a file (it does not really)." in text.splitlines()
    assert "Describe a person from several typed facts." in text
    assert "second paragraph" not in text


def test_parameters_of_a_served_tool(served: tuple[Tool, ...]) -> None:
    signature = inspect.signature(by_name(served)["describe"].fn)
    empty = inspect.Parameter.empty
    assert [(p.name, p.annotation, p.default) for p in signature.parameters.values()] == [
        ("name", str, empty),
        ("age", int, empty),
        ("height", float, empty),
        ("member", bool, empty),
        ("unit", Literal["m", "ft"], "m"),
        ("nickname", str | None, None),
    ]


def test_a_call_with_several_typed_arguments(served: tuple[Tool, ...]) -> None:
    whole = '{"name": "Ada", "age": 36, "height": 1.65, "member": false, "unit": "ft", "nickname": "Lovelace"}'
    seen = observations(
        served,
        [
            "ACTION: describe[Ada, 36, 1.65, true]",
            "ACTION: arguments_seen[]",
            f"ACTION: describe[{whole}]",
            "ACTION: arguments_seen[1]",
            "FINAL: ok",
        ],
    )
    assert seen[0] == "Ada: 36 years, 1.65 m, member: True"
    wire = json.loads(seen[1] or "")  # as the server received it: typed; only what the model wrote (issue 26)
    assert wire == {"name": "Ada", "age": 36, "height": 1.65, "member": True}
    assert type(wire["age"]) is int and type(wire["height"]) is float
    assert seen[2] == "Ada, known as Lovelace: 36 years, 1.65 ft, member: False"
    assert json.loads(seen[3] or "") == json.loads(whole)


def test_optional_arguments_left_out_take_the_servers_defaults(served: tuple[Tool, ...]) -> None:
    seen = observations(
        served, ["ACTION: options[limit=7]", "ACTION: arguments_seen[]", "ACTION: options[3, fast]", "FINAL: ok"]
    )
    assert seen[0] == "limit=7 mode=None tags=None"
    assert json.loads(seen[1] or "") == {"limit": 7}  # only what the model wrote: the server applies the rest
    assert seen[2] == "limit=3 mode=fast tags=None"
    # A property with no default in the schema is not sent at all (test_parameters_come_from_the_json_schema).


def test_a_stateful_server_keeps_its_state_in_one_session(server: str) -> None:
    with mcp_tools(server) as tools:
        first = observations(tools, ["ACTION: count[]", "FINAL: one"])
        second = observations(tools, ["ACTION: count[]", "FINAL: two"])  # another run, the same session
        assert (first[0], second[0], by_name(tools)["count"].fn()) == ("1", "2", "3")
        assert by_name(tools)["handshakes"].fn() == "1"


def test_a_new_block_is_a_new_stdio_server() -> None:
    for _ in range(2):
        with mcp_tools(STDIO) as tools:
            assert by_name(tools)["count"].fn() == "1"


def test_an_is_error_result_is_a_tool_error(served: tuple[Tool, ...]) -> None:
    seen = observations(served, ["ACTION: divide[1, 0]", "ACTION: divide[1, 4]", "FINAL: 0.25"])
    with pytest.raises(ToolError, match="cannot divide by zero"):
        by_name(served)["divide"].fn(2, 0)
    assert (seen[0] or "").startswith("The tool divide failed with ToolError: ")
    assert "cannot divide by zero" in (seen[0] or "")
    assert seen[1] == "0.25"


def test_a_server_that_crashes_mid_run_is_an_error_observation(server: str) -> None:
    def run() -> list[str | None]:
        with mcp_tools(server) as tools:
            return observations(tools, ["ACTION: crash[]", "ACTION: get-weather[Oslo]", "FINAL: the server is gone"])

    seen = within(30, run)
    for observation in seen[:2]:
        assert "failed with ConnectionError" in (observation or "")
        assert "is no longer running or reachable" in (observation or "")


def test_names_with_a_hyphen_and_a_dot(served: tuple[Tool, ...]) -> None:
    seen = observations(served, ["ACTION: get-weather[Oslo]", "ACTION: files.read[notes.txt]", "FINAL: ok"])
    assert seen[:2] == ["Sunny in Oslo, 21 C", "the text of notes.txt"]


def test_destructive_tools_need_approval(served: tuple[Tool, ...]) -> None:
    risky = {t.name for t in served if t.risky}
    declined = observations(served, ["ACTION: files.delete[a.txt]", "FINAL: not allowed"])
    approved = observations(served, ["ACTION: files.delete[a.txt]", "FINAL: done"], approve=lambda t, a: True)
    assert risky == {"files.delete"}  # files.read says destructive and read-only: read-only wins
    assert declined[0] == prompting.render("corrections/declined", tool="files.delete", input="a.txt")
    assert approved[0] == "deleted a.txt"


def test_results_text_structured_and_binary(served: tuple[Tool, ...]) -> None:
    found = by_name(served)
    picture, mixed, report = found["picture"].fn(), found["mixed"].fn(), found["report"].fn()
    assert picture == prompting.render(
        "corrections/tool_bad_result", tool="picture", kind="an image (image/png, 12 KB)"
    )
    refusal = prompting.render("corrections/tool_bad_result", tool="mixed", kind="an image (image/png, 68 bytes)")
    assert mixed == f"first\nthe notes\n{refusal}"
    assert json.loads(str(report)) == {"rows": 3, "ok": True, "names": ["a", "b"]}
    assert found["nothing"].fn() == prompting.render("corrections/tool_no_result", tool="nothing", kind="no content")


def test_a_stdio_server_gets_only_the_environment_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REACT_TEXT_TEST_SECRET", "do-not-pass-me")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-servers")
    with mcp_tools(STDIO, env={"GIVEN": "yes"}) as tools:
        environment = by_name(tools)["environment"].fn
        assert environment("REACT_TEXT_TEST_SECRET") == "(unset)"
        assert environment("OPENAI_API_KEY") == "(unset)"
        assert environment("GIVEN") == "yes"
        assert environment("PATH") == os.environ["PATH"]


def test_headers_reach_their_server_and_are_never_shown(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, the SDK's and httpx's included
    secret = "Bearer s3cret-t0ken-value"
    with http_server() as url:
        block = mcp_tools(url + "?key=query-s3cret", headers={"Authorization": secret})
        with block as tools:
            assert by_name(tools)["header"].fn("Authorization") == secret
            with pytest.raises(ConnectionError) as gone:
                by_name(tools)["crash"].fn()
            shown = [repr(block), repr(tools), repr(block.servers), str(gone.value)]
    refused = mcp_tools(url + "?key=query-s3cret", headers={"Authorization": secret})
    with pytest.raises(ConfigError, match="could not open") as failed:
        refused.__enter__()
    shown.append(str(failed.value))
    for text in shown:
        assert "s3cret" not in text  # neither the header nor the URL's query
    # httpx logs request URLs (query included) at INFO: secrets belong in headers, never logged.
    assert "t0ken" not in caplog.text


def test_one_set_of_headers_never_goes_to_two_servers() -> None:
    with pytest.raises(ValueError, match="give each URL its own"):
        mcp_tools("http://127.0.0.1:1/mcp", "http://127.0.0.1:2/mcp", headers={"Authorization": "x"})
    with pytest.raises(ValueError, match="env= is for servers started as commands"):
        Server("http://127.0.0.1:1/mcp", env={"A": "b"})
    with pytest.raises(ValueError, match="headers= are for HTTP servers"):
        Server(STDIO, headers={"A": "b"})


def test_sessions_close_with_no_stray_process(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    started = time.monotonic()
    with mcp_tools(f"{STDIO} --pidfile {pidfile}") as tools:
        pid = int(pidfile.read_text())
        assert alive(pid) and by_name(tools)["count"].fn() == "1"
    assert not alive(pid)

    def fail_inside() -> None:
        with mcp_tools(f"{STDIO} --pidfile {pidfile}"):
            raise KeyError(int(pidfile.read_text()))

    with pytest.raises(KeyError) as failed:
        fail_inside()
    assert not alive(failed.value.args[0])
    assert time.monotonic() - started < 20


def test_tools_used_after_the_block_say_so() -> None:
    with mcp_tools(STDIO) as tools:
        count = by_name(tools)["count"]
    with pytest.raises(RuntimeError, match="is closed"):
        count.fn()


def test_a_server_that_does_not_start_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match=r"could not start .* it exited before it answered"):
        within(20, lambda: mcp_tools(f"{shlex.quote(sys.executable)} -c 'raise SystemExit(1)'").__enter__())
    with pytest.raises(ConfigError, match=r"could not open .*no-such-command"):
        within(20, lambda: mcp_tools("no-such-command --flag").__enter__())
    monkeypatch.setattr(mcp_sessions, "OPEN_SECONDS", 1.0)
    with pytest.raises(ConfigError, match="did not answer within 1 seconds"):
        within(20, lambda: mcp_tools(f"{shlex.quote(sys.executable)} -c 'import time; time.sleep(60)'").__enter__())


def test_a_tool_time_limit_leaves_the_session_usable() -> None:
    def run() -> list[str | None]:
        with mcp_tools(STDIO, timeout=0.5) as tools:
            return observations(tools, ["ACTION: sleep[5]", "ACTION: count[]", "FINAL: done"])

    seen = within(15, run)
    assert seen[0] == prompting.render("corrections/tool_timeout", tool="sleep", seconds=0.5)
    assert seen[1] == "1"


def test_the_async_form_holds_its_sessions_in_the_callers_loop() -> None:
    async def main() -> tuple[Tool, ...]:
        async with mcp_tools(STDIO) as tools:
            found = by_name(tools)
            assert inspect.iscoroutinefunction(found["count"].fn)
            assert [await found["count"].fn(), await found["count"].fn()] == ["1", "2"]
            together = await asyncio.gather(found["sleep"].fn(0.3), found["sleep"].fn(0.3), found["count"].fn())
            assert together == ["slept 0.3", "slept 0.3", "3"]
            with pytest.raises(asyncio.TimeoutError):
                async with asyncio.timeout(0.2):
                    await found["sleep"].fn(5)
            assert await found["handshakes"].fn() == "1"
            with pytest.raises(ConnectionError, match="no longer running"):
                await found["crash"].fn()
        return tools

    tools = within(30, lambda: asyncio.run(main()))
    with pytest.raises(RuntimeError, match="is closed"):
        asyncio.run(by_name(tools)["count"].fn())


def test_an_async_run_uses_mcp_tools(server: str) -> None:
    async def main() -> list[str | None]:
        async with mcp_tools(server) as tools:
            agent = Agent(ScriptedModel(["ACTION: count[]", "ACTION: get-weather[Oslo]", "FINAL: ok"]), tools=tools)
            result = await agent.arun("Count, then the weather.")
            return [step.observation for step in result.steps]

    assert within(30, lambda: asyncio.run(main()))[:2] == ["1", "Sunny in Oslo, 21 C"]


def test_sync_form_tools_in_an_async_run() -> None:
    async def main() -> list[str | None]:
        with mcp_tools(STDIO) as tools:  # sessions on their own thread; calls leave the caller's loop free
            agent = Agent(ScriptedModel(["ACTION: count[]", "ACTION: divide[1, 8]", "FINAL: ok"]), tools=tools)
            result = await agent.arun("Count, then divide.")
            return [step.observation for step in result.steps]

    assert within(30, lambda: asyncio.run(main()))[:2] == ["1", "0.125"]


def test_ctrl_c_in_an_async_block_closes_the_servers(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    script = f"""
import asyncio
import contextlib
from react_text.tools.mcp import mcp_tools

async def main():
    async with mcp_tools({f"{STDIO} --linger --pidfile {pidfile}"!r}) as tools:
        print("ready", flush=True)
        await {{t.name: t for t in tools}}["sleep"].fn(30)

asyncio.run(main())
"""
    process = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        sleeping(pidfile, process)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)  # it stops in about 2.3 s, idle or beside two busy loops
    finally:
        stop(process)
        alive_before_reaping = pidfile.exists() and alive(int(pidfile.read_text()))
        reap(pidfile)
    assert not alive_before_reaping
    # asyncio.run ends a program it interrupts with its own report: the cancelled await, then
    # KeyboardInterrupt. Nothing from the teardown (no exception group, no cancel scope, no task).
    unindented = [line for line in err.splitlines() if line and not line.startswith(" ")]
    assert unindented == [
        "Traceback (most recent call last):",
        "asyncio.exceptions.CancelledError",
        "During handling of the above exception, another exception occurred:",
        "Traceback (most recent call last):",
        "KeyboardInterrupt",
    ], err


def test_importing_react_text_mcp_leaves_the_sdk_unloaded() -> None:
    check = "import sys, react_text.tools.mcp, react_text.cli.main; assert 'mcp' not in sys.modules, 'imported'"
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


# --- the command line ----------------------------------------------------------------------------


def react_text(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_cli_runs_an_mcp_servers_tool(tmp_path: Path) -> None:
    replies = tmp_path / "replies.txt"
    replies.write_text("THOUGHT: ask the server\nACTION: get-weather[Oslo]\n---\nFINAL: Sunny, 21 C.\n")
    done = react_text("run", "--mcp", STDIO, "--script", str(replies), "What is the weather in Oslo?")
    assert done.returncode == 0, done.stderr
    assert "ACTION: get-weather[Oslo]\nOBSERVATION: Sunny in Oslo, 21 C\n" in done.stdout
    assert done.stdout.rstrip().endswith("Sunny, 21 C.")
    assert "Traceback" not in done.stderr


def test_cli_lists_the_tools_the_model_would_see() -> None:
    done = react_text("mcp", "list", STDIO)
    assert done.returncode == 0, done.stderr
    with mcp_tools(STDIO) as tools:
        assert done.stdout == listing(tools) + "\n"
    assert "- get-weather[city]: The weather in a city.\n" in done.stdout
    refused = react_text("mcp", "list", "no-such-command")
    assert refused.returncode == 2 and refused.stderr.startswith("react-text: could not open the MCP server")


def test_ctrl_c_closes_the_servers_without_a_traceback(tmp_path: Path) -> None:
    pidfile, replies = tmp_path / "pid", tmp_path / "replies.txt"
    replies.write_text("ACTION: sleep[30]\n---\nFINAL: never\n")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "react_text.cli",
            "run",
            "--mcp",
            f"{STDIO} --linger --pidfile {pidfile}",
            "--script",
            str(replies),
            "Sleep.",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    try:
        sleeping(pidfile, process)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=20)  # it stops in about 2.3 s, idle or beside two busy loops
    finally:
        stop(process)
        alive_before_reaping = pidfile.exists() and alive(int(pidfile.read_text()))
        reap(pidfile)
    assert not alive_before_reaping
    assert process.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
