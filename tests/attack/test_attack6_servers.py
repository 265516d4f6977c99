"""attack6: custom clients and server URLs with credentials, under both drivers.

docs/how-to/servers.md:53-54: the backends take `client=` / `async_client=`, "your own
`openai.OpenAI` and `openai.AsyncOpenAI`"; docs/concepts/loop.md:32 and README: `await
agent.arun(task)` runs "the same agent" in async code. docs/how-to/traces.md:41: "server URLs are
shown without credentials or query", and the backends' `url` is "fit for a message (no
credentials, no query)".
"""

from __future__ import annotations

import asyncio

import openai
import pytest
from _attack6_fake import DRIVERS, drive, serving

from react_text import Agent, OpenAIChat, OpenAICompletion

BACKENDS = {"chat": OpenAIChat, "completion": OpenAICompletion}


@pytest.mark.parametrize("api", list(BACKENDS))
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_custom_clients_headers_and_query_reach_the_server_under_both_drivers(api: str, driver: str) -> None:
    reply = "THOUGHT: easy.\nFINAL: 4" if api == "chat" else " easy.\nFINAL: 4"
    with serving([reply]) as fake:
        client = openai.OpenAI(
            base_url=fake.url,
            api_key="sk-mine",
            default_headers={"X-Proxy-Token": "let-me-in"},
            default_query={"tenant": "t1"},
            organization="org-mine",
        )
        result = drive(Agent(BACKENDS[api]("m", client=client)), "What is 2 + 2?", driver)
        (post,) = fake.posts()
    assert result.answer == "4"
    assert post["headers"]["authorization"] == "Bearer sk-mine"
    assert post["headers"].get("x-proxy-token") == "let-me-in"
    assert post["headers"].get("openai-organization") == "org-mine"
    assert post["path"].endswith("?tenant=t1")


@pytest.mark.parametrize("driver", DRIVERS)
def test_what_a_server_said_of_itself_holds_no_credentials(driver: str) -> None:
    with serving(["THOUGHT: easy.\nFINAL: 4"]) as fake:  # it answers no identity probe: "did not say"
        model = OpenAIChat("m", base_url=fake.url.replace("http://", "http://alice:pa55word@"), api_key="none")
        result = drive(Agent(model), "What is 2 + 2?", driver)
        said = model.identity.said if driver == "run" else asyncio.run(model.aidentify()).said
    assert result.answer == "4"
    assert "pa55word" not in model.url and "pa55word" not in repr(model)  # as promised here
    assert "pa55word" not in said, said
