"""`rewardkit bench` ranks samples among references measured in the same rounds, on one scale."""

from __future__ import annotations

from rewardkit.benchmarks.bench import run_benchmark
from rewardkit.benchmarks.embedded import load_mini
from rewardkit.benchmarks.metrics import percentile_rank
from rewardkit.benchmarks.runner import Solution
from rewardkit.sandbox import Limits


def test_a_sample_identical_to_a_reference_sits_exactly_at_its_rank() -> None:
    """References cached from an earlier measurement and samples measured later sit on two scales
    (the host's speed drifts between them), so a reference's own code ranked elsewhere than the
    reference; measured in the same rounds, identical code gets the reference's values exactly."""
    problems = load_mini()[:2]
    solutions = [Solution(p.problem_id, r.code, sample=i)
                 for p in problems for i, r in enumerate(p.references)]
    run = run_benchmark(problems, solutions, None, repeats=2, limits=Limits(time_s=2, memory_mb=512),
                        progress=False)
    for problem in problems:
        references = problem.passing_references()
        assert len(references) >= 5
        times = problem.reference_values("time_s")
        memories = problem.reference_values("peak_memory_kb")
        mine = [r for r in run.results if r.problem_id == problem.problem_id]
        for result, reference in zip(mine, problem.references, strict=True):
            assert result.passed and reference.metrics is not None
            assert result.time_s == reference.metrics["time_s"]
            assert result.peak_memory_kb == reference.metrics["peak_memory_kb"]
            assert result.values["beyond_t"] == percentile_rank(result.time_s, times)
            assert result.values["beyond_m"] == percentile_rank(result.peak_memory_kb, memories)
        row = next(row for row in run.report["problems"] if row["problem_id"] == problem.problem_id)
        assert row["references"]["time_s"] == sorted(r.time_s for r in mine)
