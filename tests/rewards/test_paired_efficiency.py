"""Efficiency measured in pairs: a group's candidates in interleaved rounds with their baseline.

The goals of ``benchmarks/perf/bench_noise_floor.py`` with looser bounds and fewer samples.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardkit import rewards
from rewardkit.benchmarks.perf import bench_noise_floor as bench
from rewardkit.rewards import Engine
from rewardkit.sandbox import Sandbox
from rewardkit.trainers.datasets import answer_text

SUITE = bench.tests(n=600_000)  # ~25 ms of CPU per run: 1/1.25 of it is above Python's 5 ms resolution


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=2, repeats=3) as sb:
        yield sb


def rows(baseline: str, codes: list[str]) -> list[dict[str, object]]:
    return [{"completion": answer_text(code, "plan"), "tests": SUITE, "baseline_code": baseline}
            for code in codes]


def test_each_batch_measures_its_baseline_again_in_rounds_with_it(sandbox: Sandbox) -> None:
    """A baseline measured in an earlier batch is not reused: a new group runs it in its rounds."""
    engine = Engine(sandbox=sandbox)
    reward = rewards.efficiency("time", engine=engine)
    baseline = bench.program(1.0, "base")
    first = [bench.program(1.0, "a"), bench.program(1.5, "slow")]
    [same, slow] = reward.score(rows(baseline, first))
    assert engine.executions == 3  # the baseline and two candidates
    assert same.info["efficiency_time"]["rounds"] == 3 and same.value == 0.0
    assert slow.value < 0.0 and slow.info["efficiency_time"]["ratio"] > 1.0
    reward.score(rows(baseline, first))
    assert engine.executions == 3  # the same group again: its measurement is cached
    reward.score(rows(baseline, [bench.program(1.0, "b")]))
    assert engine.executions == 5  # a new group: the baseline again, beside the new candidate


def test_a_candidate_that_is_the_baseline_scores_zero_without_a_run_of_its_own(sandbox: Sandbox) -> None:
    engine = Engine(sandbox=sandbox)
    baseline = bench.program(1.0, "base")
    same, fast = rewards.efficiency("time", engine=engine).score(
        rows(baseline, [baseline, bench.program(1 / 1.5, "fast")]))
    assert same.value == 0.0 and fast.value is not None and fast.value > 0.0
    assert engine.executions == 2


def test_a_kept_reward_scores_identical_code_zero_and_orders_work_over_time(sandbox: Sandbox) -> None:
    """Groups spread over time, one reward object kept (as a trainer keeps it)."""
    reward = rewards.efficiency("time", engine=Engine(sandbox=sandbox))
    figures = bench.run(samples=3, gap=0.5, suite=SUITE, reward=reward)
    paired = {kind: bench.share(values) for kind, values in figures["paired"].items()}
    # loose: three samples on a host other tests load at the same time
    assert paired["identical"] >= 2 / 3, figures
    assert min(paired["1.5x"], paired["1/1.5"]) >= 2 / 3, figures
    assert paired["1.25x"] + paired["1/1.25"] >= 2 / 3, figures


def test_the_afterburner_loop_judges_a_paired_candidate_by_its_ratio() -> None:
    """The loop keeps a candidate that its rounds show faster, whatever separate runs gave."""
    from rewardkit.rewards.engine import Paired
    from rewardkit.trainers.afterburner import judge

    current = {"passed": True, "time_s": 0.05}
    candidate = {"passed": True, "time_s": 0.05}  # measured apart: no difference
    faster = Paired({"time_s": [0.6, 0.62, 0.61]}, {"time_s": 0.02})
    assert judge("time", current, candidate, faster) == (True, "faster by 39%")
    same = Paired({"time_s": [0.98, 1.03, 1.0]}, {"time_s": 0.03})
    assert judge("time", current, candidate, same)[0] is False
