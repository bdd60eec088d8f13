"""HumanEval+ / MBPP+ in the EvalPlus release format, judged by EvalPlus's protocol."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rewardkit.benchmarks.loaders import detect_schema, load_dataset
from rewardkit.benchmarks.loaders.common import read_records
from rewardkit.benchmarks.loaders.evalplus import LIMITS, base_only, evalplus_problem
from rewardkit.sandbox import Sandbox, Status
from rewardkit.sandbox.judge import evalplus_matches

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
HUMANEVAL_PLUS = SHARED_DATA / "HumanEvalPlus.jsonl.gz"

ADD = {  # base inputs are small; the plus input is where a wrong solution shows
    "task_id": "Toy/0", "entry_point": "add", "atol": 0,
    "prompt": "def add(a: int, b: int) -> int:\n    \"\"\"a plus b\"\"\"\n",
    "canonical_solution": "    return a + b\n",
    "contract": '\n    assert a >= 0 and b >= 0, "invalid inputs" # $_CONTRACT_$\n',
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
    "base_input": [[1, 2], [3, 4]], "plus_input": [[1000, 5], [-1, 1]],
}
THIRD = {  # a float problem with its own tolerance
    "task_id": "Toy/1", "entry_point": "third", "atol": 1e-3,
    "prompt": "def third(x: float) -> float:\n    \"\"\"x / 3\"\"\"\n",
    "canonical_solution": "    return x / 3\n", "contract": "",
    "base_input": [[1.0], [2.0]], "plus_input": [[10.0]],
}


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("REWARDKIT_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=2, limits=LIMITS) as sb:
        yield sb


def release_file(folder: Path, *records: dict[str, Any]) -> Path:
    path = folder / "ToyPlus.jsonl.gz"
    with gzip.open(path, "wt") as out:
        out.writelines(json.dumps(record) + "\n" for record in records)
    return path


def test_release_records_are_evalplus_not_humaneval(tmp_path: Path) -> None:
    assert detect_schema(ADD) == "evalplus"  # it has HumanEval's keys too
    mini = {k: v for k, v in ADD.items() if k != "test"}
    assert detect_schema(mini) == "evalplus"
    problems = load_dataset(release_file(tmp_path, mini, THIRD))
    assert [p.problem_id for p in problems] == ["Toy/0", "Toy/1"]


def test_expected_outputs_come_from_the_canonical_solution(tmp_path: Path, cache: Path) -> None:
    add = load_dataset(release_file(tmp_path, ADD))[0]
    assert add.tests.mode == "call" and add.tests.entry_point == "add"
    assert [(c.args, c.expected) for c in add.tests.cases] == [
        ((1, 2), 3), ((3, 4), 7), ((1000, 5), 1005), ((-1, 1), 0)]
    assert add.tests.extra["base_cases"] == 2
    assert len(list(cache.glob("evalplus/*.json"))) == 1  # computed once, kept
    assert load_dataset(release_file(tmp_path, ADD))[0].tests.cases == add.tests.cases


def test_the_contract_is_not_checked_unless_asked(tmp_path: Path) -> None:
    # EvalPlus's evaluator never runs the contract; the generators' rule leaves out (-1, 1)
    assert len(evalplus_problem(ADD).tests.cases) == 4
    strict = evalplus_problem(ADD, contract=True)
    assert [c.args for c in strict.tests.cases] == [(1, 2), (3, 4), (1000, 5)]
    assert strict.extra["skipped_inputs"][0]["input"] == "plus[1]"


def test_floats_compare_within_the_problems_atol(sandbox: Sandbox) -> None:
    third = evalplus_problem(THIRD)
    assert third.tests.extra["atol"] == 1e-3
    close = THIRD["prompt"] + "    return x / 3 + 5e-4\n"
    far = THIRD["prompt"] + "    return x / 3 + 5e-3\n"
    assert sandbox.run(close, third.tests).status == Status.PASSED
    assert sandbox.run(far, third.tests).status == Status.WRONG_ANSWER


def test_a_wrong_solution_fails_on_a_plus_input_the_base_inputs_miss(sandbox: Sandbox) -> None:
    add = evalplus_problem(ADD)
    wrong = ADD["prompt"] + "    return a + b if a < 100 else 0\n"
    assert sandbox.run(wrong, base_only(add)).status == Status.PASSED
    result = sandbox.run(wrong, add.tests)
    assert result.status == Status.WRONG_ANSWER and result.failed_case == 2
    assert sandbox.run(add.references[0].code, add.tests).status == Status.PASSED


def test_evalplus_comparison_rules() -> None:
    assert evalplus_matches(3, 3, 0) and not evalplus_matches([1, 2], (1, 2), 0)  # exact Python ==
    assert evalplus_matches(1.0, 1.0 + 5e-7, 1e-6) and not evalplus_matches(1.0, 1.0 + 5e-6, 1e-6)
    assert evalplus_matches(1.0, 1, 0) and not evalplus_matches(1.0000005, 1, 1e-6)  # allclose: one type
    assert not evalplus_matches([1.0, 2.0], [1.0], 1e-6) and not evalplus_matches("a", "b", 1e-6)
    assert evalplus_matches([3, 1], [1, 3], 0, oracle="set_equal")
    assert evalplus_matches(True, "a match", 0, oracle="not_none")
    assert evalplus_matches(None, 2.0, 1e-4, args=[[-2, 1]], oracle="poly_root")  # -2 + x = 0
    assert not evalplus_matches(None, 2.1, 1e-4, args=[[-2, 1]], oracle="poly_root")
    with pytest.raises(ValueError, match="unknown EvalPlus oracle"):
        evalplus_matches(1, 1, 0, oracle="nope")


def test_the_atol_becomes_1e6_from_the_first_float_output_as_evalplus_does() -> None:
    mixed = {**THIRD, "task_id": "Toy/2", "atol": 0, "entry_point": "half",
             "prompt": "def half(x):\n", "canonical_solution": "    return x // 2 if x > 5 else x / 2\n",
             "base_input": [[10], [1], [10]], "plus_input": [[12]]}
    assert evalplus_problem(mixed).tests.extra["atol"] == [0, 1e-6, 1e-6, 0]


def real_records() -> dict[str, dict[str, Any]]:
    if not HUMANEVAL_PLUS.is_file():
        pytest.skip(f"../shared/data is absent: no {HUMANEVAL_PLUS.name} to load")
    return {r["task_id"]: r for r in read_records(HUMANEVAL_PLUS)}


def test_the_real_humaneval_plus_file_is_read_with_its_plus_inputs() -> None:
    records = real_records()
    assert len(records) == 164
    assert all(detect_schema(r) == "evalplus" for r in records.values())
    assert sum(len(r["plus_input"]) for r in records.values()) == 122_683


def test_real_problems_canonical_pass_and_a_plausible_bug_fails_on_plus_only(sandbox: Sandbox) -> None:
    records = real_records()
    problems = [evalplus_problem(records[f"HumanEval/{n}"]) for n in (0, 2, 4, 32, 53)]
    for problem in problems:
        assert len(problem.tests.cases) > problem.tests.extra["base_cases"] > 0
    results = sandbox.run_many([(p.references[0].code, p.tests) for p in problems])
    assert [r.status for r in results] == [Status.PASSED] * len(problems)
    # `<=` for `<`: HumanEval's own inputs never put two numbers exactly `threshold` apart
    wrong = records["HumanEval/0"]["prompt"] + (
        "    s = sorted(numbers)\n    return any(b - a <= threshold for a, b in zip(s, s[1:]))\n")
    assert sandbox.run(wrong, base_only(problems[0])).status == Status.PASSED
    result = sandbox.run(wrong, problems[0].tests)
    assert result.status == Status.WRONG_ANSWER
    assert result.failed_case is not None and result.failed_case >= problems[0].tests.extra["base_cases"]
