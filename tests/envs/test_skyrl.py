"""The skyrl-gym adapter driven through skyrl-gym's own ``make``/``init``/``step``, its rewards
compared with CodeEnv's on the same row and answer."""

from __future__ import annotations

import json
import pickle
import sys
from pathlib import Path
from typing import Any

import pytest

skyrl_gym = pytest.importorskip("skyrl_gym")

from omegaconf import DictConfig  # noqa: E402  (a dependency of skyrl-gym)

from rewardkit.envs import CodeEnv  # noqa: E402
from rewardkit.envs.skyrl import ENV_ID, CodeTextEnv, parse_action, register  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "formats"))
from competitive_rows import CALL_RIGHT, CALL_WRONG, ROWS, STDIO_RIGHT, STDIO_WRONG  # noqa: E402

ROW = {"tests": {"mode": "stdio", "cases": [{"input": "2\n", "output": "4\n"},
                                            {"input": "5\n", "output": "10\n"}]}}
# SkyRL's LiveCodeBench rows keep the tests in reward_spec.ground_truth (rLLM's test list)
LCB = {"data_source": "livecodebench", "reward_spec": {
    "method": "rule", "ground_truth": ROWS["rllm ground_truth functional"][0]["ground_truth"]}}
PROMPT = [{"role": "user", "content": "Read n and print twice n."}]


def _code_env_reward(row: dict[str, Any], answer: str) -> float:
    """CodeEnv's reward for submitting ``answer`` (a fenced reply) on ``row``."""
    env = CodeEnv(preset="pass_rate")
    env.reset(**row)
    env.submit(answer)
    return env.get_reward()


def _episode(env: CodeTextEnv, replies: list[str]) -> list[dict[str, Any]]:
    env.init(PROMPT)
    return [dict(env.step(reply)) for reply in replies]


def test_right_and_wrong_episodes_score_as_code_env() -> None:
    extras = {**ROW, "max_turns": 3}
    config = DictConfig({"preset": "pass_rate"})  # what SkyRL's generator passes
    right = _episode(skyrl_gym.make(ENV_ID, env_config=config, extras=extras),
                     [f"<tool><run_tests>{STDIO_WRONG}</run_tests></tool>",
                      f"<solution>{STDIO_RIGHT}</solution>"])
    assert right[0]["done"] is False and right[0]["reward"] == 0.0
    assert right[0]["observations"][0]["role"] == "user" and right[0]["observations"][0]["content"]
    assert right[0]["metadata"]["tool_name"] == "run_tests"
    assert right[1]["done"] is True and right[1]["reward"] == _code_env_reward(ROW, STDIO_RIGHT) == 1.0
    wrong = _episode(skyrl_gym.make(ENV_ID, env_config={"preset": "pass_rate"}, extras=extras),
                     [f"<solution>{STDIO_WRONG}</solution>"])
    assert wrong[0]["done"] is True and wrong[0]["reward"] == _code_env_reward(ROW, STDIO_WRONG) < 1.0


def test_skyrl_lcb_row_with_tool_call_json_and_pickled_mid_episode() -> None:
    env = skyrl_gym.make(ENV_ID, env_config={"preset": "pass_rate"}, extras={**LCB, "max_turns": 3})
    env.init(PROMPT)
    call = json.dumps({"name": "run_tests", "arguments": {"code": CALL_WRONG}})
    first = env.step(f"Let me test. <tool_call>{call}</tool_call>")
    assert first["done"] is False and first["metadata"]["tool_name"] == "run_tests"
    copy = pickle.loads(pickle.dumps(env))
    assert copy.step(f"<solution>{CALL_RIGHT}</solution>")["reward"] == 1.0
    assert env.step(f"<solution>{CALL_WRONG}</solution>")["reward"] == _code_env_reward(
        {"ground_truth": LCB["reward_spec"]["ground_truth"]}, CALL_WRONG)


def test_reply_without_a_call_is_told_the_syntax_and_turns_run_out() -> None:
    env = skyrl_gym.make(ENV_ID, extras={**ROW, "max_turns": 2})
    assert env.init(PROMPT) == (PROMPT, {})  # the prompt is the row's: nothing added
    first = env.step("I am not sure.")
    assert first["done"] is False and "<solution>" in first["observations"][0]["content"]
    last = env.step("<tool><nope>x</nope></tool>")
    assert last["done"] is True and last["observations"] == [] and env.get_metrics()["turns"] == 2


def test_registered_options_instructions_and_spec_pickle() -> None:
    register("rewardkit-code-binary", preset="binary", instructions=True)
    spec = pickle.loads(pickle.dumps(skyrl_gym.spec("rewardkit-code-binary")))
    env = skyrl_gym.make(spec, extras=ROW)
    prompt, _ = env.init(PROMPT)
    assert prompt[0]["content"].startswith(PROMPT[0]["content"]) and "run_tests(code)" in prompt[0]["content"]
    assert env.step(f"<solution>{STDIO_RIGHT}</solution>")["reward"] == 1.0


def test_parse_action_conventions() -> None:
    parameters = {"run_input": ["code", "stdin"], "run_tests": ["code"]}
    assert parse_action("<tool><run_input>\n<code>print(1)</code>\n<stdin>\n2\n</stdin></run_input></tool>",
                        parameters) == ("run_input", {"code": "print(1)", "stdin": "2"})
    assert parse_action("<tool><run_tests>\n```python\nx = 1\n```\n</run_tests></tool>", parameters) == (
        "run_tests", {"code": "```python\nx = 1\n```"})
    encoded = json.dumps({"name": "run_input", "arguments": json.dumps({"code": "p", "stdin": "1"})})
    assert parse_action(f"<tool_call>{encoded}</tool_call>", parameters) == (
        "run_input", {"code": "p", "stdin": "1"})
    for bad in ("<tool_call>{not json}</tool_call>", '<tool_call>{"name": 1}</tool_call>', "plain text"):
        with pytest.raises(ValueError):
            parse_action(bad, parameters)
