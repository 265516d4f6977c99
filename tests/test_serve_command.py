"""`react-text serve` as a user meets it: it prints its URL once it listens and answers there; its
set-up mistakes are one line; and the embedded model behind it writes tool calls (slow)."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import openai
import pytest
from cli_support import cli, set_up_error
from serving_support import ADD, serving

from react_text.serving import app


def test_serve_prints_its_url_once_listening_and_answers_there(tmp_path: Path) -> None:
    script = tmp_path / "replies.txt"
    script.write_text("THOUGHT: add\nACTION: add[2, 3]\n---\nTHOUGHT: done\nFINAL: 5\n", encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "react_text.cli", "serve", "--script", str(script), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("react-text serve: listening on http://127.0.0.1:"), line
        url = line.split()[-1]
        client = openai.OpenAI(base_url=url, api_key="-", max_retries=0)
        first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "2 + 3?"}], tools=[ADD])
        (call,) = first.choices[0].message.tool_calls or []
        assert json.loads(call.function.arguments) == {"a": 2, "b": 3}
        bad = client.with_options().chat.completions.with_raw_response
        with pytest.raises(openai.BadRequestError):
            bad.create(model="m", messages=[])
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--script", "nowhere.txt"), "nowhere.txt: no such script file"),
        (("--script", "s.txt", "--base-url", "http://127.0.0.1:1/v1"), "--script plays replies instead of a model"),
        (("--base-url", "http://127.0.0.1:1/v1"), "--base-url needs --model NAME"),
    ],
)
def test_a_set_up_mistake_is_one_line(tmp_path: Path, args: tuple[str, ...], said: str) -> None:
    (tmp_path / "s.txt").write_text("FINAL: 2\n", encoding="utf-8")
    assert said in set_up_error(cli("serve", *args, cwd=tmp_path))


def test_a_port_in_use_is_one_line_and_exit_status_2(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("FINAL: 2\n", encoding="utf-8")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        said = set_up_error(cli("serve", "--script", "s.txt", "--port", str(port), cwd=tmp_path))
    assert said.startswith(f"react-text: cannot listen on 127.0.0.1:{port}: "), said
    assert "in use" in said.casefold()


def test_a_host_that_cannot_be_bound_is_one_line_and_exit_status_2(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text("FINAL: 2\n", encoding="utf-8")
    for host in ("203.0.113.7", "no-such-host.invalid"):  # not this machine's; not a name at all
        said = set_up_error(cli("serve", "--script", "s.txt", "--host", host, "--port", "0", cwd=tmp_path))
        assert said.startswith(f"react-text: cannot listen on {host}:0: "), said


@pytest.mark.slow
def test_the_embedded_model_behind_the_endpoint_writes_a_tool_call() -> None:
    pytest.importorskip("llama_cpp", reason='needs pip install "react-text[local]"')
    from llama_server import llama_lock

    from react_text.backends.local import LocalModel

    with llama_lock():
        model = LocalModel()
        try:
            with serving(app(model)) as url:
                made = openai.OpenAI(base_url=url, api_key="-", max_retries=0).chat.completions.create(
                    model="smollm2",
                    messages=[{"role": "user", "content": "What is 17 + 25?"}],
                    tools=[ADD],
                    tool_choice="required",
                    parallel_tool_calls=False,  # a 135M model repeats its call while the grammar lets it
                )
        finally:
            model.close()
    (call,) = made.choices[0].message.tool_calls or []
    arguments = json.loads(call.function.arguments)
    assert call.function.name == "add" and made.choices[0].finish_reason == "tool_calls"
    assert set(arguments) == {"a", "b"} and all(type(v) is int for v in arguments.values())  # typed by the grammar
    assert made.usage is not None and made.usage.prompt_tokens > 100


def test_app_stays_the_function_once_every_module_of_serving_is_imported() -> None:
    """The full suite imports every module (test_imports.py); a submodule named `app` then took the
    package's attribute `app`, and every later `app(upstream)` was "'module' object is not callable"."""
    import importlib
    import pkgutil

    import react_text.serving as serving
    from react_text import ScriptedModel

    for module in pkgutil.iter_modules(serving.__path__):
        importlib.import_module(f"react_text.serving.{module.name}")
    assert serving.app is app and callable(serving.app)
    assert callable(serving.app(ScriptedModel(["FINAL: x"])))
