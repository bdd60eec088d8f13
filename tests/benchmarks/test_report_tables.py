"""The report's tables: B/M/W/F for time, memory and integral, Beyond@1/3/5, pass@k, per difficulty."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardkit.benchmarks import metrics
from rewardkit.benchmarks.embedded import load_mini
from rewardkit.benchmarks.problem import Problem, Reference
from rewardkit.benchmarks.report import markdown
from rewardkit.benchmarks.runner import SampleResult, sample_values
from rewardkit.benchmarks.summary import summarise
from rewardkit.cli import main
from rewardkit.sandbox import TestSuite

SUITE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "1\n"}]})
# references: time 1..4 s, memory 100..400 KiB, integral 10..40 KiB·s
REFS = [Reference("print(1)", "", {"passed": True, "time_s": float(n), "peak_memory_kb": 100.0 * n,
                                    "integral_kb_s": 10.0 * n}) for n in (1, 2, 3, 4)]
# (passed, time, memory, integral) and, by hand, each sample's B/M/W/F letter per objective, with
# PR = 1 - bisect_left(refs, x) / 4: B if PR = 1 (ties with the best count), W if PR = 0, M between
SAMPLES = [
    (True, 0.5, 450.0, 25.0),   # time B (PR 1)    memory W (PR 0)     integral M (PR 0.5)
    (True, 2.5, 100.0, 50.0),   # time M (PR 0.5)  memory B (tie)      integral W
    (True, 9.0, 150.0, 10.0),   # time W           memory M (PR 0.75)  integral B (tie)
    (False, 0.1, 1.0, 1.0),     # failed: F in all three whatever it measured
    (True, 1.0, 400.0, 45.0),   # time B (tie)     memory M (PR 0.25)  integral W
]


def _problem(pid: str, difficulty: str = "") -> Problem:
    return Problem(pid, "", SUITE, difficulty=difficulty, references=[Reference(r.code, "", r.metrics)
                                                                        for r in REFS])


def _results(problem: Problem, rows: list[tuple[bool, float, float, float]], evaluation: int = 0
             ) -> list[SampleResult]:
    results = []
    for index, (passed, t, m, i) in enumerate(rows):
        result = SampleResult(problem.problem_id, index, "", "passed" if passed else "wrong_answer", passed,
                              t, m, i, "", evaluation=evaluation)
        result.values = sample_values(result, problem)
        results.append(result)
    return results


def test_bmwf_for_time_memory_and_integral_by_hand() -> None:
    problem = _problem("p")
    table = summarise([problem], _results(problem, SAMPLES))["metrics"]
    expected = {"t": (2, 1, 1, 1), "m": (1, 2, 1, 1), "i": (1, 1, 2, 1)}  # counts of B, M, W, F of 5
    for letter, counts in expected.items():
        for name, count in zip("BMWF", counts, strict=True):
            assert table[f"{name}_{letter}"]["value"] == pytest.approx(count / 5), (name, letter)
    # the same figures from the metric functions, one objective at a time (Venus's definition)
    for letter, column in (("t", 1), ("m", 2), ("i", 3)):
        refs = [float(r.metrics[["", "time_s", "peak_memory_kb", "integral_kb_s"][column]]) for r in REFS]
        shares = metrics.bmwf([(s[0], s[column]) for s in SAMPLES], refs)
        assert {name: table[f"{name}_{letter}"]["value"] for name in "BMWF"} == pytest.approx(shares)
    # Beyond-T: (1 + 0.5 + 0 + 0 + 1) / 5; Beyond-M: (0 + 1 + 0.75 + 0 + 0.25) / 5
    assert table["beyond_t"]["value"] == pytest.approx(0.5)
    assert table["beyond_m"]["value"] == pytest.approx(0.4)


def test_beyond_at_1_3_5_by_hand() -> None:
    problem = _problem("p")
    report = summarise([problem], _results(problem, SAMPLES))
    # Mercury b = (max - clamp(t, min, max)) / (max - min), min 1, max 4: 1, 0.5, 0, failed 0, 1
    assert report["metrics"]["beyond@1"]["value"] == pytest.approx(1.0)
    # best of the first K, as the Mercury authors' notebook: max(beyonds[:K])
    assert report["metrics"]["beyond@3"]["value"] == pytest.approx(1.0)
    assert report["metrics"]["beyond@5"]["value"] == pytest.approx(1.0)
    late = [SAMPLES[2], SAMPLES[1], SAMPLES[3], SAMPLES[0], SAMPLES[4]]  # 0, 0.5, failed, 1, 1
    ordered = summarise([problem], _results(problem, late))["metrics"]
    assert [ordered[f"beyond@{k}"]["value"] for k in (1, 3, 5)] == pytest.approx([0.0, 0.5, 1.0])
    runtimes, passed = [s[1] for s in SAMPLES], [s[0] for s in SAMPLES]
    for k in (1, 3, 5):
        assert report["metrics"][f"beyond@{k}"]["value"] == pytest.approx(
            metrics.mean_beyond_at_k([(runtimes, passed, [1.0, 2.0, 3.0, 4.0])], k))
    assert report["beyond_at_k"] == {"k": [1, 3, 5], "left_out": {}}
    short = summarise([problem], _results(problem, SAMPLES[:4]))
    assert "beyond@5" not in short["metrics"] and "beyond@3" in short["metrics"]
    assert "beyond@5 left out: needs at least 5 samples of every problem; 1 of 1 have fewer (fewest: 4)" \
        in markdown(short | {"dataset": "toy"})


def test_pass_at_k_in_the_report_and_markdown_and_over_evaluations() -> None:
    problem = _problem("p")
    rows = [(True, 1.0, 100.0, 10.0)] * 2 + [(False, 1.0, 100.0, 10.0)] * 10
    report = summarise([problem], _results(problem, rows))
    # 12 samples, 2 passing: pass@10 = 1 - C(10, 10) / C(12, 10) = 1 - 1/66
    assert report["metrics"]["pass@10"]["value"] == pytest.approx(1 - 1 / 66)
    assert report["metrics"]["pass@10"]["ci"] == "binomial redraw of each problem's samples"
    assert f"| pass@10 | {1 - 1 / 66:.3f} |" in markdown(report | {"dataset": "toy"})
    # two evaluations: 2 pass, then none (say, timeouts); pass@10 per evaluation 1 - 1/66 and 0, mean
    none_pass = _results(problem, [(False, 1.0, 1.0, 1.0)] * 12, evaluation=1)
    again = summarise([problem], _results(problem, rows) + none_pass)
    assert again["metrics"]["pass@10"]["value"] == pytest.approx((1 - 1 / 66) / 2)
    assert again["metrics"]["pass@1"]["value"] == pytest.approx(1 / 12)


def test_per_difficulty_tables_by_hand() -> None:
    easy, hard = _problem("e", "easy"), _problem("h", "hard")
    failing = [(False, 1.0, 1.0, 1.0)] * 5
    report = summarise([easy, hard], _results(easy, SAMPLES) + _results(hard, failing))
    assert list(report["by_difficulty"]) == ["easy", "hard"]
    assert report["by_difficulty"]["easy"]["problems"] == 1
    assert report["by_difficulty"]["easy"]["metrics"]["beyond@1"]["value"] == pytest.approx(1.0)
    assert report["by_difficulty"]["hard"]["metrics"]["beyond@1"]["value"] == 0.0
    assert report["by_difficulty"]["hard"]["metrics"]["F_t"]["value"] == 1.0
    # "all" is the mean over tasks, as Mercury's Average column (task-weighted)
    assert report["metrics"]["beyond@1"]["value"] == pytest.approx(0.5)
    text = markdown(report | {"dataset": "toy"})
    assert "| metric | easy (1) | hard (1) | all (2) |" in text
    assert "| beyond@5 | 1.000 | 0.000 | 0.500 |" in text  # best of the first 5
    assert summarise([_problem("x")], _results(_problem("x"), SAMPLES))["by_difficulty"] == {}


def test_bench_on_embedded_problems_writes_every_table(tmp_path: Path) -> None:
    wanted = ("mini/count-pairs", "mini/merge-intervals", "mini/knapsack-01")
    problems = [p for p in load_mini() if p.problem_id in wanted]
    records = [{"problem_id": p.problem_id, "code": r.code, "sample": i}
               for p in problems for i, r in enumerate(p.references[:6])]
    records += [{"problem_id": p.problem_id, "code": "print('nope')", "sample": i}
                for p in problems for i in range(6, 10)]
    path = tmp_path / "solutions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "report"
    assert main(["bench", "--solutions", str(path), "--out", str(out), "--repeats", "1"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert {"pass@1", "pass@10", "beyond@1", "beyond@3", "beyond@5"} <= set(report["metrics"])
    assert {f"{b}_{x}" for b in "BMWF" for x in "tmi"} <= set(report["metrics"])
    assert report["metrics"]["pass@1"]["value"] == pytest.approx(0.6)  # 6 of 10 in each problem
    assert list(report["by_difficulty"]) == ["easy", "medium", "hard"]
    text = (out / "report.md").read_text()
    for line in ("## B / M / W / F", "| time | ", "| memory | ", "| integral | ", "## By difficulty",
                 "| metric | easy (1) | medium (1) | hard (1) | all (3) |", "| beyond@5 |", "| pass@10 |"):
        assert line in text
