"""Named measurement protocols (sandbox/measurement.py): Monolith's and Mercury's settings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from rewardkit.cli import main
from rewardkit.sandbox import PROTOCOLS, ExecutionResult, Limits, Sandbox, Status, protocol
from rewardkit.sandbox.sandbox import combine_runs

SUITE = {"mode": "stdio", "cases": [{"input": "", "output": ""}]}


def test_each_protocol_s_settings() -> None:
    assert set(PROTOCOLS) == {"rewardkit", "monolith", "mercury"}
    ours, monolith, mercury = protocol("rewardkit"), protocol("monolith"), protocol("mercury")
    assert (ours.limits, ours.repeats, ours.statistic) == (Limits(), 1, "median")
    assert (ours.clock, ours.cpus) == ("cpu", None)
    assert (monolith.limits.time_s, monolith.limits.memory_mb, monolith.cpus) == (90.0, 1024, 1)
    assert (monolith.repeats, monolith.clock) == (1, "wall")
    assert (mercury.repeats, mercury.statistic, mercury.clock) == (3, "mean", "wall")
    assert mercury.limits.time_s == 30.0
    result = ExecutionResult(Status.PASSED, time_s=0.1, wall_s=0.3)
    assert ours.time_of(result) == 0.1 and mercury.time_of(result) == 0.3


def test_unknown_protocol_names_the_choices() -> None:
    with pytest.raises(ValueError, match="mercury, monolith, rewardkit"):
        protocol("venus")
    with pytest.raises(ValueError, match="mercury, monolith, rewardkit"):
        Sandbox(workers=1, protocol="venus")


def test_mean_and_median_combine_known_runs() -> None:
    runs = [ExecutionResult(Status.PASSED, 1, 1, time_s=t, wall_s=t, peak_memory_kb=m)
            for t, m in ((1.0, 100.0), (2.0, 200.0), (6.0, 900.0))]
    mean, median = combine_runs(runs, protocol("mercury")), combine_runs(runs, protocol("rewardkit"))
    assert (mean.time_s, mean.peak_memory_kb, mean.repeats) == (3.0, 400.0, 3)
    assert (median.time_s, median.peak_memory_kb) == (2.0, 200.0)
    assert mean.spread == median.spread  # MAD / median, whichever the statistic


def test_mercury_protocol_means_three_real_runs() -> None:
    with Sandbox(workers=1, protocol="mercury") as sb:
        result = sb.run("import time\ntime.sleep(0.05)\n", SUITE)
        assert sb.isolation["protocol"]["name"] == "mercury"
    assert result.passed and result.repeats == 3 and result.wall_s >= 0.05


def test_pinned_run_sees_one_cpu() -> None:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one CPU: pinning changes nothing visible")
    code = "import os\nprint(sorted(os.sched_getaffinity(0)))\n"
    with Sandbox(workers=2, protocol="monolith") as sb:
        outputs = [sb.run(code, {"mode": "stdio", "cases": [{"input": "", "output": "x"}]})
                   for _ in range(2)]
        assert sb.isolation["protocol"]["cpus_per_run"] == 1
    for result in outputs:
        assert "[" in result.feedback  # the wrong answer shows what the run printed
    seen = [json.loads(line) for r in outputs for line in r.feedback.splitlines()
            if line.strip().startswith("[") and line.strip().endswith("]")]
    assert seen and all(len(cpus) == 1 for cpus in seen), [r.feedback for r in outputs]
    with Sandbox(workers=1) as sb:  # not pinned by default
        everything = str(sorted(os.sched_getaffinity(0)))
        free = sb.run(code, {"mode": "stdio", "cases": [{"input": "", "output": everything}]})
    assert free.passed, free.feedback


def test_one_worker_per_cpu_keeps_each_worker_and_its_runs_on_a_cpu_of_its_own() -> None:
    """With as many workers as CPUs (the default), a job's processes wake each other on one CPU
    and a run's threads cannot crowd another worker's run; with fewer, runs may use them all."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("one CPU: pinning changes nothing visible")
    code = "import os\nprint(sorted(os.sched_getaffinity(0)))\n"
    suite = {"mode": "stdio", "cases": [{"input": "", "output": "x"}]}
    with Sandbox(workers=len(cpus)) as sb:
        results = sb.run_many([(code, suite)] * (4 * len(cpus)))
    seen = {line for r in results for line in r.feedback.splitlines() if line.startswith("[")}
    assert seen and all(len(json.loads(line)) == 1 for line in seen), seen
    assert len(seen) > 1  # the workers are spread over the CPUs, not all on one
    with Sandbox(workers=len(cpus) - 1) as sb:
        assert sb.run(code, {"mode": "stdio", "cases": [{"input": "", "output": str(cpus)}]}).passed


def beside(expected: str) -> dict[str, str]:
    """A trusted script check (it runs in the thread that drives the job) that asserts the CPUs
    that thread may use: ``expected`` is an expression of the set it reads."""
    return {"mode": "script", "entry_point": "f", "check": (
        "import os\n"
        "def check(candidate):\n"
        "    cpus = os.sched_getaffinity(0)\n"
        f"    assert candidate(1) == 1 and {expected}, cpus\n")}


def test_the_thread_driving_a_job_runs_beside_its_pinned_worker_and_gets_its_cpus_back() -> None:
    cpus = os.sched_getaffinity(0)
    if len(cpus) < 2:
        pytest.skip("one CPU: pinning changes nothing visible")
    identity = "def f(x):\n    return x\n"
    with Sandbox(workers=len(cpus)) as sb:  # one worker per CPU: each pinned to its own
        results = [sb.run(identity, beside(f"len(cpus) == 1 and cpus < {cpus}")) for _ in range(3)]
        assert os.sched_getaffinity(0) == cpus
    assert all(r.passed for r in results), [r.feedback for r in results]
    with Sandbox(workers=len(cpus) - 1) as sb:  # fewer: not pinned, the thread stays as it was
        result = sb.run(identity, beside(f"cpus == {cpus}"))
    assert result.passed, result.feedback


def test_cli_run_with_monolith_protocol(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    solution, tests = tmp_path / "s.py", tmp_path / "t.json"
    solution.write_text("print(2 + 3)\n")
    tests.write_text(json.dumps({"mode": "stdio", "cases": [{"input": "", "output": "5\n"}]}))
    assert main(["run", str(solution), "--tests", str(tests), "--protocol", "monolith"]) == 0
    out = capsys.readouterr().out
    assert "passed" in out and "monolith (mean of runs, wall time)" in out
