"""Which languages a test mode runs is decided once, by the mode, and every entry point agrees:
``Sandbox.run``, the reward engine and ``rewardkit score`` refuse and accept the same pairs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rewardkit import rewards
from rewardkit.cli import main
from rewardkit.rewards import Engine
from rewardkit.sandbox import Sandbox, Status, TestSuite
from rewardkit.sandbox.modes import MODES
from rewardkit.sandbox.runtime.languages import find_tool, home_rustc

RUST_SUITE = {"mode": "unittest", "check": "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n"
              "    fn adds() { assert_eq!(add(40, 2), 42); }\n}\n"}
RUST_RIGHT = "fn add(a: i64, b: i64) -> i64 { a + b }\n"
RUST_WRONG = "fn add(a: i64, b: i64) -> i64 { a - b }\n"
CALL_SUITE = {"mode": "call", "entry_point": "add", "cases": [{"args": [1, 2], "expected": 3}]}


@pytest.mark.parametrize("name", sorted(MODES))
def test_each_mode_says_which_languages_it_runs(name: str) -> None:
    mode = MODES[name]
    languages = mode.languages()
    if name == "stdio":
        assert languages is None and mode.refusal("go") is None
    else:
        assert languages and all(mode.refusal(language) is None for language in languages)
        assert mode.refusal("javascript") is not None


def test_a_rust_unittest_suite_scores_through_the_reward_engine(engine: Engine) -> None:
    """The sandbox runs Rust unittest suites (HumanEval-Rust's); the reward engine refused them."""
    if (home_rustc(os.environ.get("PATH", "")) or find_tool("rustc")) is None:
        pytest.skip("needs rustc where the sandbox can use it; make toolchains installs one")
    reward = rewards.pass_rate(engine=engine)
    values = reward(completions=[RUST_RIGHT, RUST_WRONG], tests=[RUST_SUITE] * 2, language=["rust"] * 2)
    assert values == [1.0, 0.0]


def test_a_mode_refuses_a_language_alike_everywhere(sandbox: Sandbox, engine: Engine, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    suite = TestSuite.from_dict(CALL_SUITE)
    message = suite.kind.refusal("c")
    assert message is not None
    with pytest.raises(ValueError) as raised:
        sandbox.run("int add(int a, int b) { return a + b; }", suite, language="c")
    assert str(raised.value) == message
    result = rewards.pass_rate(engine=engine).score(
        [{"completion": "int add(int a, int b) { return a + b; }", "tests": CALL_SUITE, "language": "c"}])[0]
    assert result.value == 0.0 and message in result.info["pass_rate"]["feedback"]
    records = tmp_path / "c.jsonl"
    records.write_text(json.dumps({"completion": "int f;", "tests": CALL_SUITE, "language": "c"}) + "\n")
    main(["score", "--jsonl", str(records)])
    assert message in capsys.readouterr().out
    assert result.info["pass_rate"]["status"] == Status.COMPILE_ERROR.value
