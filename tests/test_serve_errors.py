"""What the endpoint answers when a request or the upstream is wrong: OpenAI's error JSON with the
right status, naming the field, and never a traceback, to the client or on the console."""

from __future__ import annotations

import json
import re
import socket
import typing
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from serving_support import ADD, WEATHER, serving

from react_text import Limits, ModelError, OpenAIChat, ScriptedModel
from react_text.core.errors import ContextLengthError
from react_text.core.types import ParseErrorReason
from react_text.serving import app

USER = [{"role": "user", "content": "?"}]
SERVE_DOCS = (Path(__file__).parents[1] / "docs" / "how-to" / "serve.md").read_text(encoding="utf-8")


def post(asgi: Any, body: object, headers: dict[str, str] | None = None) -> httpx.Response:
    with serving(asgi) as url:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return httpx.post(f"{url}/chat/completions", content=content, headers=headers or {}, timeout=30)


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"messages": USER}, "model"),
        ({"model": "m"}, "messages"),
        ({"model": "m", "messages": []}, "messages"),
        ({"model": "m", "messages": [{"role": "robot", "content": "?"}]}, "messages[0].role"),
        ({"model": "m", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "messages[0].content[0]"),
        ({"model": "m", "messages": USER, "tools": {"a": 1}}, "tools"),
        (
            {"model": "m", "messages": USER, "tools": [{"type": "function", "function": {"name": "a b"}}]},
            "tools[0].function.name",
        ),
        ({"model": "m", "messages": USER, "tools": [WEATHER, WEATHER]}, "tools[1].function.name"),
        (
            {
                "model": "m",
                "messages": USER,
                "tools": [ADD],
                "tool_choice": {"type": "function", "function": {"name": "x"}},
            },
            "tool_choice",
        ),
        ({"model": "m", "messages": USER, "tool_choice": "required"}, "tool_choice"),
        ({"model": "m", "messages": USER, "max_tokens": 0}, "max_tokens"),
        ({"model": "m", "messages": USER, "temperature": "hot"}, "temperature"),
        ({"model": "m", "messages": USER, "stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"model": "m", "messages": USER, "n": 2}, "n"),
        ({"model": "m", "messages": USER, "stream": "yes"}, "stream"),
        (
            {"model": "m", "messages": [*USER, {"role": "tool", "tool_call_id": "nope", "content": "1"}]},
            "messages[1].tool_call_id",
        ),
        (
            {
                "model": "m",
                "messages": [
                    *USER,
                    {
                        "role": "assistant",
                        "tool_calls": [{"id": "a", "type": "function", "function": {"name": "add", "arguments": "{}"}}],
                    },
                    {"role": "user", "content": "and?"},
                ],
            },
            "messages[2]",
        ),
    ],
)
def test_a_malformed_request_is_a_400_naming_the_field(
    body: dict[str, Any], param: str, capfd: pytest.CaptureFixture[str]
) -> None:
    model = ScriptedModel([])
    answer = post(app(model), body)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert (error["param"], error["type"]) == (param, "invalid_request_error") and error["message"]
    assert model.calls == []
    assert "Traceback" not in "".join(capfd.readouterr())


def test_the_openai_client_reads_a_400_as_bad_request_with_its_param() -> None:
    with serving(app(ScriptedModel([]))) as url, pytest.raises(openai.BadRequestError) as raised:
        openai.OpenAI(base_url=url, api_key="-", max_retries=0).chat.completions.create(model="m", messages=[])
    assert raised.value.param == "messages"


def test_a_body_that_is_not_json_is_a_400() -> None:
    answer = post(app(ScriptedModel([])), b"{not json")
    assert answer.status_code == 400 and answer.json()["error"]["message"] == "the request body is not JSON"


def test_an_api_key_is_asked_when_one_is_set() -> None:
    asgi = app(ScriptedModel(["FINAL: in"]), api_key="sesame")
    with serving(asgi) as url:
        denied = httpx.get(f"{url}/models", headers={"Authorization": "Bearer wrong"})
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=url, api_key="wrong", max_retries=0).chat.completions.create(
                model="m", messages=USER
            )
        made = openai.OpenAI(base_url=url, api_key="sesame", max_retries=0).chat.completions.create(
            model="m", messages=USER
        )
    assert denied.status_code == 401 and denied.json()["error"]["code"] == "invalid_api_key"
    assert "sesame" not in denied.text
    assert made.choices[0].message.content == "in"


def test_a_body_past_the_bound_is_a_413_whether_or_not_its_length_is_declared() -> None:
    model = ScriptedModel([])
    big = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x" * 5000}]}).encode()
    assert post(app(model, max_body=4096), big).status_code == 413

    def pieces() -> Any:
        yield big[:3000]
        yield big[3000:]

    with serving(app(model, max_body=4096)) as url:
        chunked = httpx.post(f"{url}/chat/completions", content=pieces())
    assert chunked.status_code == 413 and chunked.json()["error"]["code"] == "request_too_large"
    assert model.calls == []


def test_the_default_bound_is_the_4_mib_the_docs_say() -> None:
    model = ScriptedModel(["FINAL: read"])
    MiB = 1024 * 1024
    assert "past 4 MiB" in SERVE_DOCS and "| `max_body` | 4 MiB (4,194,304 bytes) |" in SERVE_DOCS

    def body(size: int) -> bytes:
        made = json.dumps({"model": "m", "messages": [{"role": "user", "content": ""}]}).encode()
        return made.replace(b'"content": ""', b'"content": "' + b"x" * (size - len(made)) + b'"')

    endpoint = app(model)
    assert post(endpoint, body(4 * MiB + 1)).status_code == 413
    assert post(endpoint, body(4 * MiB)).status_code == 200


def test_the_docs_list_every_reason_a_reply_was_not_read() -> None:
    source = (Path(__file__).parents[1] / "react_text" / "serving" / "replies.py").read_text(encoding="utf-8")
    said = set(re.findall(r'unread\("(\w+)"', source)) | set(re.findall(r'problems\.append\(\("(\w+)"', source))
    reasons = said | set(typing.get_args(ParseErrorReason))
    assert len(said) >= 8
    listed = set(re.findall(r"^\| `(\w+)` \|", SERVE_DOCS.split("## Why a reply was not read")[1], re.MULTILINE))
    assert listed == reasons


def test_an_upstream_that_cannot_be_reached_is_a_502_with_its_reason(capfd: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    upstream = OpenAIChat("m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0, timeout=5)
    answer = post(app(upstream, limits=Limits(context_tokens=4096)), {"model": "m", "messages": USER})
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert error["type"] == "upstream_error" and f"127.0.0.1:{port}" in error["message"]
    assert "Traceback" not in "".join(capfd.readouterr())


def test_an_upstream_failure_is_a_502_and_a_refusal_for_length_a_400() -> None:
    failing = ScriptedModel([ModelError("the server answered 500: overloaded")])
    answer = post(app(failing), {"model": "m", "messages": USER})
    assert answer.status_code == 502 and "overloaded" in answer.json()["error"]["message"]
    refused = ScriptedModel([ContextLengthError("too long for 2048 tokens", window=2048)])
    answer = post(app(refused), {"model": "m", "messages": USER})
    assert answer.status_code == 400 and answer.json()["error"]["code"] == "context_length_exceeded"


def test_messages_past_the_context_window_are_a_400_before_any_call() -> None:
    model = ScriptedModel([])
    long = [{"role": "user", "content": "word " * 3000}]
    answer = post(app(model, limits=Limits(context_tokens=1024)), {"model": "m", "messages": long, "tools": [WEATHER]})
    assert answer.status_code == 400
    assert (answer.json()["error"]["code"], answer.json()["error"]["param"]) == ("context_length_exceeded", "messages")
    assert model.calls == []


def test_unknown_paths_and_methods_are_errors_in_the_same_shape() -> None:
    with serving(app(ScriptedModel([]))) as url:
        missing = httpx.get(f"{url}/completions")
        wrong = httpx.get(f"{url}/chat/completions")
    assert missing.status_code == 404 and "no such endpoint" in missing.json()["error"]["message"]
    assert wrong.status_code == 405 and wrong.json()["error"]["message"]
