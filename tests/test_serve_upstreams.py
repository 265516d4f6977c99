"""Several upstreams behind one endpoint (`react-text serve --base-url A --base-url B`, `app([a, b])`):
conversations spread over them and each sticks to one (its prefix cache keeps hitting), and an
upstream that cannot be reached passes its requests to the next, said in a log line and a header.
Two fake OpenAI servers count which got which request."""

from __future__ import annotations

import logging
import signal
import socket
import subprocess
import sys
from typing import Any

import openai
import pytest
from fake_openai import FakeServer
from serving_support import ADD, serving

from react_text import OpenAIChat
from react_text.serving import app

ANSWER = "THOUGHT: ok\nFINAL: done"


def fake() -> FakeServer:
    return FakeServer(say=lambda messages: ANSWER)


def upstream(url: str) -> OpenAIChat:
    return OpenAIChat("fake", base_url=url, api_key="-", max_retries=0)


def dead_url() -> str:
    """A URL where nothing listens (a port just freed)."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def got(server: FakeServer, tag: str) -> int:
    """How many requests of the conversation `tag` the server received."""
    return sum(f"{tag}:" in str(body["messages"]) for body in server.bodies)


def converse(client: openai.OpenAI, tag: str, **options: Any) -> list[Any]:
    """A conversation of two requests (the second begins with the first's messages); their raw responses."""
    messages: list[Any] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": f"{tag}: hi"}]
    first = client.chat.completions.with_raw_response.create(model="m", messages=messages, tools=[ADD], **options)
    messages += [{"role": "assistant", "content": "done"}, {"role": "user", "content": "and then?"}]
    second = client.chat.completions.with_raw_response.create(model="m", messages=messages, tools=[ADD])
    return [first, second]


def test_conversations_spread_over_the_upstreams_and_each_sticks_to_one() -> None:
    with fake() as a, fake() as b, serving(app([upstream(a.url), upstream(b.url)])) as url:
        client = openai.OpenAI(base_url=url, api_key="-", max_retries=0)
        tags = [f"conversation {i}" for i in range(12)]
        said = {tag: converse(client, tag) for tag in tags}
        client.close()
    for tag in tags:
        counts = (got(a, tag), got(b, tag))
        assert sorted(counts) == [0, 2], (tag, counts)  # both requests of it on one upstream
        (where,) = {raw.headers["x-react-text-upstream"] for raw in said[tag]}
        assert where == ("0" if counts[0] else "1")
        assert all("x-react-text-failed-over" not in raw.headers for raw in said[tag])
    on_a = sum(1 for tag in tags if got(a, tag))
    assert 0 < on_a < len(tags)  # both servers got conversations
    assert len(a.bodies) + len(b.bodies) == 2 * len(tags)  # each request sent once


def test_an_unreachable_upstream_passes_its_requests_to_the_next(caplog: pytest.LogCaptureFixture) -> None:
    dead = dead_url()
    caplog.set_level(logging.WARNING, logger="react_text.serving")
    with fake() as live, serving(app([upstream(dead), upstream(live.url)])) as url:
        client = openai.OpenAI(base_url=url, api_key="-", max_retries=0)
        tags = [f"conversation {i}" for i in range(10)]
        said = {tag: converse(client, tag) for tag in tags}
        streamed = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "a stream"}], stream=True
        )
        text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices)
        client.close()
    assert text == "done"
    assert all(got(live, tag) == 2 for tag in tags)  # every request answered by the live one
    headers = [raw.headers for tag in tags for raw in said[tag]]
    assert all(h["x-react-text-upstream"] == "1" for h in headers)
    passed = [h for h in headers if "x-react-text-failed-over" in h]
    assert passed and all(h["x-react-text-failed-over"] == "0" for h in passed)  # those that stuck to the dead one
    assert len(passed) < len(headers)  # the others went to the live one directly
    lines = [r.getMessage() for r in caplog.records if "could not be reached" in r.getMessage()]
    assert lines and all(dead in line and "upstream 1" in line for line in lines)
    assert len(lines) == 1  # found unreachable once: passed over without asking while it rests


def test_when_no_upstream_can_be_reached_it_is_a_502_naming_them() -> None:
    first, second = dead_url(), dead_url()
    with serving(app([upstream(first), upstream(second)])) as url:
        client = openai.OpenAI(base_url=url, api_key="-", max_retries=0)
        with pytest.raises(openai.InternalServerError) as raised:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        client.close()
    assert raised.value.status_code == 502
    assert "could not reach" in str(raised.value.message)


def test_an_empty_list_of_upstreams_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        app([])


def test_serve_takes_several_base_urls_and_says_a_failover_in_a_line() -> None:
    dead = dead_url()
    with fake() as live:
        urls = ["--base-url", dead, "--base-url", live.url]
        process = subprocess.Popen(
            [sys.executable, "-m", "react_text.cli", "serve", "--port", "0", "--model", "fake", *urls],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**__import__("os").environ, "OPENAI_API_KEY": "-"},
        )
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert line.startswith("react-text serve: listening on"), line
            client = openai.OpenAI(base_url=line.split()[-1], api_key="-", max_retries=0)
            for i in range(6):
                made = client.chat.completions.create(model="m", messages=[{"role": "user", "content": f"q{i}"}])
                assert made.choices[0].message.content == "done"
            client.close()
        finally:
            process.send_signal(signal.SIGINT)
            _, err = process.communicate(timeout=30)
    assert len(live.bodies) == 6
    assert "could not be reached" in err and dead in err
    assert "Traceback" not in err
