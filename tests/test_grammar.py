"""The protocol grammars as the engines that run them read them: which replies each admits."""

from __future__ import annotations

import pytest
from conftest import Drive, make_agent
from grammars import Refused, ebnf, gbnf

from react_text import ScriptedModel
from react_text.grammar.protocol import protocol_grammar

TOOLS = ("lookup", "add")


def test_a_grammar_the_engine_cannot_parse_is_refused() -> None:
    with pytest.raises(Refused):
        gbnf("root ::= (")


@pytest.mark.parametrize(
    ("reply", "admitted"),
    [
        ("THOUGHT: the price\nACTION: lookup[train ticket]", True),
        ("THOUGHT: done\nFINAL: 89", True),
        ("THOUGHT: nested\nACTION: add[[1, 2]]", True),
        ("THOUGHT: unknown\nACTION: search[x]", False),
        ("THOUGHT: two lines\nFINAL: 89\nmore", False),
        ("THOUGHT: no directive", False),
        ("FINAL: 89", False),
    ],
)
def test_the_protocol_grammar(reply: str, admitted: bool) -> None:
    assert gbnf(protocol_grammar(TOOLS)).accepts(reply) is admitted


@pytest.mark.parametrize(
    ("reply", "admitted"),
    [("THOUGHT: done\nFINAL: 89", True), ("THOUGHT: more\nACTION: lookup[train ticket]", False)],
)
def test_the_forced_final_grammar_admits_only_final(reply: str, admitted: bool) -> None:
    assert gbnf(protocol_grammar(TOOLS, action=False)).accepts(reply) is admitted


def test_act_first_grammar_admits_only_an_action() -> None:
    grammar = gbnf(protocol_grammar(TOOLS, final=False))
    assert grammar.accepts("THOUGHT: x\nACTION: lookup[a]")
    assert not grammar.accepts("THOUGHT: x\nFINAL: 1")


def test_a_grammar_must_admit_something() -> None:
    with pytest.raises(ValueError, match="must admit"):
        protocol_grammar(TOOLS, final=False, action=False)


@pytest.mark.parametrize("api", ["chat", "completion"])
def test_the_forced_final_call_is_sent_a_grammar_of_final_alone(drive: Drive, tools: list[object], api: str) -> None:
    model = ScriptedModel(
        ["THOUGHT: x\nACTION: lookup[train ticket]", "THOUGHT: y\nFINAL: 89"], api=api, accepts_grammar=True
    )
    result = drive(make_agent(model, tools, steps=1), "What does a train ticket cost?")
    assert (result.answer, result.stop_reason, result.forced) == ("89", "max_steps", True)
    normal, forced = (gbnf(call.grammar or "") for call in model.calls)
    opening = "THOUGHT: y" if api == "chat" else " y"  # a completion prompt ends in THOUGHT:
    action, final = f"{opening}\nACTION: lookup[hotel night]", f"{opening}\nFINAL: 89"
    assert normal.accepts(action) and normal.accepts(final)
    assert forced.accepts(final) and not forced.accepts(action)


@pytest.mark.slow
def test_the_embedded_model_at_its_limit_gives_a_final_answer() -> None:
    """Seen before: a run at its step limit ended "no final answer when asked for one"."""
    pytest.importorskip("llama_cpp", reason='needs pip install "react-text[local]"')
    from react_text import Agent, Limits
    from react_text.backends.local import LocalModel
    from react_text.tools.toolbox import calculator

    for api in ("completion", "chat"):
        agent = Agent(LocalModel(api=api), tools=[calculator], limits=Limits(steps=1))  # type: ignore[arg-type]
        result = agent.run("What is 17 * 23 + 5, and then times 3?")
        assert result.forced and result.stop_reason == "max_steps", (api, result.error)
        assert result.answer, (api, result.steps[-1].reply)


# --- one grammar, every engine: llama.cpp's GBNF and xgrammar's EBNF read it alike -------------

NAMES = ("calculator", "my tool", "unit-convert", "math.sqrt", "数据查询", "tool_2")
ENGINES = [pytest.param(gbnf, id="gbnf-llama.cpp"), pytest.param(ebnf, id="ebnf-xgrammar")]
VARIANTS = {
    "normal": {},
    "act_first": {"final": False},
    "forced": {"action": False},
}
REPLIES = [
    *((f"THOUGHT: I need it\nACTION: {name}[2, 3]", {"normal", "act_first"}) for name in NAMES),
    ("THOUGHT: done\nFINAL: 5", {"normal", "forced"}),
    ("THOUGHT: done\nFINAL: 数据 5", {"normal", "forced"}),
    ("THOUGHT: nested\nACTION: calculator[[1, [2]]]", {"normal", "act_first"}),
    ("THOUGHT: a near name\nACTION: my_tool[x]", set()),
    ("THOUGHT: a prefix\nACTION: my[x]", set()),
    ("THOUGHT: unbalanced\nACTION: calculator[[1]", set()),
    ("THOUGHT: on two lines\nACTION: calculator[1\n2]", set()),
    ("THOUGHT: more after\nFINAL: 5\nOBSERVATION: 6", set()),
    ("THOUGHT: empty\nFINAL: ", set()),
    ("THOUGHT: " + "x" * 201 + "\nFINAL: 5", set()),  # a thought past its bound
    ("THOUGHT: long\nFINAL: " + "y" * 201, set()),  # an answer past its bound
    ("FINAL: 5", set()),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("after_cue", [False, True], ids=["chat", "completion"])
def test_every_generated_grammar_compiles_and_admits_what_it_should(
    engine: object, variant: str, after_cue: bool
) -> None:
    grammar = engine(protocol_grammar(NAMES, after_cue=after_cue, **VARIANTS[variant]))  # type: ignore[operator]
    for reply, admitted_in in REPLIES:
        sent = reply.removeprefix("THOUGHT:") if after_cue and reply.startswith("THOUGHT:") else reply
        if after_cue and not reply.startswith("THOUGHT:"):
            continue
        assert grammar.accepts(sent) is (variant in admitted_in), (variant, sent)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_grammar_without_tools_admits_only_final(engine: object) -> None:
    grammar = engine(protocol_grammar(()))  # type: ignore[operator]
    assert grammar.accepts("THOUGHT: x\nFINAL: 1")
    assert not grammar.accepts("THOUGHT: x\nACTION: calculator[1]")
