"""`rewardkit bench` end to end: references measured here, metrics with CIs, report files, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardkit.benchmarks.embedded import load_mini
from rewardkit.benchmarks.problem import Problem, Reference
from rewardkit.benchmarks.report import write_report
from rewardkit.benchmarks.runner import SampleResult, sample_values
from rewardkit.benchmarks.summary import summarise
from rewardkit.cli import main
from rewardkit.sandbox import TestSuite

SUITE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "1\n"}]})


def _problem(times: list[float]) -> Problem:
    refs = [Reference("print(1)", f"ref {t}", {"passed": True, "time_s": t, "peak_memory_kb": 1000.0,
                                                 "integral_kb_s": t * 1000}) for t in times]
    return Problem("toy", "print 1", SUITE, references=refs)


def _sample(passed: bool, time_s: float) -> SampleResult:
    return SampleResult("toy", 0, "", "passed" if passed else "wrong_answer", passed, time_s, 1000.0,
                        time_s * 1000, "")


def test_sample_values_against_hand_computed_ranks() -> None:
    problem = _problem([1.0, 2.0, 3.0, 4.0])
    values = sample_values(_sample(True, 2.5), problem)
    # time 2.5 beats 3.0 and 4.0: PR = 1 - bisect_left([1, 2, 3, 4], 2.5) / 4 = 1 - 2/4
    assert values["beyond_t"] == 0.5 and values["M_t"] == 1.0 and values["pass@1"] == 1.0
    # memory 1000 ties every reference: ties count as beaten, PR = 1 - 0/4
    assert values["beyond_m"] == 1.0
    # Mercury: (max - rt) / (max - min) = (4 - 2.5) / 3
    assert values["runtime_score"] == pytest.approx(0.5)
    failed = sample_values(_sample(False, 0.1), problem)
    assert failed["beyond_t"] == 0.0 and failed["F_t"] == 1.0 and "dps_norm" not in failed
    assert set(sample_values(_sample(True, 1.0), _problem([]))) == {"pass@1"}  # no reference: left out


def test_summary_means_over_problems_and_covers_only_problems_with_values() -> None:
    with_refs, without = _problem([1.0, 2.0, 3.0, 4.0]), _problem([])
    without.problem_id = "bare"
    results = [_sample(True, 2.5), _sample(False, 1.0)]
    for r in results:
        r.values = sample_values(r, with_refs)
    bare = _sample(True, 1.0)
    bare.problem_id, bare.values = "bare", sample_values(bare, without)
    report = summarise([with_refs, without], [*results, bare])
    # pass@1: toy 1/2, bare 1/1 -> mean 0.75; beyond_t only from toy: (0.5 + 0) / 2
    assert report["metrics"]["pass@1"]["value"] == pytest.approx(0.75)
    assert report["metrics"]["beyond_t"] == {"value": pytest.approx(0.25), "ci95": pytest.approx([0.0, 0.5]),
                                             "problems": 1}
    assert report["counts"] == {"problems": 2, "samples": 3, "samples_per_problem": [1, 2], "evaluations": 1}


@pytest.fixture
def solutions(tmp_path: Path) -> Path:
    problems = load_mini()[:2]
    lines = [{"problem_id": p.problem_id, "code": r.code, "sample": i}
             for p in problems for i, r in enumerate(p.references[:3])]
    lines.append({"problem_id": problems[0].problem_id, "code": "print('nope')", "sample": 3})
    path = tmp_path / "solutions.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_bench_cli_writes_the_report(solutions: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    assert main(["bench", "--solutions", str(solutions), "--out", str(out), "--repeats", "1"]) == 0
    assert "| pass@1 |" in capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    assert report["metrics"]["pass@1"]["value"] == pytest.approx((3 / 4 + 3 / 3) / 2)
    low, high = report["metrics"]["beyond_t"]["ci95"]
    assert 0.0 <= low <= report["metrics"]["beyond_t"]["value"] <= high <= 1.0
    assert [row["samples"] for row in report["problems"]] == [4, 3]
    assert {"report.md", "metrics.png", "distribution_time_s.png"} <= {p.name for p in out.iterdir()}
    assert "![metrics.png](metrics.png)" in (out / "report.md").read_text()
    assert main(["bench", "--solutions", str(solutions), "--out", str(out), "--samples", "1",
                 "--repeats", "1", "--force"]) == 0  # the report is there: replaced only when asked
    assert json.loads((out / "report.json").read_text())["counts"]["samples"] == 2


def test_bench_on_humaneval_canonical_solutions(tmp_path: Path) -> None:
    from rewardkit.benchmarks.loaders import load_dataset

    problems = load_dataset("humaneval", limit=4)
    path = tmp_path / "he.jsonl"
    path.write_text("".join(json.dumps({"problem_id": p.problem_id, "code": p.references[0].code}) + "\n"
                            for p in problems))
    assert main(["bench", "--dataset", "humaneval", "--solutions", str(path), "--out",
                 str(tmp_path / "he"), "--repeats", "1"]) == 0
    assert json.loads((tmp_path / "he" / "report.json").read_text())["metrics"]["pass@1"]["value"] == 1.0


@pytest.mark.parametrize("record", [{"problem_id": "mini/nope", "code": "x"}, {"code": "no id"}])
def test_bench_errors_exit_2(record: dict[str, str], tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(record) + "\n")
    assert main(["bench", "--solutions", str(path), "--out", str(tmp_path / "o")]) == 2
    assert "rewardkit bench: " in capsys.readouterr().err
    assert main(["bench", "--out", str(tmp_path / "o")]) == 2  # no solutions given


def test_the_report_plots_a_ci_that_leaves_out_its_value(tmp_path: Path) -> None:
    """The appendix-G.1 bootstrap draws k samples per problem, not each problem's own count, so
    its 95% interval need not hold the mean of all samples (a measured Beyond-T at the edge of a
    problem's references did, now and then): ``rewardkit bench`` failed with matplotlib's "'yerr'
    must not contain negative values" instead of writing its report."""
    pytest.importorskip("matplotlib")
    with_refs = _problem([1.0, 2.0, 3.0, 4.0])
    results = [_sample(True, 2.5), _sample(False, 1.0)]
    for r in results:
        r.values = sample_values(r, with_refs)
    report = {"dataset": "toy", "repeats": 1, "evaluations": 1, **summarise([with_refs], results)}
    report["metrics"]["beyond_t"]["ci95"] = [0.3, 0.5]  # value 0.25: below its interval
    plot = tmp_path / "report" / "metrics.png"
    assert plot in write_report(report, tmp_path / "report") and plot.stat().st_size > 0
