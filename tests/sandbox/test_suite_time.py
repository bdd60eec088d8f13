"""``Limits.suite_time_s``: a bound on a whole run of the suite, in every mode, so one job can
hold a worker no longer than that (the reward service sets it)."""

from __future__ import annotations

import time

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite

BOUNDED = Limits(time_s=2, suite_time_s=1.0)
SLEEPY_STDIO = "import time\ntime.sleep(0.3)\nprint(1)\n"
SLEEPY_CALL = "import time\ndef one():\n    time.sleep(0.3)\n    return 1\n"
STDIO = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "1\n"}] * 10})
CALL = TestSuite.from_dict({"mode": "call", "entry_point": "one",
                            "cases": [{"args": [], "expected": 1}] * 10})
SCRIPT = TestSuite.from_dict({"mode": "script", "entry_point": "one",
                              "check": "def check(candidate):\n    for _ in range(10):\n"
                                       "        assert candidate() == 1\n"})


@pytest.mark.parametrize(("code", "suite"),
                         [(SLEEPY_STDIO, STDIO), (SLEEPY_CALL, CALL), (SLEEPY_CALL, SCRIPT)],
                         ids=["stdio", "call", "script"])
def test_a_run_past_the_suite_bound_ends_with_timeout(sandbox: Sandbox, code: str, suite: TestSuite) -> None:
    started = time.monotonic()
    result = sandbox.run(code, suite, limits=BOUNDED)
    assert time.monotonic() - started < 2.5
    assert result.status == Status.TIMEOUT, result
    assert "Time limit for the whole suite exceeded" in result.feedback and "limit 1 s" in result.feedback
    assert result.tests_passed < result.tests_total


def test_without_the_bound_every_case_runs(sandbox: Sandbox) -> None:
    assert sandbox.run(SLEEPY_CALL, CALL, limits=Limits(time_s=2)).status == Status.PASSED


def test_the_bound_is_validated_and_left_out_when_unset() -> None:
    with pytest.raises(ValueError, match="suite_time_s"):
        Limits(suite_time_s=0)
    assert "suite_time_s" not in Limits().to_dict()
    assert Limits(suite_time_s=5).to_dict()["suite_time_s"] == 5
