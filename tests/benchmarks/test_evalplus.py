"""HumanEval+ / MBPP+ in the EvalPlus release format, judged by EvalPlus's protocol."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rewardkit.benchmarks.loaders import SkippedRecords, detect_schema, load_dataset
from rewardkit.benchmarks.loaders import evalplus as evalplus_loader
from rewardkit.benchmarks.loaders.common import read_records
from rewardkit.benchmarks.loaders.evalplus import LIMITS, base_only, evalplus_problem
from rewardkit.sandbox import Sandbox, Status
from rewardkit.sandbox.evalplus_match import evalplus_matches

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
    assert len(list(cache.glob("evalplus/*.marshal"))) == 1  # computed once, kept
    assert load_dataset(release_file(tmp_path, ADD))[0].tests.cases == add.tests.cases


def test_a_file_computes_its_expected_outputs_in_one_batch(tmp_path: Path, cache: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    references = evalplus_loader._sandbox()
    batches: list[int] = []
    run_many = references.run_many
    monkeypatch.setattr(references, "run_many",
                        lambda jobs, **kw: batches.append(len(jobs)) or run_many(jobs, **kw))
    broken = {**THIRD, "task_id": "Toy/9", "canonical_solution": "    return x / (\n"}  # does not compile
    with pytest.warns(SkippedRecords, match="#1 its reference solution does not run"):
        problems = load_dataset(release_file(tmp_path, ADD, broken, THIRD))
    assert [p.problem_id for p in problems] == ["Toy/0", "Toy/1"]
    assert batches[0] == 3  # every record's reference in one batch
    assert batches[1:] == [1]  # the broken one is tried once more on its own, to report it
    assert len(list(cache.glob("evalplus/*.marshal"))) == 2


KINDS = {  # a reference returning every kind of plain value, one per input
    "task_id": "Toy/2", "entry_point": "kind", "atol": 0,
    "prompt": "def kind(i: int):\n",
    "canonical_solution": ("    return [(1, [2.5, -0.0]), {3, frozenset({4})}, {'k': b'\\x00'}, 7 ** 3000,\n"
                           "            1 + 2j, None, True, float('inf')][i]\n"),
    "contract": "", "base_input": [[i] for i in range(8)], "plus_input": [],
}


def test_expected_outputs_come_back_from_the_cache_exactly(tmp_path: Path, cache: Path) -> None:
    computed = load_dataset(release_file(tmp_path, KINDS))[0].tests.cases
    (kept,) = cache.glob("evalplus/*.marshal")
    again = load_dataset(release_file(tmp_path, KINDS))[0].tests.cases
    assert [(type(c.expected), repr(c.expected)) for c in again] == \
        [(type(c.expected), repr(c.expected)) for c in computed]
    assert computed[3].expected == 7 ** 3000 and repr(computed[0].expected) == "(1, [2.5, -0.0])"
    kept.write_bytes(b"not marshal data")  # a damaged cache is computed again, and mended
    assert load_dataset(release_file(tmp_path, KINDS))[0].tests.cases == computed
    assert kept.read_bytes() != b"not marshal data"


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
    assert evalplus_matches(30, 0, 0, oracle="or_zero") and not evalplus_matches(30, 1, 0, oracle="or_zero")
    assert evalplus_matches(False, None, 0, oracle="any_value")
    assert evalplus_matches(4, 9, 0, args=[9, 55], oracle="digit_distance")  # "09" against "55"
    assert not evalplus_matches(4, 8, 0, args=[9, 55], oracle="digit_distance")
    with pytest.raises(ValueError, match="unknown EvalPlus oracle"):
        evalplus_matches(1, 1, 0, oracle="nope")


def mbpp_record(number: int, entry: str, args: str, canonical: str,
                inputs: list[list[Any]]) -> dict[str, Any]:
    return {"task_id": f"Mbpp/{number}", "entry_point": entry, "atol": 0, "contract": "",
            "prompt": "", "canonical_solution": f"def {entry}({args}):\n    {canonical}\n",
            "base_input": inputs, "plus_input": []}


# MBPP+ tasks EvalPlus judges with a special oracle: (record, a body the oracle accepts though it differs
# from the reference's output, a body it rejects)
MBPP_ORACLE_TASKS = {
    "are_equivalent": (mbpp_record(164, "are_equivalent", "a, b", "return a == b", [[1, 2], [3, 3]]),
                       "return 'anything'", "raise ValueError('no')"),
    "sum_div": (mbpp_record(295, "sum_div", "n", "return sum(d for d in range(1, n) if n % d == 0)",
                            [[8], [12]]), "return 0", "return 1"),
    "surface_Area": (mbpp_record(581, "surface_Area", "b, s", "return 2 * b * s + pow(b, 2)",
                                 [[3, 4], [10, 20]]),
                     "return round(b * b + 2 * b * (b * b / 4 + s * s) ** 0.5)", "return 2 * b * s"),
    "digit_distance_nums": (mbpp_record(558, "digit_distance_nums", "a, b",
                                        "return sum(abs(int(x) - int(y)) for x, y in zip(str(a), str(b)))",
                                        [[123, 45], [1, 2]]),
                            "x, y = str(a).zfill(9), str(b).zfill(9)\n"
                            "    return sum(abs(int(p) - int(q)) for p, q in zip(x, y))", "return -1"),
}


@pytest.mark.parametrize("entry", sorted(MBPP_ORACLE_TASKS))
def test_mbpp_plus_special_oracles_judge_as_evalplus_does(entry: str, sandbox: Sandbox) -> None:
    record, accepted, rejected = MBPP_ORACLE_TASKS[entry]
    problem = evalplus_problem(record)
    reference = sandbox.run(problem.references[0].code, problem.tests)
    assert reference.passed, reference.feedback
    head = f"def {entry}({record['canonical_solution'].split('(', 1)[1].split(')', 1)[0]}):\n    "
    differs = sandbox.run(head + accepted + "\n", problem.tests)
    assert differs.passed, differs.feedback
    assert not sandbox.run(head + rejected + "\n", problem.tests).passed


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
