"""`react-text serve --trace DIR` / `app(trace=DIR)`: one trace per request, in the format runs
write (read back by `trace.read`, its replies by `trace.replies`), ending with the response the
client got; credentials never written."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import openai
import pytest
from cli_support import cli, set_up_error
from serving_support import ADD, serving

from react_text import Reply, ScriptedModel
from react_text.core.errors import ConfigError
from react_text.observers import trace
from react_text.serving import app

KEY = "sk-served-0123456789abcdefghij"


def test_each_request_writes_one_trace_that_ends_with_its_response(tmp_path: Path) -> None:
    model = ScriptedModel(["I add.", "THOUGHT: add\nACTION: add[2, 3]", "THOUGHT: done\nFINAL: 5"])
    folder = tmp_path / "traces"
    messages: list[Any] = [{"role": "user", "content": "2 + 3?"}]
    with serving(app(model, trace=folder, api_key=KEY)) as url:
        client = openai.OpenAI(base_url=url, api_key=KEY, max_retries=0)
        first = client.chat.completions.create(model="m", messages=messages, tools=[ADD])
        (call,) = first.choices[0].message.tool_calls or []
        messages += [first.choices[0].message.model_dump(exclude_none=True)]
        messages += [{"role": "tool", "tool_call_id": call.id, "content": "5"}]
        second = client.chat.completions.create(model="m", messages=messages, tools=[ADD], stream=True)
        streamed = "".join(chunk.choices[0].delta.content or "" for chunk in second if chunk.choices)
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(model="m", messages=[])
    assert streamed == "5"
    written = sorted(folder.iterdir())
    assert len(written) == 3 and all(p.suffix == ".jsonl" for p in written)
    events = [list(trace.read(p)) for p in written]  # each a valid trace
    kinds = [[e["event"] for e in each] for each in events]
    assert kinds[0] == ["run_start", "request", "reply", "request", "reply", "response"]  # asked again
    assert kinds[1] == ["run_start", "request", "reply", "response"]
    assert kinds[2] == ["run_start", "response"]
    start, *_, response = events[0]
    assert start["task"] == "2 + 3?" and start["served"]["tools"] == ["add"]
    assert response["status"] == 200 and response["body"]["id"] == first.id
    assert response["body"]["choices"][0]["message"]["tool_calls"][0]["id"] == call.id
    assert response["headers"]["x-react-text-tries"] == "2"
    assert events[1][-1]["stream"] is True and events[1][-1]["body"]["choices"][0]["message"]["content"] == "5"
    assert events[2][-1]["status"] == 400 and events[2][-1]["body"]["error"]["param"] == "messages"
    assert [r.text for r in trace.replies(written[0]) if isinstance(r, Reply)] == [
        "I add.",
        "THOUGHT: add\nACTION: add[2, 3]",
    ]
    assert first.id in written[0].name
    assert not any(KEY in p.read_text(encoding="utf-8") for p in written)


def test_credentials_in_a_request_never_reach_its_trace(tmp_path: Path) -> None:
    model = ScriptedModel(["FINAL: noted"])
    said = f"my key is {KEY}; use Authorization: Bearer {KEY}"
    with serving(app(model, trace=tmp_path, api_key=KEY)) as url:
        openai.OpenAI(base_url=url, api_key=KEY, max_retries=0).chat.completions.create(
            model="m", messages=[{"role": "user", "content": said}]
        )
    (written,) = tmp_path.iterdir()
    text = written.read_text(encoding="utf-8")
    assert KEY not in text and "my key is" in text
    assert model.calls[0].prompt[-1].content.endswith(KEY)  # the model was sent it: only the trace is scrubbed


def test_serve_trace_writes_a_trace_per_request(tmp_path: Path) -> None:
    script = tmp_path / "replies.txt"
    script.write_text("THOUGHT: add\nACTION: add[2, 3]\n", encoding="utf-8")
    folder = tmp_path / "new" / "traces"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "react_text.cli",
            "serve",
            "--script",
            str(script),
            "--port",
            "0",
            "--trace",
            str(folder),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().split()[-1]
        made = openai.OpenAI(base_url=url, api_key="-", max_retries=0).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "2 + 3?"}], tools=[ADD]
        )
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert "Traceback" not in err
    (written,) = folder.iterdir()
    *_, response = trace.read(written)
    assert response["body"]["id"] == made.id
    assert json.loads(response["body"]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]) == {
        "a": 2,
        "b": 3,
    }


def test_a_trace_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("FINAL: 2\n", encoding="utf-8")
    (tmp_path / "file").write_text("", encoding="utf-8")
    said = set_up_error(cli("serve", "--script", "s.txt", "--port", "0", "--trace", "file/traces", cwd=tmp_path))
    assert said.startswith("react-text: cannot write traces to file/traces: "), said


def test_a_response_event_is_checked_where_a_trace_is_read(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"event": "run_start", "task": "", "model": {}}\n{"event": "response", "status": "ok"}\n')
    with pytest.raises(ConfigError, match=r"response\.status must be a whole number"):
        list(trace.read(bad))
