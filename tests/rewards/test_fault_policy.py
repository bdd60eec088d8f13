"""The fault policy (:mod:`rewardkit.rewards.faults`) through each framework's path, on real faults:
the sandbox's worker processes are killed while they run the sample."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterator
from typing import Any

import pytest
from killer import killing

from rewardkit.rewards import ConfigError, Engine, RewardResult, pass_rate, verl
from rewardkit.rewards.faults import FAULT_KEY, RewardFault, apply, fault_policy
from rewardkit.sandbox import Limits, Sandbox
from rewardkit.serve.openrlhf import answer_body

TESTS = {"mode": "stdio", "cases": [{"input": "2 3\n", "output": "5\n"}]}
CODE = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
# a limit no other test gives, so that verl's cached scorer here is this module's own
KWARGS: dict[str, Any] = {"preset": "pass_rate", "limits": {"time_s": 7}}


@pytest.fixture(scope="module")
def faulted() -> Iterator[list[RewardResult]]:
    """Two samples scored while the sandbox's workers are killed: no value, a real fault."""
    with killing("runtime.worker"), Sandbox(workers=1, limits=Limits(time_s=2)) as doomed:
        results = pass_rate(engine=Engine(sandbox=doomed)).score([{"completion": CODE, "tests": TESTS}] * 2)
    assert all(r.value is None for r in results)
    assert results[0].info["pass_rate"]["status"] == "sandbox_error"
    yield results


def test_the_policy_is_parsed_and_checked_per_framework() -> None:
    assert fault_policy(None, "verl") == 0.0 and fault_policy(None, "trl") == "skip"
    assert fault_policy(None, "verifiers") == "skip" and fault_policy(None, "openrlhf") == 0.0
    assert fault_policy(" Raise", "verl") == "raise" and fault_policy("-0.5", "openrlhf") == -0.5
    for framework in ("verl", "openrlhf", "env"):  # they cannot drop a sample
        with pytest.raises(ConfigError, match="cannot drop a sample"):
            fault_policy("skip", framework)
    for bad in ("nan", math.inf, "zero", True, [0.0]):
        with pytest.raises(ConfigError, match="finite number"):
            fault_policy(bad, "verl")
    assert apply(0.25, "raise") == 0.25 and apply(None, "skip") is None and apply(None, -1.0) == -1.0
    with pytest.raises(RewardFault):
        apply(None, "raise")


def test_verl_gets_the_stated_value_and_the_flag_or_an_error_on_a_real_fault() -> None:
    """verl's functions on a sample whose run dies: the default 0.0 or the configured value,
    flagged; ``raise`` raises; ``skip`` is refused (verl cannot drop a sample)."""
    with killing("runtime.worker"):
        default = verl.compute_score("src", CODE, TESTS, None, **KWARGS)
        stated = verl.compute_score("src", CODE, TESTS, None, fault=-1.0, **KWARGS)
        batch = verl.compute_score_batch(["src"], [CODE], [TESTS], None, fault="-0.5", **KWARGS)
        awaited = asyncio.run(verl.compute_score_async("src", CODE, TESTS, None, fault=0.25, **KWARGS))
        with pytest.raises(RewardFault, match="infrastructure fault"):
            verl.compute_score("src", CODE, TESTS, None, fault="raise", **KWARGS)
    assert default == {"score": 0.0, "pass_rate": 0.0, FAULT_KEY: 1.0}
    assert stated == {"score": -1.0, "pass_rate": 0.0, FAULT_KEY: 1.0}
    assert batch == [{"score": -0.5, "pass_rate": 0.0, FAULT_KEY: 1.0}]
    assert awaited == {"score": 0.25, "pass_rate": 0.0, FAULT_KEY: 1.0}
    with pytest.raises(ConfigError, match="cannot drop a sample"):
        verl.compute_score("src", CODE, TESTS, None, fault="skip", **KWARGS)
    healthy = verl.compute_score("src", CODE, TESTS, None, fault="raise", **KWARGS)
    assert healthy == {"score": 1.0, "pass_rate": 1.0, FAULT_KEY: 0.0}


def test_openrlhf_gets_the_stated_value_and_the_flag_or_an_error(faulted: list[RewardResult]) -> None:
    assert answer_body(faulted, ["pass_rate"]) == {
        "rewards": [0.0, 0.0], "scores": [0.0, 0.0],
        "extra_logs": {"pass_rate": [0.0, 0.0], FAULT_KEY: [1.0, 1.0]}}
    assert answer_body(faulted, ["pass_rate"], fault="-1")["rewards"] == [-1.0, -1.0]
    with pytest.raises(RewardFault):
        answer_body(faulted, ["pass_rate"], fault="raise")
    with pytest.raises(ConfigError, match="cannot drop a sample"):
        answer_body(faulted, ["pass_rate"], fault="skip")
