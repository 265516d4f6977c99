"""A temperature or a seed that is not one is refused where it is taken (attack3 findings 6 and 8):
llama.cpp reads the seed 0xFFFFFFFF (and -1, cast to it) as "random", so an episode with it would
not repeat; NaN, an infinity or a negative temperature are not temperatures."""

from __future__ import annotations

from pathlib import Path

import pytest

from react_text import Agent, OpenAIChat, ScriptedModel
from react_text.backends.local import LocalModel
from react_text.core.sampling import check_seed, check_temperature
from react_text.evaluation import Task, evaluate


@pytest.mark.parametrize("seed", [-1, 2**32 - 1, 2**32, 2**64])
def test_a_seed_outside_0_to_2_32_less_2_is_refused_by_run_evaluate_and_the_local_model(
    seed: int, tmp_path: Path
) -> None:
    agent = Agent(ScriptedModel(["FINAL: 1"]), tools=[])
    with pytest.raises(ValueError, match=r"from 0 to 4294967294"):
        agent.run("q", seed=seed)
    with pytest.raises(ValueError, match=r"from 0 to 4294967294"):
        evaluate([Task("a", "q", "1")], lambda t: ScriptedModel(["FINAL: 1"]), root=tmp_path, seed=seed)
    with pytest.raises(ValueError, match=r"from 0 to 4294967294"):
        LocalModel(tmp_path / "none.gguf", seed=seed)


def test_the_last_seed_of_a_group_is_checked_too(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"the group's last seed"):
        evaluate([Task("a", "q", "1")], lambda t: ScriptedModel(["FINAL: 1"]), root=tmp_path, seed=2**32 - 2, n=2)
    assert check_seed(0) == 0 and check_seed(2**32 - 2) == 2**32 - 2
    with pytest.raises(TypeError):
        check_seed(True)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, -0.5])
def test_a_temperature_that_is_not_one_is_refused_by_each_backend(value: float, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"temperature must be a finite number, 0 or more"):
        OpenAIChat("m", base_url="http://127.0.0.1:9", api_key="x", temperature=value)
    with pytest.raises(ValueError, match=r"temperature must be a finite number, 0 or more"):
        LocalModel(tmp_path / "none.gguf", temperature=value)
    assert check_temperature(0) == 0.0 and check_temperature(1.5) == 1.5
    with pytest.raises(TypeError):
        check_temperature("0.5")
