"""Issue 20, "set-up checked when made": a worked example given as text works whatever its length,
a template name that does not exist is refused when Prompting is made, naming the option, and no
set-up mistake reaches a command-line user as a traceback (two MCP servers with one tool name).

The outside review (attack5): every public constructor (Agent, ScriptedModel, Reply, OpenAIChat and
OpenAICompletion, LocalModel, mcp_tools, tool) checks its arguments' types and ranges when it is
made, and the error names the option, not an internal class or a TypeError from deep in a run."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from fake_openai import JSONHandler, serving

from react_text import (
    Agent,
    Limits,
    LocalModel,
    ModelError,
    OpenAIChat,
    OpenAICompletion,
    Prompting,
    Reply,
    RunResult,
    ScriptedModel,
    tool,
)
from react_text.tools.mcp import Server, mcp_tools

Driver = Callable[[Agent, str], RunResult]
ONE_LINE = "QUESTION: What is 2 + 2? THOUGHT: I add. FINAL: 4"


def lookup(item: str) -> str:
    """Return the price of one item."""
    return "12"


def test_a_one_line_example_is_the_examples_text(driver: Driver) -> None:
    """Issue 20: a one-line text was taken for a template name: FileNotFoundError at run time."""
    model = ScriptedModel(["THOUGHT: easy.\nFINAL: 4"])
    result = driver(Agent(model, tools=[lookup], prompting=Prompting(example=ONE_LINE)), "What is 2 + 2?")
    assert (result.stop_reason, result.answer) == ("final", "4")
    assert ONE_LINE in model.calls[0].prompt[0].content  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "name", ["calculater", "examples/calculater", "generic.txt", "examples/", "corrections/declined"]
)
def test_a_template_name_that_does_not_exist_is_refused_when_made(name: str) -> None:
    """Issue 20: a misspelled template name was accepted, and failed at run time."""
    with pytest.raises(ValueError, match=r"Prompting\.example") as refused:
        Prompting(example=name)
    assert "calculator" in str(refused.value)  # it says which names there are


@pytest.mark.parametrize("name", ["calculator", "examples/calculator"])
def test_a_template_name_gives_that_example(name: str) -> None:
    agent = Agent(ScriptedModel([]), tools=[lookup], prompting=Prompting(example=name))
    assert "calculator[" in agent.instructions()


@pytest.mark.parametrize("value", ["", b"calculator", 3])
def test_an_example_that_is_neither_is_refused(value: object) -> None:
    with pytest.raises((ValueError, TypeError), match=r"Prompting\.example"):
        Prompting(example=value)  # type: ignore[arg-type]


DEMO = Path(__file__).resolve().parent / "mcp_servers" / "demo.py"


def test_two_mcp_servers_with_one_tool_name_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """Issue 20: the duplicate name raised ValueError inside mcp_tools().__enter__, outside the
    command line's set-up handling: a traceback."""
    pytest.importorskip("mcp")
    script = tmp_path / "replies.txt"
    script.write_text("FINAL: 1\n", encoding="utf-8")
    server = f"{shlex.quote(sys.executable)} {shlex.quote(str(DEMO))}"
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "run", "--script", str(script), "--mcp", server, "--mcp", server, "q"],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("react-text: ") and "two MCP servers" in done.stderr, done.stderr


# --- attack5: set-up checked when made ------------------------------------------------------------


def test_a_parser_given_by_name_is_refused_when_the_agent_is_made() -> None:
    """docs/guarantees.md: "set-up is checked when made"; the CLI takes `--parser strict`, so a user
    writes `Agent(model, parser="strict")`. It is accepted, and `run` then raises
    `TypeError: 'str' object is not callable`, which names neither the option nor what it takes."""
    with pytest.raises(TypeError, match="parser"):
        Agent(ScriptedModel(["FINAL: 4"]), parser="strict")  # type: ignore[arg-type]


def test_approve_true_is_refused_when_made_or_approves() -> None:
    """Agent's docstring: "`approve` is asked before a risky tool runs (True, False, or "stop" to
    end the run; it may be async)". A user reads that as `approve=True`; it is accepted, and the run
    raises `TypeError: 'bool' object is not callable` when the risky tool comes up
    (docs/guarantees.md: "set-up is checked when made")."""
    rm = tool(lambda path: "gone", name="rm", risky=True)
    try:
        agent = Agent(ScriptedModel(["ACTION: rm[x]", "FINAL: done"]), tools=[rm], approve=True)  # type: ignore[arg-type]
    except TypeError as error:
        refusal: str | None = str(error)
    else:
        refusal = None
    if refusal is not None:
        assert "approve" in refusal
        return
    result = agent.run("Remove x.")
    assert result.steps[0].observation == "gone"


def test_a_model_class_instead_of_a_model_is_refused_when_made() -> None:
    """docs/guarantees.md: "`Agent` says what a model and a tool are". `Agent(ScriptedModel)` (the
    class, a slip for `ScriptedModel([...])`) is accepted, and `run` raises
    `TypeError: ScriptedModel.count_tokens() missing 1 required positional argument: 'text'`."""
    with pytest.raises(TypeError, match="model"):
        Agent(ScriptedModel)  # type: ignore[arg-type]


def test_a_bad_count_tokens_is_refused_naming_the_option() -> None:
    """docs/guarantees.md: "bad limits are refused when made, naming the option"; set-up is checked
    when made. `Agent(model, count_tokens=5)` raises `TypeError: the first argument must be
    callable`, which does not say which argument."""
    with pytest.raises(TypeError, match="count_tokens"):
        Agent(ScriptedModel(["FINAL: 4"]), count_tokens=5)  # type: ignore[arg-type]


def test_a_scripted_model_given_one_string_is_refused() -> None:
    """docs/how-to/testing.md: "`ScriptedModel(replies)` plays a model whose replies you choose ...
    it returns the replies one per call". `ScriptedModel("FINAL: 4")` (a string, not a list) is
    accepted and plays each character as a reply: the run ends in `format_errors` with
    "3 unreadable replies in a row", and nothing says why."""
    with pytest.raises((TypeError, ValueError), match="replies"):
        ScriptedModel("FINAL: 4")


def test_a_scripted_window_of_zero_is_refused_when_made() -> None:
    """docs/how-to/testing.md: "`context_window=` plays a server with a small window". A window of 0
    (or -5) is accepted, and `run` raises `ValueError: EpisodeSpec.window must be a positive whole
    number of tokens or None, not 0`, naming an internal class instead of `context_window`."""
    with pytest.raises((TypeError, ValueError), match="context_window"):
        ScriptedModel(["FINAL: 4"], context_window=0)


def test_an_mcp_tool_timeout_of_zero_is_refused_when_made() -> None:
    """docs/guarantees.md: "set-up is checked when made"; `mcp_tools`' docstring: "`timeout` is each
    tool's time limit in seconds". `mcp_tools(server, timeout=0)` (or -1, or "5") is accepted; the
    block then prints "skipped the tool 'get-weather' ...: timeout must be a positive number" and
    yields no tools at all, so the run says "There is no tool named "get-weather". Valid tools: ."."""
    with pytest.raises((TypeError, ValueError), match="timeout"):
        mcp_tools("python server.py", timeout=0)


def test_mcp_env_values_that_are_not_text_are_refused_when_made() -> None:
    """docs/guarantees.md: "set-up is checked when made". `mcp_tools(cmd, env={"DEBUG": 1})` is
    accepted; entering the block raises `TypeError: object of type 'int' has no len()` out of the
    key-redaction code, after a pydantic traceback."""
    with pytest.raises((TypeError, ValueError), match="env"):
        mcp_tools("python server.py", env={"DEBUG": 1})  # type: ignore[dict-item]


def test_mcp_servers_passed_as_a_list_are_refused_in_words() -> None:
    """docs/how-to/mcp.md: "`mcp_tools("python server.py", "http://127.0.0.1:8000/mcp")` takes
    several servers at once". Passing them as one list, `mcp_tools(["python server.py"])`, raises
    `AttributeError: 'list' object has no attribute 'strip'` instead of saying what it takes."""
    with pytest.raises((TypeError, ValueError), match="server"):
        mcp_tools(["python server.py"])  # type: ignore[arg-type]


def test_a_reply_with_no_text_is_a_model_error(drive: Any) -> None:
    """docs/guarantees.md: "`Agent.run` and `arun` never raise for a model or network failure or a
    malformed answer: they return `stop_reason "model_error"`". A model whose Reply has text None
    (as a backend gets for `"content": null`) makes `run` raise
    `TypeError: 'None' is not an instance of 'str'`, under both drivers."""
    try:
        model = ScriptedModel([Reply(None)])  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return  # refused when made: fine
    result = drive(Agent(model), "What is 2 + 2?")
    assert result.stop_reason == "model_error"


class _Answers(JSONHandler):
    """A chat server that answers each POST with the next of `bodies` (200), recording the requests."""

    bodies: ClassVar[list[dict[str, Any]]] = []
    posts: ClassVar[list[dict[str, Any]]] = []

    def do_GET(self) -> None:
        self.send_json(404, {"object": "error", "message": "not found"})

    def do_POST(self) -> None:
        self.posts.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_json(200, self.bodies[min(len(self.posts), len(self.bodies)) - 1])


def _chat(content: str | None) -> dict[str, Any]:
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    usage = {"prompt_tokens": 300, "completion_tokens": 3, "total_tokens": 303}
    return {"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": [choice], "usage": usage}


@pytest.fixture
def answers() -> Iterator[str]:
    _Answers.posts = []
    with serving(_Answers) as url:
        yield url


def test_a_server_reply_of_null_content_is_an_empty_reply_the_run_corrects(drive: Any, answers: str) -> None:
    """What a real backend makes of `"content": null` with no reasoning: Reply(""), which the loop
    answers with the corrective observation for an empty reply, and the run goes on (never a
    TypeError, under either driver)."""
    _Answers.bodies = [_chat(None), _chat("FINAL: 4")]
    model = OpenAIChat("m", base_url=answers, api_key="none", max_retries=0)
    result = drive(Agent(model, limits=Limits(reply_tokens=64)), "What is 2 + 2?")
    assert (result.stop_reason, result.answer) == ("final", "4"), result.error
    assert (result.steps[0].reply, result.steps[0].parsed.reason) == ("", "empty")
    assert len(_Answers.posts) == 2


@pytest.mark.parametrize(
    ("option", "options"),
    [
        ("base_url", {"base_url": "127.0.0.1:8000/v1"}),
        ("timeout", {"timeout": -5}),
        ("timeout", {"timeout": 0}),
        ("extra_body", {"extra_body": [1]}),
        ("model", {"model": None}),
    ],
)
def test_openai_chat_refuses_a_bad_option_when_made(option: str, options: dict[str, Any]) -> None:
    """docs/guarantees.md: "set-up is checked when made"; troubleshooting.md gives "could not reach
    *url*" for "no server answers at that URL". Today each of these is accepted and shows up only in
    a run, misleadingly: `base_url="127.0.0.1:8000/v1"` (no scheme, a server running there) ends
    as "could not reach 127.0.0.1:8000/v1/: Connection error."; `timeout=-5` as "bad answer from
    ...: Timeout value out of range"; `timeout=0` as "could not reach"; `extra_body=[...]` raises
    "cannot convert dictionary update sequence element #0 to a sequence"; `OpenAIChat(None)` makes
    `Agent(...)` raise `AttributeError: 'NoneType' object has no attribute 'startswith'`."""
    arguments = {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "none", **options}
    model = arguments.pop("model")
    with pytest.raises((TypeError, ValueError), match=option):
        OpenAIChat(model, **arguments)


def test_extra_body_does_not_replace_the_planned_allowance_or_the_prompt(answers: str) -> None:
    """docs/concepts/limits.md: "`Limits(tokens=N)` ... is *planned*: a call is made only if, after
    it, the forced final call still fits"; docs/guarantees.md: "no run is billed past
    `Limits(tokens=...)`". `OpenAIChat(..., extra_body={"max_tokens": 4000})` sends max_tokens 4000
    whatever the plan (reply_tokens=64, tokens=2000), and `extra_body={"messages": [...]}` replaces
    the whole prompt, silently. Either is refused when made, or the engine's own fields win."""
    try:
        model = OpenAIChat("m", base_url=answers, api_key="none", max_retries=0, extra_body={"max_tokens": 4000})
    except (TypeError, ValueError) as error:
        refusal: str | None = str(error)
    else:
        refusal = None
    if refusal is not None:
        assert "extra_body" in refusal
        return
    _Answers.bodies = [_chat("FINAL: done")]
    Agent(model, limits=Limits(reply_tokens=64, tokens=2000)).run("What is 2 + 2?")
    assert _Answers.posts[-1]["max_tokens"] <= 64


def test_extra_body_fields_of_its_own_are_sent(answers: str) -> None:
    """What extra_body is for still works: fields the engine does not write go with every request."""
    _Answers.bodies = [_chat("FINAL: 4")]
    model = OpenAIChat("m", base_url=answers, api_key="none", max_retries=0, extra_body={"top_k": 20})
    assert Agent(model, limits=Limits(reply_tokens=64)).run("What is 2 + 2?").answer == "4"
    assert (_Answers.posts[0]["top_k"], _Answers.posts[0]["max_tokens"]) == (20, 64)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("option", "options"),
    [("n_ctx", {"n_ctx": "4096"}), ("api", {"api": "bogus"}), ("n_threads", {"n_threads": 0})],
)
def test_local_model_refuses_a_bad_option_when_made(option: str, options: dict[str, Any]) -> None:
    """docs/guarantees.md: "set-up is checked when made". `LocalModel(n_ctx="4096")` raises
    `TypeError: '<' not supported between instances of 'int' and 'str'` (no option named);
    `LocalModel(api="bogus")` and `LocalModel(n_threads=0)` are accepted. (Slow: on today's main the
    embedded model is loaded before any check; run under flock /tmp/react-text-llama.lock.)"""
    with pytest.raises((TypeError, ValueError), match=option):
        LocalModel(**options)


@pytest.mark.slow  # should a check go, the model would load (under the llama.cpp lock, as slow tests run)
@pytest.mark.parametrize(
    ("option", "options"),
    [
        ("n_ctx", {"n_ctx": 100}),
        ("n_threads", {"n_threads": "2"}),
        ("think", {"think": 1}),
        ("prefix_cache", {"prefix_cache": None}),
        ("path", {"path": 5}),
        ("temperature", {"temperature": -1}),
        ("seed", {"seed": -1}),
    ],
)
def test_local_model_refuses_the_other_bad_options_before_loading(option: str, options: dict[str, Any]) -> None:
    with pytest.raises((TypeError, ValueError), match=option):
        LocalModel(**options)


# The siblings the review did not try: every public constructor, each option with a wrong type or
# out of range, refused when made, the error naming the option (a regex on its words).
_URL = "http://127.0.0.1:9/v1"


class _ApiChatt:
    api = "chatt"
    name = "m"
    accepts_grammar = False

    def generate(self, request: object) -> Reply:
        return Reply("FINAL: 4")


SIBLINGS: dict[str, tuple[Callable[[], object], str]] = {
    "Agent approve='stop'": (lambda: Agent(ScriptedModel([]), approve="stop"), "approve"),  # type: ignore[arg-type]
    "Agent parser=None": (lambda: Agent(ScriptedModel([]), parser=None), "parser"),  # type: ignore[arg-type]
    "Agent parser='strik'": (lambda: Agent(ScriptedModel([]), parser="strik"), "PARSERS"),  # type: ignore[arg-type]
    "Agent count_tokens='cl100k_base'": (
        lambda: Agent(ScriptedModel([]), count_tokens="cl100k_base"),  # type: ignore[arg-type]
        "count_tokens",
    ),
    "Agent model api 'chatt'": (lambda: Agent(_ApiChatt()), r"api"),  # type: ignore[arg-type]
    "Agent model the class OpenAIChat": (lambda: Agent(OpenAIChat), r"class OpenAIChat"),  # type: ignore[arg-type]
    "ScriptedModel a reply that is a number": (lambda: ScriptedModel(["FINAL: 4", 4]), "reply 2"),  # type: ignore[list-item]
    "ScriptedModel bytes": (lambda: ScriptedModel(b"FINAL: 4"), "replies"),  # type: ignore[arg-type]
    "ScriptedModel.per_run one string": (lambda: ScriptedModel.per_run("FINAL: 4"), "replies"),
    "ScriptedModel context_window -5": (lambda: ScriptedModel([], context_window=-5), "context_window"),
    "ScriptedModel context_window '600'": (lambda: ScriptedModel([], context_window="600"), "context_window"),  # type: ignore[arg-type]
    "ScriptedModel api 'json'": (lambda: ScriptedModel([], api="json"), r"ScriptedModel\.api"),  # type: ignore[arg-type]
    "ScriptedModel tokenizer 3": (lambda: ScriptedModel([], tokenizer=3), "tokenizer"),  # type: ignore[arg-type]
    "ScriptedModel message_overhead -1": (lambda: ScriptedModel([], message_overhead=-1), "message_overhead"),
    "Reply text bytes": (lambda: Reply(b"FINAL: 4"), r"Reply\.text"),  # type: ignore[arg-type]
    "Reply usage a dict": (lambda: Reply("x", usage={"prompt_tokens": 1}), r"Reply\.usage"),  # type: ignore[arg-type]
    "OpenAICompletion base_url localhost:8000": (
        lambda: OpenAICompletion("m", base_url="localhost:8000/v1", api_key="none"),
        "base_url",
    ),
    "OpenAICompletion timeout 0": (lambda: OpenAICompletion("m", base_url=_URL, timeout=0), "timeout"),
    "OpenAICompletion timeout '5'": (lambda: OpenAICompletion("m", base_url=_URL, timeout="5"), "timeout"),  # type: ignore[arg-type]
    "OpenAICompletion max_retries -1": (lambda: OpenAICompletion("m", base_url=_URL, max_retries=-1), "max_retries"),
    "OpenAICompletion max_retries 2.5": (lambda: OpenAICompletion("m", base_url=_URL, max_retries=2.5), "max_retries"),  # type: ignore[arg-type]
    "OpenAICompletion stream 'yes'": (lambda: OpenAICompletion("m", base_url=_URL, stream="yes"), "stream"),  # type: ignore[arg-type]
    "OpenAICompletion model ''": (lambda: OpenAICompletion("", base_url=_URL), "model"),
    "OpenAICompletion extra_body prompt": (
        lambda: OpenAICompletion("m", base_url=_URL, extra_body={"prompt": "x"}),
        "extra_body may not set 'prompt'",
    ),
    "OpenAIChat extra_body max_completion_tokens": (
        lambda: OpenAIChat("m", base_url=_URL, extra_body={"max_completion_tokens": 4000}),
        "extra_body may not set 'max_completion_tokens'",
    ),
    "OpenAIChat extra_body seed": (lambda: OpenAIChat("m", base_url=_URL, extra_body={"seed": 1}), "seed="),
    "OpenAIChat extra_body stop": (lambda: OpenAIChat("m", base_url=_URL, extra_body={"stop": []}), "send_stop"),
    "mcp_tools timeout '5'": (lambda: mcp_tools("python server.py", timeout="5"), "timeout"),  # type: ignore[arg-type]
    "mcp_tools timeout nan": (lambda: mcp_tools("python server.py", timeout=float("nan")), "timeout"),
    "mcp_tools env a list": (lambda: mcp_tools("python server.py", env=["DEBUG=1"]), "env"),  # type: ignore[arg-type]
    "mcp_tools a tuple of servers": (lambda: mcp_tools(("a.py", "b.py")), r"mcp_tools\(\*servers\)"),  # type: ignore[arg-type]
    "Server a number": (lambda: Server(5), "MCP server"),  # type: ignore[arg-type]
    "tool name 5": (lambda: tool(lookup, name=5), "tool name"),  # type: ignore[arg-type]
    "tool name ''": (lambda: tool(lookup, name=""), "tool name"),
    "tool of no function": (lambda: tool(5), "tool takes a function"),  # type: ignore[arg-type]
    "tool timeout -1": (lambda: tool(lookup, timeout=-1), "timeout"),
}


@pytest.mark.parametrize("case", sorted(SIBLINGS))
def test_every_constructor_refuses_a_bad_option_naming_it(case: str) -> None:
    make, named = SIBLINGS[case]
    with pytest.raises((TypeError, ValueError), match=named):
        make()


def test_a_bad_openai_base_url_from_the_environment_is_named_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "127.0.0.1:8000/v1")
    with pytest.raises(ValueError, match=r"^OPENAI_BASE_URL must be an http:// or https:// URL.*http://127\.0\.0\.1"):
        OpenAIChat("m", api_key="none")


def test_an_mcp_header_that_is_not_text_is_named_by_its_key_never_its_value() -> None:
    with pytest.raises(TypeError, match=r"headers\['Authorization'\]") as refused:
        mcp_tools("http://127.0.0.1:9/mcp", headers={"Authorization": b"Bearer sk-secret-0123456789"})  # type: ignore[dict-item]
    assert "secret" not in str(refused.value)


def test_a_model_that_returns_no_reply_is_named(drive: Any) -> None:
    """A model of one's own whose generate returns text instead of a Reply: the error says so in the
    model's words (generate, Reply), not an internal event's."""

    class Texts:
        api = "chat"
        name = "texts"
        accepts_grammar = False

        def generate(self, request: object) -> str:
            return "FINAL: 4"

    with pytest.raises(TypeError, match=r"^the model's generate returned str, not a Reply"):
        drive(Agent(Texts()), "What is 2 + 2?")  # type: ignore[arg-type]


def test_an_exception_class_in_a_script_is_refused_naming_the_reply() -> None:
    with pytest.raises(TypeError, match="reply 1 is type"):
        ScriptedModel([ModelError])  # type: ignore[list-item]
