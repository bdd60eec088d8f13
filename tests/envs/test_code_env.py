"""CodeEnv against the real sandbox: rows of several formats, every tool, limits, pickling.

The problems double a number; their cases use large, distinctive numbers so
that a hidden test's input or output showing up in any tool output would be
caught by a substring search.
"""

from __future__ import annotations

import inspect
import json
import multiprocessing
import pickle
from functools import partial
from typing import Any

import pytest

from rewardkit.envs import CodeEnv
from rewardkit.envs.feedback import HEADLINES, NO_CODE, TRUNCATED
from rewardkit.sandbox import Sandbox, Status

NUMBERS = (7919, 104729, 1299709, 15485863)
VISIBLE, HIDDEN = NUMBERS[:1], NUMBERS[1:]  # the formats with their own split show the first case
RIGHT = "```python\nprint(int(input()) * 2)\n```"
WRONG = "print(int(input()) + 1)"
CRASH = "n = int(input())\nraise ValueError('no doubling today')"
BROKEN = "def double(:"

STDIO = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{2 * n}\n"} for n in NUMBERS]}
LCB_TESTS = [{"input": f"{n}\n", "output": f"{2 * n}\n", "testtype": "stdin"} for n in NUMBERS]
HUMANEVAL_CHECK = "def check(candidate):\n" + "".join(f"    assert candidate({n}) == {2 * n}\n"
                                                      for n in NUMBERS)
ROWS: dict[str, dict[str, Any]] = {
    "rewardkit": {"prompt": [{"role": "user", "content": "Double n."}], "tests": json.dumps(STDIO)},
    "apps": {"question": "Read n and print 2*n.",
             "input_output": json.dumps({"inputs": [f"{n}\n" for n in NUMBERS],
                                         "outputs": [f"{2 * n}\n" for n in NUMBERS]})},
    "livecodebench": {"question_content": "Read n and print 2*n.", "metadata": "{}",
                      "public_test_cases": json.dumps(LCB_TESTS[:1]),
                      "private_test_cases": json.dumps(LCB_TESTS[1:])},
    "code_contests": {"description": "Read n and print 2*n.",
                      "public_tests": {"input": ["7919\n"], "output": ["15838\n"]},
                      "private_tests": {"input": [f"{n}\n" for n in HIDDEN],
                                        "output": [f"{2 * n}\n" for n in HIDDEN]},
                      "generated_tests": {"input": [], "output": []}},
    "humaneval": {"task_id": "Double/0", "prompt": 'def double(n):\n    """Twice n."""\n',
                  "entry_point": "double", "canonical_solution": "    return 2 * n\n",
                  "test": HUMANEVAL_CHECK},
}
# What each format's right, wrong and crashing answers are (HumanEval continues its prompt).
ANSWERS = {name: (RIGHT, WRONG, CRASH) for name in ROWS} | {
    "humaneval": ("    return n * 2\n", "    return n + 1\n", "    raise ValueError('no doubling today')\n")}


def secrets(env: CodeEnv) -> list[str]:
    """The hidden cases' numbers (inputs and outputs) that no tool output may show."""
    assert env.problem is not None and env.problem.hidden is not None
    shown = {case.input for case in env.problem.visible.cases}
    return [str(v) for n in NUMBERS if f"{n}\n" not in shown for v in (n, 2 * n)]


@pytest.fixture
def make(sandbox: Sandbox) -> Any:
    """A factory of environments on the session's sandbox."""
    return partial(CodeEnv, preset="binary", sandbox=sandbox)


@pytest.mark.parametrize("name", list(ROWS))
def test_each_format_runs_scores_and_keeps_hidden_tests_hidden(make: Any, name: str) -> None:
    right, wrong, crash = ANSWERS[name]
    outputs, rewards = [], {}
    for answer in (right, wrong, crash, BROKEN):
        env = make(tools=["run_tests", "run_input", "submit"])
        observation = env.reset(**ROWS[name])
        assert observation == env.prompt
        assert (observation is None) == ("prompt" in ROWS[name])
        outputs += [env.run_tests(answer), env.run_input(answer, "5\n"), env.submit(answer)]
        rewards[answer] = env.get_reward()
        assert env.done and env.result is not None
    assert outputs[0].startswith("1/1 ") and outputs[0].endswith(" visible tests passed.")
    assert HEADLINES[Status.WRONG_ANSWER] in outputs[3] or name == "humaneval"
    assert HEADLINES[Status.RUNTIME_ERROR] in outputs[6] and "no doubling today" in outputs[6]
    assert HEADLINES[Status.COMPILE_ERROR] in outputs[9]
    assert rewards == {right: 1.0, wrong: 0.0, crash: 0.0, BROKEN: 0.0}
    if name != "humaneval":  # HumanEval's one check is visible whole: it has no hidden tests
        assert outputs[1] == "The program printed:\n10\n"
        env = make()
        env.reset(**ROWS[name])
        assert env.problem is not None and env.problem.hidden is not None
        assert len(env.problem.visible) + len(env.problem.hidden) == len(NUMBERS)
        for secret in secrets(env):
            assert not any(secret in text for text in outputs), (secret, outputs)


def test_hidden_tests_judge_not_visible_ones(make: Any) -> None:
    env = make(tools=["run_tests", "submit"])
    env.reset(**ROWS["livecodebench"])
    cheat = f"print({2 * VISIBLE[0]})"  # prints the one answer the model saw
    assert env.run_tests(cheat) == "1/1 visible tests passed."
    assert env.get_reward() == 0.0  # never submitted: the last tested code is judged
    assert env.result is not None and env.result.tests_total == len(HIDDEN)


def test_tools_offered_are_the_class_s_only_public_methods(make: Any) -> None:
    """What TRL takes for tools: the class's public functions other than reset and get_reward."""
    def trl_tools(env: CodeEnv) -> list[str]:
        return [n for n, _ in inspect.getmembers(type(env), inspect.isfunction)
                if n not in ("reset", "get_reward") and not n.startswith("_")]

    everything = make()
    assert trl_tools(everything) == sorted(everything.tools) == sorted(
        ["run_tests", "run_input", "measure", "quality", "submit"])
    some = make(tools=["submit", "run_tests"])
    assert trl_tools(some) == ["run_tests", "submit"] and some.tools == ["run_tests", "submit"]
    assert type(some) is type(make(tools=["submit", "run_tests"]))  # one class per tool set
    assert isinstance(some, CodeEnv) and type(some).__name__ == "CodeEnv"
    assert not hasattr(some, "measure")
    with pytest.raises(ValueError, match="tools"):
        make(tools=["rm_rf"])
    with pytest.raises(ValueError, match="cannot drop a sample"):
        make(fault="skip")  # get_reward must return a number


def test_turn_limit_then_the_episode_is_over(make: Any) -> None:
    env = make(max_turns=2)
    env.reset(**ROWS["rewardkit"])
    env.run_tests(WRONG)
    assert not env.done
    env.run_tests(WRONG)
    assert env.done and env.turns == 2
    assert env.run_tests(RIGHT).startswith("The episode is over: all 2 tool calls are used")
    assert env.submit(RIGHT).startswith("The episode is over") and env.submitted is None
    assert env.get_reward() == 0.0  # the last tested code (wrong) is the answer
    env.reset(**ROWS["rewardkit"])  # a new episode starts afresh
    assert (env.turns, env.done, env.attempts) == (0, False, [])


def test_bad_arguments_never_raise(make: Any) -> None:
    env = make(tools=["run_tests", "submit"], max_turns=10)
    assert "reset" in env.run_tests(RIGHT)
    env.reset(**ROWS["rewardkit"])
    assert env.run_tests() == "Error: run_tests takes code (text): missing a required argument: 'code'."
    assert env.run_tests(source=RIGHT).startswith("Error: run_tests takes code (text)")
    assert env.run_tests(code=42) == "Error: run_tests takes code (text); code must be text, got int."
    assert env.call("measure", code=RIGHT) == ("Error: there is no tool 'measure'; the tools are "
                                               "run_tests, submit.")
    assert env.call("run_tests", code=RIGHT, extra=1).startswith("Error: run_tests takes code")
    assert env.run_tests("") == NO_CODE
    assert env.call("run_tests", code=RIGHT) == "1/1 visible tests passed."
    assert env.turns == 6  # every call of an offered tool counts, bad ones too


def test_feedback_is_capped(make: Any) -> None:
    env = make(feedback_chars=60)
    env.reset(**ROWS["rewardkit"])
    text = env.run_tests(CRASH)
    assert len(text) == 60 and text.endswith(TRUNCATED)
    assert len(env.run_input("print('x' * 5000)", "")) == 60


def test_measure_quality_and_a_row_without_a_baseline(make: Any) -> None:
    env = make(max_turns=10)
    env.reset(**ROWS["rewardkit"], baseline_code="n = int(input())\nprint(sum(n for _ in range(2)))")
    measured = env.measure(RIGHT)
    assert measured.startswith("Passed the visible tests. CPU time ")
    assert "Reference solution: CPU time" in measured
    assert env.measure(WRONG).startswith("Not measured: the code fails the visible tests.")
    report = env.quality("import os\ndef f(x):\n    return eval(x)\n")
    assert report.startswith("Quality score 0.00") and "B307" in report
    env.reset(**ROWS["apps"])
    assert "Reference" not in env.measure(RIGHT)


def test_rlef_preset_scores_the_episode(make: Any) -> None:
    """Each invalid run before the final answer costs RLEF's -0.2 on top of the +1/-1."""
    env = make(preset="rlef", tools=["run_tests"])
    env.reset(**ROWS["rewardkit"])
    env.run_tests(BROKEN)
    env.run_tests(RIGHT)
    assert env.get_reward() == pytest.approx(0.8)
    env.reset(**ROWS["rewardkit"])
    assert env.get_reward() == pytest.approx(-1.2)  # nothing tested: one invalid response


def _episode(factory: Any) -> tuple[float, str]:
    env = factory()
    env.reset(**ROWS["livecodebench"])
    return env.get_reward() if env.run_tests(RIGHT) and env.submit(RIGHT) else 0.0, type(env).__name__


def test_pickled_factory_scores_alike_in_a_spawned_process(make: Any) -> None:
    factory = partial(CodeEnv, preset="pass_rate", tools=["run_tests", "submit"], workers=1)
    shipped = pickle.loads(pickle.dumps(factory))
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        remote = pool.apply(_episode, (shipped,))
    assert remote == _episode(factory) == (1.0, "CodeEnv")
    env = factory()
    env.reset(**ROWS["rewardkit"])
    env.run_tests(WRONG)
    copy = pickle.loads(pickle.dumps(env))  # mid-episode: options and state travel
    assert (type(copy), copy.tools, copy.turns, copy.attempts) == (type(env), env.tools, 1, env.attempts)
    assert copy.get_reward() == env.get_reward() == 0.0
