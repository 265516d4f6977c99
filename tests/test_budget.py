from __future__ import annotations

import math
import socket

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from react_text.core.types import Message, Usage
from react_text.tokens import meter as budget
from react_text.tokens.history import History


def test_encoding_from_the_model_name() -> None:
    assert budget.encoding_name("gpt-4o-mini") == "o200k_base"
    assert budget.encoding_name("gpt-4") == "cl100k_base"
    assert budget.encoding_name("SmolLM2-135M-Instruct.Q4_1") == "cl100k_base"


def test_counts_match_the_published_encodings() -> None:
    assert budget.encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert budget.encoding("o200k_base").encode("hello world") == [24912, 2375]


def test_loads_with_the_network_off(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise OSError("network is off in this test")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    budget.encoding.cache_clear()
    budget.counter.cache_clear()  # the counter holds its encoding: made again, it loads it again
    assert budget.counter("gpt-4o")("hello world") == 2


def test_unknown_encoding_is_a_clear_error() -> None:
    with pytest.raises(budget.TokenizerError, match="no bundled BPE file"):
        budget.encoding("p50k_base")


def floored(count: budget.Counter, opening: list[str]) -> budget.Counter:
    """The history's local count, recounted whole: tokens, but at least the length at the opening's density."""
    density = sum(count(t) for t in opening) / sum(len(t) for t in opening)
    return lambda text: max(count(text), math.ceil(len(text) * density))


def test_history_count_is_incremental_and_matches_a_full_count() -> None:
    count = budget.counter("gpt-4o")
    history = History((Message("system", "rules " * 50), Message("user", "task")), count)
    history.add_reply("ACTION: a[b]", 1)
    history.add_observation("42\nand more", 1)
    prompt = history.prompt()
    assert isinstance(prompt, tuple)
    local = floored(count, ["rules " * 50, "task"])
    full = sum(local(m.content) + budget.MESSAGE_OVERHEAD for m in prompt) + budget.REPLY_PRIMING
    assert history.tokens == full


def test_a_text_counts_at_least_its_length_at_the_openings_density() -> None:
    """Issue 20 (F5): tiktoken reads a Latin page in 691 tokens where a server counting characters
    reads 951, and the instructions, all the server had counted, told it nothing of that. A text
    tiktoken reads unusually densely counts as its length at the opening's tokens a character."""
    count = budget.counter("gpt-4o")
    rules = "Answer the question. Use a tool when you need one, then give the final answer. " * 8
    history = History((Message("system", rules), Message("user", "Read.")), count)
    density = (count(rules) + count("Read.")) / (len(rules) + len("Read."))
    page = "lorem ipsum dolor " * 150
    assert count(page) < len(page) * density  # tiktoken reads it more densely than the rules
    assert history.cost(page) >= len(page) * density
    dense = '{"id": 17, "qty": [3, 4], "at": "2026-12-01"}\n' * 10  # read more densely than the rules: as is
    assert history.cost(dense) == count(history.observation_piece(dense)) + budget.MESSAGE_OVERHEAD


def test_history_count_of_a_transcript_is_never_below_a_full_count() -> None:
    count = budget.counter("gpt-4o")
    history = History("rules " * 50 + "\nQUESTION: task\n", count)
    history.add_reply(" think\nACTION: a[b]", 1)
    history.add_observation("42", 1)
    prompt = history.prompt()
    assert isinstance(prompt, str)
    # pieces counted apart may differ by a token at a boundary; never by less than the whole
    local = floored(count, ["rules " * 50 + "\nQUESTION: task\n"])
    assert local(prompt) <= history.tokens <= local(prompt) + 4


def test_meter_learns_the_servers_count() -> None:
    meter = budget.Meter()
    assert meter.estimate(1000) == 1000  # nothing reported yet: the local count
    meter.sent(Usage(2000, 10), 1000, reported=True)  # the server counts twice as many
    meter.appended(100)
    assert meter.estimate(1100) >= 2000 + 200
    before = meter.estimate(1100)
    meter.rewritten(budget.Cut(counted=500), 600)
    # an elision only shortens the history: its estimate never grows past the one before it, less
    # the least the cut saved, and stays on the high side of what the server will count
    assert 1200 <= meter.estimate(600) <= before


def _steps(chat: bool) -> History:
    """A history of five steps of several sizes: observations worth eliding, and one ("ok") that is not."""
    count = budget.counter("gpt-4o")
    opening = (Message("system", "rules " * 50), Message("user", "task")) if chat else "rules " * 50 + "\nQ: task\n"
    history = History(opening, count)
    for step in range(1, 6):
        history.add_reply(f" {'think ' * 10 * step}\nACTION: page[p{step}]", step, f"ACTION: page[p{step}]")
        history.add_observation("word " * 40 * (step % 3) or "ok", step)
    return history


@pytest.mark.parametrize("chat", [True, False])
def test_the_floor_of_a_history_is_what_eliding_everything_leaves(chat: bool) -> None:
    """`History.floor(k)` is the count `elide(0, k)` reaches, and elides nothing itself."""
    history = _steps(chat)
    for keep_from in range(1, 7):
        floor = history.floor(keep_from)
        assert history.elided == ()
        elided = _steps(chat)
        elided.elide(0, keep_from)
        assert elided.tokens == floor, keep_from
        assert floor < history.tokens or keep_from == 1
    assert history.floor(1) == history.tokens  # nothing before step 1 to elide


def test_a_cut_saves_at_the_smallest_ratio_the_server_showed() -> None:
    """What an elision saves is text the server has counted: at the smallest ratio it showed, with
    no margin (the margin is for new text); a tenth less refused prompts that fitted (issue 20)."""
    meter = budget.Meter()
    meter.sent(Usage(2000, 10), 1000, reported=True)
    assert meter.after_cut(budget.Cut(counted=500), 500) == 1000
    meter.rewritten(budget.Cut(counted=500), 500)
    assert meter.estimate(500) == 1000


@pytest.mark.parametrize(
    "cut",
    [
        budget.Cut(counted=500),
        budget.Cut(counted=300, counted_after=20, fresh=100, fresh_after=10),
        budget.Cut(fresh=100, fresh_after=10),
        budget.Cut(fresh_server=30, fresh_after=10),
    ],
)
def test_the_meters_estimate_after_a_cut_is_the_one_rewriting_gives(cut: budget.Cut) -> None:
    meter = budget.Meter()
    assert meter.after_cut(budget.Cut(counted=500), 600) == 600  # nothing reported: the local count
    meter.sent(Usage(2000, 10), 1000, reported=True)
    meter.appended(100)
    meter.appended(40, server=30)  # a reply, by the server's count
    local = 1140 - (cut.counted - cut.counted_after) - (cut.fresh - cut.fresh_after)
    local -= 40 - cut.fresh_after if cut.fresh_server else 0
    said = meter.after_cut(cut, local)
    meter.rewritten(cut, local)
    assert said == meter.estimate(local)


def test_text_appended_since_the_report_is_cut_exactly() -> None:
    """Issue 20, at the very edge of a window: eliding a tool's output the server has not counted
    yet took its saving off the report as a bound (at the smallest ratio seen), though the meter
    held that output apart by its own count. Cut from what the meter holds apart, the estimate is
    the report and what is left of the text appended since, exactly as if it had been shorter."""
    meter = budget.Meter()
    meter.sent(Usage(2000, 10), 1000, reported=True)
    meter.appended(40, server=30)  # the reply, by the server's count
    meter.appended(400)  # the tool's output: not counted by the server yet
    shorter = budget.Meter()
    shorter.sent(Usage(2000, 10), 1000, reported=True)
    shorter.appended(40, server=30)
    shorter.appended(25)  # as if the output had been its note from the start
    meter.rewritten(budget.Cut(fresh=400, fresh_after=25), 1065)
    assert meter.estimate(1065) == shorter.estimate(1065) == 2000 + 30 + shorter.scale(25)
    meter.rewritten(budget.Cut(fresh_server=30, fresh_after=12), 1037)  # the reply cut to its directive
    assert meter.estimate(1037) == 2000 + meter.scale(25 + 12)


def test_unknown_models_are_counted_with_a_margin() -> None:
    exact = budget.counter("gpt-4")("hello world, this is a test of the margin")
    assert budget.counter("some-local-model")("hello world, this is a test of the margin") == -(-exact * 5 // 4)


def test_a_huge_run_of_spaces_is_counted_without_raising() -> None:
    # tiktoken's own pattern gives up on this ("Max stack size exceeded for backtracking")
    text = " " * 1_000_000 + "hello"
    assert 0 < budget.counter("gpt-4")(text) < 20_000


@pytest.mark.parametrize("chat", [True, False])
def test_old_steps_fold_into_one_pair_whose_cost_is_bounded_and_the_floor_says_so(chat: bool) -> None:
    """An elided step still costs its two messages; folded, the oldest steps cost one pair that
    lists their calls (the latest 600 characters of them). The floor is what eliding as far as
    it goes leaves, and the opening and the latest step stay."""
    count = budget.counter("gpt-4o")
    opening = (
        (Message("system", "rules " * 50), Message("user", "task")) if chat else "rules " * 50 + "\nQUESTION: task\n"
    )
    costs = []
    for steps in (150, 400):
        history = History(opening, count)
        for step in range(1, steps + 1):
            history.add_reply(f"THOUGHT: look again {step}\nACTION: look[{step}]", step, f"ACTION: look[{step}]")
            history.add_observation(f"result {step} " * 5, step)
        floor = history.floor(steps)
        assert history.elide(0, keep_from=steps)
        assert history.tokens == floor
        assert history.elided == tuple(range(1, steps))
        prompt = history.prompt()
        text = prompt if isinstance(prompt, str) else "\n".join(m.content for m in prompt)
        assert (
            f"look[{steps - 1}]" in text and f"result {steps} " in text
        )  # the latest call listed, the latest step whole
        assert "rules " * 50 in text
        if chat:
            assert isinstance(prompt, tuple) and [m.role for m in prompt[:4]] == ["system", "user", "assistant", "user"]
        costs.append(history.tokens)
    assert costs[1] - costs[0] < 20, costs  # 250 more steps folded cost next to nothing more


@pytest.mark.parametrize("chat", [True, False])
def test_a_note_costs_what_note_cost_says_without_a_messages_framing(chat: bool) -> None:
    """Issue 20: in a chat the forced call's note joins the last user message, yet its cost was
    planned with a message's framing: 3 tokens, which at a 300-token window refused a forced call
    that fitted. `note_cost` bounds what `add_note` costs, by less than a message's framing (a token
    where the texts meet, one of rounding where a length sets the count)."""
    notes = [
        "You have reached the limit (the context window of 300 tokens). Give your final answer now.",
        "Stop.",
        "lorem ipsum dolor " * 20,
    ]
    for note in notes:
        history = _steps(chat)
        said = history.note_cost(note)
        cost = history.add_note(note)
        assert cost <= said < cost + budget.MESSAGE_OVERHEAD, note


def test_the_loops_own_words_are_scaled_at_the_ratio_seen_without_the_margin() -> None:
    """The forced call's note is the loop's prose, of the instructions' kind, which the server
    has counted: it is planned at the ratio seen; new text (a tool's output) gets the margin."""
    meter = budget.Meter()
    assert meter.scale_ours(100) == meter.scale(100) == 100  # nothing reported: the local count
    meter.sent(Usage(2000, 10), 1000, reported=True)
    assert meter.scale_ours(100) == 200 < 220 <= meter.scale(100)


# --- the history and its token account are one object ---------------------------------------------
# The oracle counts the prompt whole, from what would be sent (`History.prompt()`), with a counter
# that is additive (a token a character), and a server that counts `ratio` times as many tokens:
# after every change the history's own count is that whole count, and once the server has reported,
# the estimate of the next request is never below what the server would count, nor above it by more
# than the meter's margin (a history that forgot to tell its meter of an elision would be).

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("reply"), st.text("ab", min_size=1, max_size=60), st.booleans()),
        st.tuples(st.just("observation"), st.text("xy \n", min_size=1, max_size=300), st.booleans()),
        st.tuples(st.just("note"), st.text("nz ", min_size=1, max_size=40), st.booleans()),
        st.tuples(st.just("elide"), st.integers(0, 100), st.booleans()),
        st.tuples(st.just("report"), st.integers(0, 30), st.booleans()),
    ),
    max_size=40,
)


def _whole(history: History) -> int:
    """The prompt's local count, counted whole (chat framing as OpenAI's cookbook counts it)."""
    prompt = history.prompt()
    if isinstance(prompt, str):
        return len(prompt)
    return sum(len(m.content) + budget.MESSAGE_OVERHEAD for m in prompt) + budget.REPLY_PRIMING


@settings(max_examples=300, deadline=None)
@given(chat=st.booleans(), ratio=st.sampled_from([1, 2, 3]), ops=_OPS)
# Found by fresh draws after the meter learned to cut text appended since a report exactly: one
# elision folded step after step, and each fold's new pair was taken as appended since when the
# next fold replaced it, though its cost had gone with the base's.
@example(
    chat=False,
    ratio=1,
    ops=[("reply", "a" * (23 if step == 19 else 1), False) for step in range(1, 22)]
    + [("report", 0, False), ("elide", 0, False)],
)
def test_every_change_to_the_history_keeps_its_count_and_estimate_right(
    chat: bool, ratio: int, ops: list[tuple[str, object, bool]]
) -> None:
    opening = (Message("system", "rules " * 20), Message("user", "task")) if chat else "rules " * 20 + "\nQ: task\n"
    history = History(opening, len)
    step, reported = 0, False
    for op, value, flag in ops:
        if op == "reply":
            step += 1
            text = str(value)  # letters only: the piece is the text, framed
            local = len(text) + budget.MESSAGE_OVERHEAD if chat else len(f"THOUGHT:{text}\n")
            server = ratio * local if flag and reported else None  # the server's count, as a reply's usage gives it
            assert history.add_reply(text, step, "ACTION: a[b]", server=server) == local
        elif op == "observation" and step:
            history.add_observation(str(value), step)
        elif op == "note" and step:
            history.add_note(str(value))
        elif op == "elide" and step:
            history.elide(history.tokens * int(str(value)) // 100, keep_from=step if flag else step + 1)
        elif op == "report":
            history.meter.sent(Usage(ratio * _whole(history), int(str(value))), history.tokens, reported=True)
            reported = True
        assert history.tokens == _whole(history), op
        if reported:  # on the high side, by no more than the margin
            assert (
                ratio * _whole(history)
                <= history.meter.estimate(history.tokens)
                <= math.ceil(budget.Meter.SAFETY * ratio * _whole(history))
            ), op
        else:
            assert history.meter.estimate(history.tokens) == _whole(history), op


@pytest.mark.parametrize("chat", [True, False])
def test_an_elision_brings_the_estimate_down_with_the_history(chat: bool) -> None:
    opening = (Message("system", "rules"), Message("user", "task")) if chat else "rules\nQ: task\n"
    history = History(opening, len)
    for step in range(1, 4):
        history.add_reply("think", step, "ACTION: a[b]")
        history.add_observation("x" * 1000, step)
    history.meter.sent(Usage(2 * _whole(history), 5), history.tokens, reported=True)
    before = history.meter.estimate(history.tokens)
    assert history.elide(0, keep_from=4)
    assert history.meter.estimate(history.tokens) < before // 3
    assert (
        2 * _whole(history)
        <= history.meter.estimate(history.tokens)
        <= math.ceil(budget.Meter.SAFETY * 2 * _whole(history))
    )
