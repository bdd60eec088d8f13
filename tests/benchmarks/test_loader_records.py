"""Loading one record at a time: a bad record is reported with its index and reason and the others
load; ``strict`` stops at the first; a problem with no runnable tests is refused at load time.

The records are small HumanEval-schema problems written here, plus, when ``../shared/data`` is
there, the real HumanEval-Rust file (a record our Python HumanEval builder cannot read).
"""

from __future__ import annotations

import gc
import json
from pathlib import Path
from typing import Any

import pytest

from rewardkit.benchmarks.loaders import LoaderError, load_dataset, problems_from_records
from rewardkit.cli import main
from rewardkit.sandbox import Sandbox

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _humaneval(task: str, entry: str, body: str, test: str) -> dict[str, Any]:
    return {"task_id": task, "prompt": f'def {entry}(a, b):\n    """{entry} a and b"""\n',
            "canonical_solution": body, "test": test, "entry_point": entry}


ADD = _humaneval("Toy/0", "add", "    return a + b\n",
                 "def check(candidate):\n    assert candidate(1, 2) == 3\n")
MUL = _humaneval("Toy/1", "mul", "    return a * b\n",
                 "def check(candidate):\n    assert candidate(2, 3) == 6\n")
# a record the builder chokes on: its test is not valid Python (as HumanEval-Rust's were to it)
NOT_PYTHON = _humaneval("Toy/2", "sub", "    return a - b\n",
                        "def check(candidate):\nassert candidate(3, 2) == 1\n")
# a CodeContests copy in the HumanEval schema: no tests, no references
NO_TESTS = {"task_id": "CodeContests/7", "prompt": "\"\"\"Read n and print n squared.\"\"\"\n",
            "canonical_solution": "", "test": "", "entry_point": "main"}
NO_CHECK = _humaneval("Toy/3", "div", "    return a / b\n",
                      "def test_div():\n    assert div(4, 2) == 2\n")  # pytest style: no check()


def write_jsonl(path: Path, records: list[dict[str, Any]], extra_lines: tuple[str, ...] = ()) -> Path:
    lines = [json.dumps(r) for r in records] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_good_records_load_and_bad_ones_are_reported_with_index_and_reason(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "mixed.jsonl", [ADD, NOT_PYTHON, MUL, NO_TESTS, NO_CHECK])
    with pytest.warns(UserWarning, match=r"3 records skipped: #1 .*#3 .*#4 "):
        problems = load_dataset(path)
    assert [p.problem_id for p in problems] == ["Toy/0", "Toy/1"]
    assert [s.index for s in problems.skipped] == [1, 3, 4]
    reasons = [s.reason for s in problems.skipped]
    assert "does not compile" in reasons[0] and "IndentationError" in reasons[0]
    assert "no runnable tests (its 'test' is empty)" in reasons[1] and "check(candidate)" in reasons[1]
    assert "no runnable tests (its check source defines no check(candidate))" in reasons[2]
    assert problems.summary().startswith("3 records skipped: #1 ")


def test_strict_stops_at_the_first_bad_record(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "mixed.jsonl", [ADD, NOT_PYTHON, MUL, NO_TESTS])
    with pytest.raises(LoaderError, match=r"mixed\.jsonl record 1: .*does not compile"):
        load_dataset(path, strict=True)
    assert len(load_dataset(write_jsonl(tmp_path / "good.jsonl", [ADD, MUL]), strict=True)) == 2


def test_a_record_with_no_tests_is_refused_at_load_time_not_at_judging(tmp_path: Path) -> None:
    """At HEAD this loaded, then every candidate got ``KeyError: 'check'`` from the sandbox."""
    with pytest.raises(LoaderError, match=r"record 0: no runnable tests.*'test' defining "
                                          r"check\(candidate\) and an 'entry_point'"):
        load_dataset(write_jsonl(tmp_path / "cc.jsonl", [NO_TESTS]))
    with pytest.raises(LoaderError, match="no runnable tests"):
        problems_from_records([NO_TESTS], strict=True)


def test_no_record_loading_is_an_error_naming_the_first_reasons(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "bad.jsonl", [NOT_PYTHON, NO_TESTS, NO_CHECK, NO_TESTS, NO_TESTS])
    with pytest.raises(LoaderError, match=r"no record of .*bad\.jsonl could be loaded \(5 records\): "
                                          r"record 0: .*does not compile.*; "
                                          r"record 1: .*no runnable tests.*; and 2 more"):
        load_dataset(path)


def test_a_line_that_is_not_json_is_one_bad_record(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "lines.jsonl", [ADD], extra_lines=('{"task_id": ', json.dumps(MUL)))
    with pytest.warns(UserWarning, match="1 records skipped"):
        problems = load_dataset(path)
    assert [p.problem_id for p in problems] == ["Toy/0", "Toy/1"]
    (skipped,) = problems.skipped
    assert skipped.index == 1 and "lines.jsonl:2: not valid JSON" in skipped.reason
    with pytest.raises(LoaderError, match=r"lines\.jsonl:2: not valid JSON"):
        load_dataset(path, strict=True)


def test_limit_counts_problems_loaded_not_records_read(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "mixed.jsonl", [NOT_PYTHON, ADD, NO_TESTS, MUL])
    with pytest.warns(UserWarning, match="1 records skipped: #0 "):
        first = load_dataset(path, limit=1)
    assert [p.problem_id for p in first] == ["Toy/0"]
    assert load_dataset(path, limit=0) == []


def test_loaded_problems_judge(tmp_path: Path, sandbox: Sandbox) -> None:
    with pytest.warns(UserWarning):
        problems = load_dataset(write_jsonl(tmp_path / "mixed.jsonl", [ADD, NO_TESTS, MUL]))
    results = sandbox.run_many([(p.references[0].code, p.tests) for p in problems])
    assert [r.status.value for r in results] == ["passed", "passed"]


def test_bench_prints_the_skipped_records_and_strict_data_stops(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    data = write_jsonl(tmp_path / "mixed.jsonl", [ADD, NOT_PYTHON])
    solutions = tmp_path / "solutions.jsonl"
    solutions.write_text(json.dumps({"problem_id": "Toy/0", "code": ADD["prompt"] + ADD["canonical_solution"],
                                     "sample": 0}) + "\n", encoding="utf-8")
    assert main(["bench", "--dataset", str(data), "--solutions", str(solutions), "--out",
                 str(tmp_path / "strict"), "--strict-data"]) == 2
    assert "record 1: " in capsys.readouterr().err
    assert main(["bench", "--dataset", str(data), "--solutions", str(solutions), "--out",
                 str(tmp_path / "out"), "--repeats", "1"]) == 0
    err = capsys.readouterr().err
    assert "1 records skipped: #1 " in err and "does not compile" in err


def _shared(name: str) -> Path:
    path = SHARED_DATA / name
    if not path.is_file():
        pytest.skip(f"../shared/data is absent: {name} is the real file this test reads")
    return path


def test_humaneval_rust_records_do_not_sink_the_file() -> None:
    """At HEAD the whole file stopped at its first record: 'unexpected indent'."""
    records = [json.loads(line) for line in _shared("HumanEval_rust.jsonl").read_text().splitlines()
               if line.strip()]
    assert len(records) == 180
    loaded = problems_from_records([*records, ADD], where="HumanEval_rust.jsonl")
    assert loaded[-1].problem_id == "Toy/0"  # the Python record after them loads
    # with a Rust HumanEval loader registered the records it reads are Rust problems; every other
    # record is reported on its own (index and reason), none stops the file
    assert {p.language for p in loaded[:-1]} <= {"rust"}
    assert len(loaded) - 1 + len(loaded.skipped) == 180
    assert all(0 <= s.index < 180 and s.reason for s in loaded.skipped)


@pytest.mark.parametrize("enabled", [True, False])
def test_loading_leaves_garbage_collection_as_it_found_it(tmp_path: Path, enabled: bool) -> None:
    """Collection pauses while a dataset is built (millions of long-lived objects), and resumes
    after: on a bad record that stops a strict load as after a good load; off stays off."""
    path = write_jsonl(tmp_path / "toy.jsonl", [ADD, NOT_PYTHON])
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        assert len(load_dataset(path, strict=False)) == 1
        assert gc.isenabled() is enabled
        with pytest.raises(LoaderError):
            load_dataset(path, strict=True)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
