"""RLEF multi-turn repair against the real sandbox: splits, feedback, episodes, and TRL's environment API.

The problems double a number; their cases use large, distinctive numbers so
that a private test's input or output showing up in any prompt or feedback
text would be caught by a substring search.
"""

from __future__ import annotations

import os

# Never reach a hub: set before any Hugging Face module reads these at import.
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1",
                  TRL_EXPERIMENTAL_SILENCE="1")

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rewardkit.benchmarks.problem import Problem
from rewardkit.sandbox import ExecutionResult, Limits, Sandbox, Status, SuiteError, TestSuite
from rewardkit.trainers.generators import Prompt, ReplayGenerator
from rewardkit.trainers.rlef import (
    HEADLINES,
    NO_CODE,
    PASSED,
    Episode,
    RLEFEnvironment,
    environment_factory,
    feedback_text,
    make_task,
    repair,
    split_tests,
)

NUMBERS = (7919, 104729, 1299709, 15485863)
STDIO = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{2 * n}\n"} for n in NUMBERS]}
CALL = {"mode": "call", "entry_point": "double", "cases": [{"args": [n], "expected": 2 * n} for n in NUMBERS]}
SCRIPT = {"mode": "script", "entry_point": "double", "check": "def check(f):\n    assert f(1) == 2\n"}
LIMITS = Limits(time_s=1.0, memory_mb=256)

RIGHT = "```python\nprint(int(input()) * 2)\n```"
WRONG = "```python\nprint(int(input()) + 1)\n```"
RAISES = "```python\nn = int(input())\nraise ValueError('no doubling today')\n```"
LOOPS = "```python\nwhile True:\n    pass\n```"
HOGS = "```python\nblocks = []\nwhile True:\n    blocks.append(' ' * 10**7)\n```"
BROKEN = "```python\ndef double(:\n```"


def code(text: str) -> str:
    """The body of a one-block answer."""
    return text.split("\n", 1)[1].rsplit("\n```", 1)[0]


def private_strings(public: TestSuite) -> list[str]:
    """Inputs and outputs of the cases that ``public`` does not hold."""
    shown = {case.input for case in public.cases}
    return [text.strip() for case in STDIO["cases"] if case["input"] not in shown
            for text in (case["input"], case["output"])]


# -- split_tests ------------------------------------------------------------------------------------
def test_split_tests_draws_disjoint_ordered_parts() -> None:
    public, private = split_tests(STDIO, public=2, seed=3)
    assert (len(public), len(private)) == (2, 2)
    everything = TestSuite.from_dict(STDIO).cases
    assert sorted(public.cases + private.cases, key=everything.index) == list(everything)
    for part in (public, private):
        assert list(part.cases) == sorted(part.cases, key=everything.index)  # original order kept
    assert split_tests(STDIO, public=2, seed=3) == (public, private)  # deterministic
    assert len({split_tests(STDIO, 2, seed)[0].cases for seed in range(12)}) > 1  # the seed matters


def test_split_tests_fraction_and_call_suites() -> None:
    assert len(split_tests(STDIO, public=0.5)[0]) == 2
    assert len(split_tests(STDIO, public=0.01)[0]) == 1  # at least one public test
    public, private = split_tests(json.dumps(CALL), public=1)
    assert (public.mode, public.entry_point, len(public), len(private)) == ("call", "double", 1, 3)


REFUSALS = {
    "script": (SCRIPT, 1, SuiteError),
    "one-case": ({"mode": "stdio", "cases": STDIO["cases"][:1]}, 1, SuiteError),
    "all": (STDIO, 4, ValueError),
    "zero": (STDIO, 0, ValueError),
    "whole": (STDIO, 1.0, ValueError),
    "bool": (STDIO, True, ValueError),
}


@pytest.mark.parametrize(("suite", "public", "error"), list(REFUSALS.values()), ids=list(REFUSALS))
def test_split_tests_refuses(suite: dict[str, Any], public: float, error: type[Exception]) -> None:
    with pytest.raises(error):
        split_tests(suite, public)


# -- feedback -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def public_suite() -> TestSuite:
    return split_tests(STDIO, public=1)[0]


def run(sandbox: Sandbox, answer: str, suite: TestSuite | dict[str, Any]) -> ExecutionResult:
    return sandbox.run(code(answer), suite, limits=LIMITS)


FAILURES = {  # answer, status, what the feedback quotes
    "wrong": (WRONG, Status.WRONG_ANSWER,
              r"Wrong answer on test 1\.\nInput:\n\d+\s+Expected:\n\d+\s+Got:\n\d+"),
    "raises": (RAISES, Status.RUNTIME_ERROR, r'File "solution\.py", line 2.*ValueError: no doubling today'),
    "loops": (LOOPS, Status.TIMEOUT, r"Time limit exceeded on test 1 \(limit 1 s\)"),
    "hogs": (HOGS, Status.MEMORY_EXCEEDED, r"Memory limit exceeded on test 1 \(limit 256 MB\)"),
    "broken": (BROKEN, Status.COMPILE_ERROR, r"SyntaxError"),
}


@pytest.mark.parametrize(("answer", "status", "detail"), list(FAILURES.values()), ids=list(FAILURES))
def test_feedback_for_each_failure(sandbox: Sandbox, public_suite: TestSuite, answer: str, status: Status,
                                   detail: str) -> None:
    result = run(sandbox, answer, public_suite)
    assert result.status == status
    text = feedback_text(result)
    assert text.startswith(HEADLINES[status] + "\n")
    assert re.search(detail, text, re.DOTALL), text
    assert "harness" not in text and "/" not in text.split("\n", 1)[1]  # no sandbox frames or paths
    assert len(text) < 600
    assert feedback_text(run(sandbox, answer, public_suite)) == text  # deterministic


def test_feedback_for_call_suites_passing_and_no_code(sandbox: Sandbox) -> None:
    wrong = sandbox.run("def double(n):\n    return n", CALL, limits=LIMITS)
    assert feedback_text(wrong) == (f"{HEADLINES[Status.WRONG_ANSWER]}\n"
                                    "Wrong answer on test 1: double(7919) returned 7919, expected 15838.")
    assert feedback_text(run(sandbox, RIGHT, STDIO)) == PASSED
    assert feedback_text(None) == NO_CODE


# -- repair episodes ----------------------------------------------------------------------------------
ANSWERS = {  # what each problem's replayed model answers, turn after turn (the last answer repeats)
    "fixed": [WRONG, RIGHT],
    "stuck": [WRONG, RAISES, WRONG],
    "cheat": [],  # filled in from the public test: prints the one expected output it saw
    "silent": [""],
    "prose": ["I would double the number."],
}


def problem_key(prompt: Prompt) -> str:
    """The problem id the statement carries, e.g. ``[fixed]``."""
    found = re.search(r"\[(\w+)\]", prompt if isinstance(prompt, str) else prompt[1]["content"])
    assert found is not None
    return found.group(1)


def problem(name: str) -> Problem:
    return Problem(name, f"[{name}] Read n and print 2*n.", TestSuite.from_dict(STDIO))


@dataclass
class Run:
    episodes: dict[str, Episode]
    generator: ReplayGenerator
    public: TestSuite


@pytest.fixture(scope="module")
def episodes(sandbox: Sandbox) -> Run:
    """One batched repair run over every problem of :data:`ANSWERS`."""
    public = make_task(problem("cheat")).public
    shown = public.cases[0]
    answers = ANSWERS | {"cheat": [f"```python\nprint({str(shown.output).strip()})\n```"]}
    generator = ReplayGenerator(answers, key=problem_key)
    done = repair([problem(name) for name in ANSWERS], generator, sandbox=sandbox, limits=LIMITS)
    return Run({episode.problem_id: episode for episode in done}, generator, public)


def test_fixed_on_the_second_turn_after_feedback(episodes: Run) -> None:
    episode = episodes.episodes["fixed"]
    first, second = episode.turns
    assert first.result is not None and first.result.status == Status.WRONG_ANSWER
    assert first.feedback is not None and feedback_text(first.result) in first.feedback
    assert second.messages[:-2] == first.messages
    assert second.messages[-2:] == [{"role": "assistant", "content": WRONG},
                                    {"role": "user", "content": first.feedback}]
    assert second.result is not None and second.result.passed and second.feedback is None
    assert (episode.final_code, episode.solved, episode.reward) == (code(RIGHT), True, 1.0)


def test_never_fixed_stops_at_the_turn_limit(episodes: Run) -> None:
    episode = episodes.episodes["stuck"]
    assert [t.result.status for t in episode.turns if t.result] == [
        Status.WRONG_ANSWER, Status.RUNTIME_ERROR, Status.WRONG_ANSWER]
    assert "ValueError: no doubling today" in str(episode.turns[2].messages[-1]["content"])
    assert [t.feedback is None for t in episode.turns] == [False, False, True]
    assert len(episode.turns[2].messages) == len(episode.turns[0].messages) + 4  # a growing chat
    assert (episode.solved, episode.reward) == (False, -1.0)


def test_passing_public_but_failing_private(episodes: Run) -> None:
    episode = episodes.episodes["cheat"]
    (turn,) = episode.turns  # the public test passed, so the episode stopped
    assert turn.result is not None and turn.result.passed and turn.feedback is None
    assert episode.private is not None and episode.private.status == Status.WRONG_ANSWER
    assert episode.private.tests_total == len(NUMBERS) - 1
    assert episode.reward == -1.0


def test_no_code_or_no_parse_is_invalid(episodes: Run) -> None:
    silent, prose = episodes.episodes["silent"], episodes.episodes["prose"]
    assert [t.code for t in silent.turns] == [None] * 3
    assert all(t.result is None for t in silent.turns)
    assert silent.turns[1].messages[-1]["content"].startswith(NO_CODE)
    assert (silent.private, silent.reward) == (None, pytest.approx(3 * -0.2 - 1))  # -0.2 a turn, then -1
    assert prose.private is not None and prose.private.status == Status.COMPILE_ERROR
    assert prose.reward == pytest.approx(3 * -0.2 - 1)


def test_private_tests_never_reach_the_model(episodes: Run) -> None:
    texts = [json.dumps(prompt) for prompt in episodes.generator.prompts]
    texts += [t.feedback or "" for e in episodes.episodes.values() for t in e.turns]
    assert len(episodes.generator.prompts) == 2 + 3 + 1 + 3 + 3
    for secret in private_strings(episodes.public):
        assert not any(secret in text for text in texts), secret
    shown = str(episodes.public.cases[0].output).strip()
    assert any(shown in text for text in texts)  # while the public test does


def test_episode_records_are_plain_data(episodes: Run) -> None:
    data = json.loads(json.dumps(episodes.episodes["fixed"].to_dict()))
    assert data["reward"] == 1.0 and data["solved"] is True
    assert data["turns"][0]["result"]["status"] == "wrong_answer"
    assert data["private"]["tests_total"] == len(NUMBERS) - 1


def test_prompts_and_arguments() -> None:
    base, burner = make_task(problem("a")), make_task(problem("a"), prompt="afterburner", system=None)
    assert [m["role"] for m in base.messages] == ["system", "user"]
    assert "skilled competitive programmer" in base.messages[1]["content"]
    assert [m["role"] for m in burner.messages] == ["user"]
    assert "## Original solution\n(empty)" in burner.messages[0]["content"]
    with pytest.raises(ValueError, match="unknown prompt"):
        make_task(problem("a"), prompt="fancy")
    with pytest.raises(ValueError, match="turns"):
        repair([problem("a")], ReplayGenerator([RIGHT]), turns=0)


# -- the TRL environment, method by method ------------------------------------------------------------
@pytest.fixture
def environment(sandbox: Sandbox) -> RLEFEnvironment:
    env = environment_factory(sandbox, limits=LIMITS)()
    note = env.reset(prompt="Double n.", tests=json.dumps(STDIO))
    assert "run_public_tests" in note and "3 times" in note
    return env


def test_environment_feedback_then_fix(environment: RLEFEnvironment) -> None:
    assert environment.public_tests is not None
    wrong = environment.run_public_tests(code(WRONG))
    assert wrong == feedback_text(environment.attempts[0][1])
    assert wrong.startswith(HEADLINES[Status.WRONG_ANSWER])
    assert environment.run_public_tests(RIGHT) == PASSED  # a fenced answer is unwrapped
    assert environment.run_public_tests(code(WRONG)).startswith(PASSED)  # the passing code stays final
    assert len(environment.attempts) == 2
    assert environment.get_reward() == 1.0
    assert environment.private is not None and environment.private.tests_total == len(NUMBERS) - 1
    for secret in private_strings(environment.public_tests):
        assert secret not in wrong


def test_environment_turn_limit_and_invalid(environment: RLEFEnvironment) -> None:
    feedback = [environment.run_public_tests(answer) for answer in (WRONG, RAISES, LOOPS, RIGHT)]
    assert feedback[1].startswith(HEADLINES[Status.RUNTIME_ERROR])
    assert feedback[2].startswith(HEADLINES[Status.TIMEOUT])
    assert feedback[3].startswith("No test runs left")  # the fourth call runs nothing
    assert environment.get_reward() == -1.0  # the last tested code (the loop) is judged
    environment.reset(tests=STDIO)
    assert environment.attempts == [] and environment.get_reward() == pytest.approx(-1.2)  # nothing tested
    assert environment.run_public_tests("") == NO_CODE
    assert environment.get_reward() == pytest.approx(-1.2)  # one invalid attempt, and no pass


def test_environment_needs_reset(sandbox: Sandbox) -> None:
    env = RLEFEnvironment(sandbox)
    assert "reset" in env.run_public_tests(code(RIGHT))  # a tool says so, never raises
    with pytest.raises(RuntimeError, match="reset"):
        env.get_reward()


# -- a real GRPOTrainer with environment_factory -------------------------------------------------------
def tool_call(answer: str) -> str:
    """A call of the environment's tool, as the tiny tokenizer's chat template writes one."""
    payload = {"name": "run_public_tests", "arguments": {"code": code(answer)}}
    return f"<tool_call>{json.dumps(payload)}</tool_call>"


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_grpo_trainer_runs_rlef_environment(sandbox: Sandbox, tmp_path: Path) -> None:
    """One GRPO step: tool calls run public tests, tool messages carry our feedback, get_reward is the reward.

    The tiny model is built like :mod:`tiny_lm`'s (its tokenizer's chat
    template renders tools and tool calls) and fitted to answer with a call
    testing right code, one testing wrong code, or no call; each whole call is
    one token so that a few seconds of fitting suffice.
    """
    from datasets import Dataset
    from tiny_lm import PROBLEMS, tool_caller, tool_grpo_config
    from trl import GRPOTrainer

    rows = [{"prompt": [{"role": "system", "content": "Solve it."},
                        {"role": "user", "content": PROBLEMS[0]["prompt"]}],
             "tests": json.dumps(PROBLEMS[0]["tests"])}] * 4
    probe = RLEFEnvironment(sandbox)
    note = probe.reset(**rows[0])
    messages = [rows[0]["prompt"][0], {"role": "user", "content": PROBLEMS[0]["prompt"] + note}]
    calls = [tool_call(RIGHT), tool_call(WRONG)]
    _, tokenizer, model = tool_caller(messages, [probe.run_public_tests], calls)

    seen: list[tuple[list[Any], list[Any]]] = []

    def record(completions: list[Any], environments: list[Any], **_: Any) -> list[float]:
        seen.append((completions, environments))
        return [0.0] * len(completions)

    config = tool_grpo_config(tmp_path, max_steps=1, max_completion_length=512)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=config, reward_funcs=[record],
                          train_dataset=Dataset.from_list(rows),
                          environment_factory=environment_factory(sandbox, limits=LIMITS))
    trainer.train()

    ((completions, environments),) = seen
    assert all(isinstance(env, RLEFEnvironment) for env in environments)
    rewards = []
    for completion, env in zip(completions, environments, strict=True):
        tool_messages = [m["content"] for m in completion if m["role"] == "tool"]
        assert tool_messages[:len(env.attempts)] == [feedback_text(result) for _, result in env.attempts]
        assert len(env.attempts) <= 3
        passed = env.private is not None and env.private.passed
        rewards.append(-1.2 if not env.attempts else 1.0 if passed else -1.0)  # tested code is valid here
    assert max(len(env.attempts) for env in environments) > 1  # feedback, then another attempt
    assert len(set(rewards)) > 1  # a learning signal
    (log, _) = trainer.state.log_history
    assert log["tools/call_frequency"] > 0
    assert log["rewards/RLEFEnvironment/mean"] == pytest.approx(sum(rewards) / len(rewards))
