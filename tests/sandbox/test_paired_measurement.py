"""Paired, interleaved measurement: a baseline and candidates in rounds on one worker."""

from __future__ import annotations

import math
import statistics

import pytest

from rewardkit.sandbox import ExecutionResult, Sandbox, Status
from rewardkit.sandbox.measurement import PAIRED_METRICS, pair_noise, paired_ratios


def work(scale: float, name: str = "total") -> str:
    """A program summing ``scale·n`` numbers in a function (renaming its local changes no work)."""
    return (f"def solve(n):\n    {name} = 0\n    for i in range(int(n * {scale}) + 1):\n"
            f"        {name} += i\n    return n * (n + 1) // 2\nprint(solve(int(input())))\n")


N = 300_000
SUITE = {"mode": "stdio", "cases": [{"input": f"{N}\n", "output": f"{N * (N + 1) // 2}\n"}] * 2}
WRONG = "print(0)\n"


def passed(time_s: float, memory_kb: float = 1000.0) -> ExecutionResult:
    return ExecutionResult(Status.PASSED, 1, 1, time_s=time_s, wall_s=time_s,
                           peak_memory_kb=memory_kb, integral_kb_s=time_s * memory_kb)


def test_ratios_compare_with_the_baseline_interpolated_across_the_round() -> None:
    # the host slows down steadily: baseline 1.0 before the round, 2.0 after it
    baselines = [passed(1.0), passed(2.0)]
    rounds = [[(0, passed(4 / 3)), (1, passed(5 / 3))]]
    ratios = paired_ratios(baselines, rounds, 2)
    assert ratios[0]["time_s"] == [pytest.approx(1.0)] and ratios[1]["time_s"] == [pytest.approx(1.0)]
    assert set(ratios[0]) == set(PAIRED_METRICS)
    # a failed run or a failed baseline gives no ratio
    failed = ExecutionResult(Status.WRONG_ANSWER, 0, 1)
    assert paired_ratios(baselines, [[(0, failed)]], 1)[0]["time_s"] == []
    assert paired_ratios([passed(1.0), failed], [[(0, passed(1.0))]], 1)[0]["time_s"] == []


def test_the_noise_is_the_spread_between_rounds_not_the_gain() -> None:
    steady = [{"time_s": [1.5, 1.5, 1.5]}, {"time_s": [0.5, 0.5, 0.5]}]
    assert pair_noise(steady, [passed(1.0)] * 4)["time_s"] == 0.0  # large gains, no noise
    noisy = pair_noise([{"time_s": [0.9, 1.0, 1.1]}], [passed(1.0), passed(1.1), passed(1.0)])
    assert 0.03 < noisy["time_s"] < 0.15
    assert pair_noise([], [])["time_s"] == 0.0


def test_paired_runs_order_work_and_keep_the_verdicts_of_run(sandbox: Sandbox) -> None:
    candidates = [work(1.0, "renamed"), work(2.0), work(0.5), WRONG]
    paired = sandbox.run_paired(work(1.0), candidates, SUITE, rounds=3)
    assert paired.rounds == 3 and paired.baseline.passed and paired.baseline.repeats == 4
    same, double, half, wrong = paired.candidates
    assert [r.repeats for r in (same, double, half)] == [3, 3, 3]
    assert wrong.status == sandbox.run(WRONG, SUITE).status == Status.WRONG_ANSWER
    assert paired.ratios[3] == {} and wrong.repeats == 1  # stopped at its first failed run
    medians = [statistics.median(r["time_s"]) for r in paired.ratios[:3]]
    assert medians[2] < medians[0] < medians[1], medians
    assert abs(math.log(medians[0])) < abs(math.log(medians[1])), medians
    assert set(paired.noise) == set(PAIRED_METRICS)


def test_a_failing_baseline_leaves_no_ratios_and_candidates_their_verdicts(sandbox: Sandbox) -> None:
    paired = sandbox.run_paired(WRONG, [work(1.0), WRONG], SUITE, rounds=2)
    assert paired.baseline.status == Status.WRONG_ANSWER and paired.baseline.repeats == 1
    assert paired.candidates[0].passed and paired.candidates[0].repeats == 2
    assert paired.candidates[1].status == Status.WRONG_ANSWER
    assert paired.ratios == [{}, {}]
