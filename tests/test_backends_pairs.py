"""Where two backend features meet (issue 33), each under both drivers where a run is involved:

- identification x traces: a base URL's user, password and query never leave the engine, in the
  trace's run_start (what the server said), the run's error, the CLI's output;
- custom clients x the model check: a client that lacks what the backend calls is refused when the
  backend is made, naming what it lacks (not later as a model that "has no accepts_grammar");
- naming the server x detection: `server="vllm"` still asks the version, which decides where its
  grammar goes (docs/how-to/servers.md: a vLLM before 0.12 gets `guided_grammar`).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import openai
import pytest
from conftest import Drive
from fake_openai import FakeServer

from react_text import Agent, OpenAIChat, OpenAICompletion
from react_text.evaluation.config import describe
from react_text.observers.trace import Tracer
from react_text.tools.toolbox import calculator

SECRETS = ("alice", "s3cr3t-pw", "tok-9f8e7d")


def closed_port() -> int:
    """A port on this machine that nothing listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def with_secrets(url: str) -> str:
    """`url` with a user, a password and a query holding a token."""
    scheme, rest = url.split("://", 1)
    return f"{scheme}://{SECRETS[0]}:{SECRETS[1]}@{rest}?token={SECRETS[2]}"


def shown(text: str) -> list[str]:
    return [secret for secret in SECRETS if secret in text]


# -- identification x traces ----------------------------------------------------------------------


@pytest.mark.parametrize("cls", [OpenAIChat, OpenAICompletion])
def test_what_the_server_said_names_no_credentials_when_it_cannot_be_reached(cls: Any) -> None:
    model = cls("m", base_url=with_secrets(f"http://127.0.0.1:{closed_port()}/v1"), max_retries=0)
    assert "could not be reached" in model.identity.said
    assert shown(model.identity.said) == [] and shown(repr(model)) == []


def test_what_the_server_said_names_no_credentials_when_it_answers_nothing_known() -> None:
    with FakeServer() as fake:  # answers 404 to every probe: "did not say what it is", with its URL
        model = OpenAIChat("fake", base_url=with_secrets(fake.url))
        said = model.identity.said
    assert "did not say what it is" in said and shown(said) == []
    assert fake.gets and all("?token=" + SECRETS[2] in path for path in fake.gets)  # sent, as the user asked
    assert "/props?token=" in fake.gets[0]  # the path joined before the query, not after it


def test_the_trace_of_a_run_names_no_credentials(drive: Drive, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    model = OpenAIChat("m", base_url=with_secrets(f"http://127.0.0.1:{closed_port()}/v1"), max_retries=0)
    agent = Agent(model, tools=[calculator]).with_limits(steps=2)
    with Tracer(path) as tracer:
        tracer.start("What is 2 + 3?", describe(agent))  # a run_start, as the CLI writes it
        result = _run(drive, agent, tracer)
    text = path.read_text()
    start = json.loads(text.splitlines()[0])
    assert start["event"] == "run_start" and "could not be reached" in start["model"]["server_said"]
    assert result.stop_reason == "model_error" and shown(result.error or "") == []
    assert shown(text) == []


def _run(drive: Drive, agent: Agent, tracer: Tracer) -> Any:
    """The run under `drive`'s driver, observed by the trace."""
    import asyncio

    if drive.__name__ == "sync":
        return agent.run("What is 2 + 3?", observer=tracer.observer)
    return asyncio.run(agent.arun("What is 2 + 3?", observer=tracer.observer))


def test_the_cli_says_no_credentials(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from react_text.cli.main import main

    trace = tmp_path / "run.jsonl"
    url = with_secrets(f"http://127.0.0.1:{closed_port()}/v1")
    code = main(["run", "What is 2 + 3?", "--base-url", url, "--model", "m", "--trace", str(trace)])
    out, err = capsys.readouterr()
    assert code != 0 and "could not reach" in out + err
    assert shown(out + err) == [] and shown(trace.read_text()) == []


# -- custom clients x the model check -------------------------------------------------------------


class Partial:
    """A client with some of what the backend calls: a URL and `post`, no look-ups."""

    base_url = "http://127.0.0.1:9/v1"

    def post(self, *args: Any, **kwargs: Any) -> object:
        raise AssertionError("never called: the backend is refused first")


@pytest.mark.parametrize("cls", [OpenAIChat, OpenAICompletion])
def test_a_client_that_lacks_what_is_called_is_refused_naming_it(cls: Any) -> None:
    with pytest.raises(TypeError, match=r"client has no get, with_options, api_key, timeout, max_retries") as caught:
        cls("m", client=Partial())
    assert "accepts_grammar" not in str(caught.value)


def test_an_async_client_given_spares_the_settings_it_would_be_built_from() -> None:
    class Looks(Partial):
        def get(self, *args: Any, **kwargs: Any) -> object:
            return None

        def with_options(self, **options: Any) -> Looks:
            return self

    with pytest.raises(TypeError, match="client has no api_key, timeout, max_retries"):
        OpenAIChat("m", client=Looks())
    model = OpenAIChat("m", client=Looks(), async_client=openai.AsyncOpenAI(base_url=Partial.base_url, api_key="x"))
    assert model.url == "http://127.0.0.1:9/v1"


def test_a_real_client_runs(drive: Drive) -> None:
    with FakeServer() as fake:
        client = openai.OpenAI(base_url=fake.url, api_key="x", max_retries=0)
        result = drive(Agent(OpenAIChat("fake", client=client), tools=[calculator]), "What is 2 + 3?")
    assert result.stop_reason == "final"


# -- naming the server x detection: vLLM's version decides its grammar's field --------------------

VLLM_SAYS = {"/version": {"version": "0.10.2"}}


@pytest.mark.parametrize(
    ("version", "field"),
    [
        ("0.10.2", "guided_grammar"),
        ("0.11.0rc1", "guided_grammar"),
        ("0.12.0", "structured_outputs"),
        (None, "structured_outputs"),
    ],
)
def test_a_vllm_named_is_asked_its_version(drive: Drive, version: str | None, field: str) -> None:
    about = {"/version": {"version": version}} if version else {}  # None: it does not say (404)
    with FakeServer(about=about) as fake:
        model = OpenAIChat("fake", base_url=fake.url, server="vllm", grammar=True)
        drive(Agent(model, tools=[calculator]).with_limits(steps=2), "What is 2 + 3?")
    assert fake.bodies and all(field in body for body in fake.bodies)
    assert fake.gets.count("/version") == 1  # asked once, whatever the runs
    # nothing else of detection (/v1/models and /props are the context window's look-up)
    assert {"/server_info", "/get_server_info", "/api/version", "/openapi.json"}.isdisjoint(fake.gets)
    said = model.identity.said
    assert said.startswith("server='vllm' was given") and ("guided_grammar" in said) == (field == "guided_grammar")


def test_named_or_detected_the_same_vllm_gets_the_same_field(drive: Drive) -> None:
    detected = {**VLLM_SAYS, "/v1/models": {"data": [{"id": "fake", "owned_by": "vllm"}]}}
    sent = []
    for server in ("vllm", None):
        with FakeServer(about=detected) as fake:
            model = OpenAIChat("fake", base_url=fake.url, server=server, grammar=True)
            drive(Agent(model, tools=[calculator]).with_limits(steps=2), "What is 2 + 3?")
        sent.append({key for body in fake.bodies for key in body if key in ("guided_grammar", "structured_outputs")})
    assert sent == [{"guided_grammar"}, {"guided_grammar"}]


@pytest.mark.parametrize("server", ["llama.cpp", "sglang"])
def test_a_name_that_decides_alone_asks_nothing(server: str) -> None:
    with FakeServer(about=VLLM_SAYS) as fake:
        model = OpenAIChat("fake", base_url=fake.url, server=server, grammar=True)  # type: ignore[arg-type]
        Agent(model, tools=[calculator]).with_limits(steps=2).run("What is 2 + 3?")
    assert "/version" not in fake.gets and model.identity.said.startswith(f"server={server!r} was given")
