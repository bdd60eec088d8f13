"""RLEF's -0.2 for invalid responses at any turn of an episode (seed 004, the RLEF slides).

The slides define one reward per turn, r(s_t, a_t): +1 when all tests pass,
-1 when any fails, -0.2 for invalid code; the return is their sum
(A_t = -V(c_t) + sum_i R(s_i, a_i), no discounting), and the -0.2 answers the
failure mode "invalid code in non-final responses".  So, by hand, with
r_t = -0.2 for an invalid response plus, at the last turn, +1 or -1 for the
final code on the private tests (code that does not compile cannot pass):

| turns (public runs)          | r_1  | r_2 | r_3  | return |
| ---------------------------- | ---- | --- | ---- | ------ |
| wrong, raises, wrong         | 0    | 0   | -1   | -1     |
| broken, wrong, wrong         | -0.2 | 0   | -1   | -1.2   |
| wrong, wrong, broken         | 0    | 0   | -1.2 | -1.2   |
| no code, broken, no code     | -0.2 | -0.2| -1.2 | -1.6   |
| broken, right                | -0.2 | +1  |      | +0.8   |

An invalid response therefore never earns more than the all-valid wrong episode.
"""

from __future__ import annotations

import json
import re

import pytest

from rewardkit.benchmarks.problem import Problem
from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite
from rewardkit.trainers.generators import Prompt, ReplayGenerator
from rewardkit.trainers.rlef import Episode, RLEFEnvironment, repair

NUMBERS = (7919, 104729, 1299709, 15485863)
STDIO = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{2 * n}\n"} for n in NUMBERS]}
LIMITS = Limits(time_s=2.0, memory_mb=256)

RIGHT = "```python\nprint(int(input()) * 2)\n```"
WRONG = "```python\nprint(int(input()) + 1)\n```"
RAISES = "```python\nraise ValueError('no')\n```"
BROKEN = "```python\ndef double(:\n```"  # a SyntaxError: compile_error
SILENT = ""  # no code at all

EPISODES = {  # answers turn after turn, the per-turn rewards and the return, computed by hand
    "valid_wrong": ([WRONG, RAISES, WRONG], [0.0, 0.0, -1.0], -1.0),
    "invalid_early": ([BROKEN, WRONG, WRONG], [-0.2, 0.0, -1.0], -1.2),
    "invalid_final": ([WRONG, WRONG, BROKEN], [0.0, 0.0, -1.2], -1.2),
    "never_valid": ([SILENT, BROKEN, SILENT], [-0.2, -0.2, -1.2], -1.6),
    "invalid_then_fixed": ([BROKEN, RIGHT], [-0.2, 1.0], 0.8),
}


def key(prompt: Prompt) -> str:
    found = re.search(r"\[(\w+)\]", prompt if isinstance(prompt, str) else prompt[1]["content"])
    assert found is not None
    return found.group(1)


@pytest.fixture(scope="module")
def episodes(sandbox: Sandbox) -> dict[str, Episode]:
    generator = ReplayGenerator({name: answers for name, (answers, _, _) in EPISODES.items()}, key=key)
    problems = [Problem(name, f"[{name}] Read n and print 2*n.", TestSuite.from_dict(STDIO))
                for name in EPISODES]
    return {e.problem_id: e for e in repair(problems, generator, sandbox=sandbox, limits=LIMITS)}


@pytest.mark.parametrize("name", list(EPISODES))
def test_each_turn_earns_the_paper_s_reward(episodes: dict[str, Episode], name: str) -> None:
    _, per_turn, total = EPISODES[name]
    episode = episodes[name]
    assert episode.reward == pytest.approx(total)
    assert [turn.reward for turn in episode.turns] == pytest.approx(per_turn)
    assert json.loads(json.dumps(episode.to_dict()))["turns"][0]["reward"] == pytest.approx(per_turn[0])


def test_an_invalid_response_never_earns_more_than_a_wrong_one(episodes: dict[str, Episode]) -> None:
    wrong = episodes["valid_wrong"].reward
    for name in ("invalid_early", "invalid_final", "never_valid"):
        assert episodes[name].reward < wrong, name
    assert episodes["invalid_then_fixed"].reward < 1.0  # a fix after an invalid turn still pays for it
    broken = episodes["invalid_final"]
    assert broken.turns[-1].result is not None and broken.turns[-1].result.status == Status.COMPILE_ERROR


def test_turn_rewards_by_hand() -> None:
    from rewardkit.trainers.rlef import INVALID, turn_rewards

    assert turn_rewards([True, True, True], passed=False) == [0.0, 0.0, -1.0]
    assert turn_rewards([False, True], passed=True) == pytest.approx([INVALID, 1.0])
    assert turn_rewards([True, False], passed=False) == pytest.approx([0.0, INVALID - 1.0])
    assert INVALID == -0.2
    with pytest.raises(ValueError, match="turn"):
        turn_rewards([], passed=False)


ATTEMPTS = {  # tool calls in TRL's environment, and the return get_reward gives
    "valid_wrong": ([WRONG, RAISES], -1.0),
    "invalid_early": ([BROKEN, WRONG], -1.2),
    "invalid_final": ([WRONG, BROKEN], -1.2),
    "no_code": ([SILENT], -1.2),
    "nothing_tested": ([], -1.2),  # the one response had no tested code: invalid, and nothing passes
    "invalid_then_fixed": ([BROKEN, RIGHT], 0.8),
}


@pytest.mark.parametrize(("calls", "expected"), list(ATTEMPTS.values()), ids=list(ATTEMPTS))
def test_environment_rewards_the_whole_episode(sandbox: Sandbox, calls: list[str], expected: float) -> None:
    env = RLEFEnvironment(sandbox, limits=LIMITS)
    env.reset(tests=json.dumps(STDIO))
    for call in calls:
        env.run_public_tests(call)
    assert env.get_reward() == pytest.approx(expected)
