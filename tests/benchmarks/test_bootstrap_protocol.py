"""Afterburner appendix G.1: every solution evaluated N times, the CI resampled over those evaluations."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from rewardkit.benchmarks import metrics
from rewardkit.benchmarks.embedded import load_mini
from rewardkit.benchmarks.problem import Problem, Reference
from rewardkit.benchmarks.report import markdown
from rewardkit.benchmarks.runner import SampleResult, sample_values
from rewardkit.benchmarks.summary import bootstrap_values, group, summarise
from rewardkit.cli import main
from rewardkit.sandbox import TestSuite

SUITE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "1\n"}]})


def _problem(pid: str, times: list[float]) -> Problem:
    refs = [Reference("print(1)", "", {"passed": True, "time_s": t, "peak_memory_kb": 1000.0,
                                        "integral_kb_s": 1000.0 * t}) for t in times]
    return Problem(pid, "", SUITE, references=refs)


def _run(problem: Problem, time_s: float, sample: int = 0, evaluation: int = 0) -> SampleResult:
    result = SampleResult(problem.problem_id, sample, "", "passed", True, time_s, 1000.0, 1000.0 * time_s, "",
                          evaluation=evaluation)
    result.values = sample_values(result, problem)
    return result


def test_the_bootstrap_resamples_evaluations_and_matches_appendix_g_by_hand() -> None:
    problem = _problem("p", [1.0, 2.0, 3.0, 4.0])
    # one generated code, 4 evaluations: PR = 1 - bisect_left([1, 2, 3, 4], t) / 4 -> 1, 0.5, 0.5, 0
    runs = [_run(problem, t, evaluation=e) for e, t in enumerate([0.5, 2.5, 2.5, 5.0])]
    per_problem = bootstrap_values(group(runs)["p"], lambda run: [r.values["beyond_t"] for r in run])
    assert per_problem == [1.0, 0.5, 0.5, 0.0]
    report = summarise([problem], runs)
    entry = report["metrics"]["beyond_t"]
    assert entry["value"] == pytest.approx(0.5) and "zero_width" not in entry
    # a replicate draws k=4 of the 4 evaluations with replacement and averages them; B = 128 replicates
    assert entry["ci95"] == list(metrics.bootstrap([per_problem], k=4, replicates=128, seed=0)[1:])
    # by hand: each draw is Binomial(2, 1/2)/2, so a replicate is Binomial(8, 1/2)/8, whose 2.5% and
    # 97.5% quantiles are 1/8 and 7/8; 128 replicates land close to them
    low, high = entry["ci95"]
    assert 0.0 <= low <= 0.25 and 0.75 <= high <= 1.0
    assert report["ci"]["over"] == "evaluations" and report["counts"]["evaluations"] == 4
    assert report["ci"]["label"].startswith("Afterburner appendix G.1: 4 evaluations of every solution")
    assert "128 replicates of k=4 evaluations per problem" in markdown(report | {"dataset": "toy"})


def test_one_evaluation_is_labelled_over_samples_and_a_single_value_is_flagged() -> None:
    problem = _problem("p", [1.0, 2.0, 3.0, 4.0])
    report = summarise([problem], [_run(problem, 2.5)])
    entry = report["metrics"]["beyond_t"]
    assert entry["ci95"] == [0.5, 0.5] and entry["zero_width"] == "one value per problem: nothing to resample"
    assert report["ci"]["over"] == "samples"
    assert report["ci"]["label"].startswith("over the samples of each problem (1 per problem, one evaluation")
    text = markdown(report | {"dataset": "toy"})
    assert "[0.500, 0.500] (zero width)" in text and "Zero-width CI (pass@1, beyond_t" in text
    several = summarise([problem], [_run(problem, t, sample=i) for i, t in enumerate([0.5, 2.5, 5.0])])
    assert "zero_width" not in several["metrics"]["beyond_t"]
    assert "(3 per problem, one evaluation each)" in several["ci"]["label"]


@pytest.fixture
def coin_solutions(tmp_path: Path) -> Path:
    """One sample per problem that tosses a coin in each run for its fastest or its slowest reference's
    code: its time genuinely varies between runs, as a randomised algorithm's does, whatever the
    machine's noise."""
    problems = [p for p in load_mini() if p.problem_id in ("mini/count-pairs", "mini/missing-number")]
    path = tmp_path / "coins.jsonl"
    lines = []
    for problem in problems:
        fast, slow = (textwrap.indent(problem.references[k].code, "    ") for k in (0, -1))
        code = f"import os\n\nif os.urandom(1)[0] % 2:\n{fast}else:\n{slow}"
        lines.append(json.dumps({"problem_id": problem.problem_id, "code": code}) + "\n")
    path.write_text("".join(lines))
    return path


def test_sixteen_evaluations_of_real_runs_give_beyond_t_a_width(coin_solutions: Path, tmp_path: Path) -> None:
    out = tmp_path / "g16"
    assert main(["bench", "--solutions", str(coin_solutions), "--out", str(out), "--repeats", "1",
                 "--evaluations", "16"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["evaluations"] == 16 and report["counts"]["evaluations"] == 16
    assert all(row["evaluations"] == 16 and len(row["samples_detail"]) == 16 for row in report["problems"])
    # fresh runs, each tossing its coin: both codes ran (2 ** -15 that one problem's 16 tosses agree)
    per_problem = [{s["values"]["beyond_t"] for s in row["samples_detail"]} for row in report["problems"]]
    assert all(len(values) > 1 for values in per_problem), per_problem
    low, high = report["metrics"]["beyond_t"]["ci95"]
    assert high > low and "zero_width" not in report["metrics"]["beyond_t"]
    assert "Afterburner appendix G.1: 16 evaluations" in (out / "report.md").read_text()
    once = tmp_path / "g1"
    assert main(["bench", "--solutions", str(coin_solutions), "--out", str(once), "--repeats", "1"]) == 0
    report = json.loads((once / "report.json").read_text())
    assert report["metrics"]["beyond_t"]["zero_width"] and report["ci"]["over"] == "samples"
    assert "Zero-width CI" in (once / "report.md").read_text()


def test_evaluations_below_one_is_refused(coin_solutions: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--solutions", str(coin_solutions), "--out", str(tmp_path / "o"),
                 "--evaluations", "0"]) == 2
    assert "--evaluations must be at least 1, got 0" in capsys.readouterr().err


# a HumanEval-schema problem whose reference and sample sleep 50 ms: elapsed time holds the sleep,
# CPU time does not (a few ms), a gap no slow spell of the machine closes
NAP = {"task_id": "Nap/0", "prompt": "import time\n\n\ndef nap(x):\n    \"\"\"x, after 50 ms.\"\"\"\n",
       "canonical_solution": "    time.sleep(0.05)\n    return x\n",
       "test": "def check(candidate):\n    assert candidate(1) == 1\n", "entry_point": "nap"}


def test_mercury_protocol_times_are_elapsed_and_the_report_names_it(tmp_path: Path) -> None:
    dataset, solutions = tmp_path / "nap.jsonl", tmp_path / "nap-solutions.jsonl"
    dataset.write_text(json.dumps(NAP) + "\n")
    solutions.write_text(json.dumps({"problem_id": "Nap/0",
                                     "code": NAP["prompt"] + NAP["canonical_solution"]}) + "\n")
    bench = ["bench", "--dataset", str(dataset), "--solutions", str(solutions)]
    out = tmp_path / "mercury"
    assert main([*bench, "--out", str(out), "--protocol", "mercury"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["protocol"]["name"] == "mercury" and report["protocol"]["clock"] == "wall"
    assert report["repeats"] == 3  # the protocol's: mean of 3 runs
    text = (out / "report.md").read_text()
    assert "Measurement protocol: mercury (Mercury (Mercury paper, Appendix A.3)" in text
    cpu = tmp_path / "cpu"
    assert main([*bench, "--out", str(cpu)]) == 0
    cpu_report = json.loads((cpu / "report.json").read_text())
    assert cpu_report["protocol"]["name"] == "rewardkit" and cpu_report["repeats"] == 3
    # elapsed time holds the sleep, CPU time of the solution's own work leaves it out, for the
    # sample and the reference alike
    [wall_row], [cpu_row] = report["problems"], cpu_report["problems"]
    assert wall_row["samples_detail"][0]["time_s"] >= 0.05 > 2 * cpu_row["samples_detail"][0]["time_s"]
    assert min(wall_row["references"]["time_s"]) >= 0.05 > 2 * max(cpu_row["references"]["time_s"])
