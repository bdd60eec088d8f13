"""APPS judged as APPS's own harness judges it (hendrycks/apps eval/testing_util.py run_test).

The real file (five APPS problems, 101 reference solutions) is in
``../shared/data`` when present; the small records here are written in the
APPS schema for what that file may not show.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from rewardkit.benchmarks.loaders import apps, load_dataset
from rewardkit.sandbox import Sandbox, Status

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
APPS_FILE = SHARED_DATA / "apps_train_coderl5.jsonl"


def record(problem_id: int, solutions: list[str], io: dict[str, Any], starter: str = "") -> dict[str, Any]:
    return {"problem_id": problem_id, "question": "q", "solutions": json.dumps(solutions),
            "input_output": json.dumps(io), "difficulty": "interview", "url": "", "starter_code": starter}


def write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "apps.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_all_101_real_references_pass(sandbox: Sandbox) -> None:
    if not APPS_FILE.exists():
        pytest.skip(f"../shared/data is absent: {APPS_FILE} holds the real APPS problems")
    problems = load_dataset(APPS_FILE)
    pairs = [(p, ref) for p in problems for ref in p.references]
    assert len(problems) == 5 and len(pairs) == 101
    results = sandbox.run_many([(ref.code, p.tests) for p, ref in pairs])
    failed = [(p.problem_id, ref.label, r.status, r.feedback[:300])
              for (p, ref), r in zip(pairs, results, strict=True) if not r.passed]
    assert failed == []


STDIN_RETURN = """n = int(input())
if n == 0:
    print("zero")
    return
total = 0
def add(x):
    global total
    total += x
for i in range(n):
    add(i)
print(total)
"""


def test_stdin_program_with_a_top_level_return(tmp_path: Path, sandbox: Sandbox) -> None:
    io = {"inputs": ["0\n", "4\n"], "outputs": ["zero\n", "6\n"]}
    (problem,) = load_dataset(write(tmp_path, [record(1, [STDIN_RETURN], io)]))
    assert problem.tests.extra["program"] == "apps"
    assert sandbox.run(STDIN_RETURN, problem.tests).passed
    # as APPS's harness: its imports need no import, SystemExit keeps the output, __main__ runs
    assert sandbox.run("n = int(input())\nprint(n * (n - 1) // 2 if n else 'zero')\nexit(3)\n",
                       problem.tests).passed
    assert sandbox.run("from math import *\ndef main():\n    n = int(input())\n"
                       "    print(floor(n * (n - 1) / 2) if n else 'zero')\n"
                       "if __name__ == '__main__':\n    main()\n", problem.tests).passed
    assert sandbox.run("n = int(stdin.readline())\nprint(sum(accumulate([0] * 0)) + gcd(n, 0) * (n - 1) // 2"
                       " if n else 'zero')\n", problem.tests).passed
    wrong = sandbox.run("print(6)\nreturn\n", problem.tests)
    assert wrong.status == Status.WRONG_ANSWER and wrong.failed_case == 0
    broken = sandbox.run("n = int(input())\nif n:\n    return 1 +\n", problem.tests)
    assert broken.status == Status.COMPILE_ERROR and "SyntaxError" in broken.feedback
    crash = sandbox.run("n = int(input())\nreturn [][n]\n", problem.tests)
    assert crash.status == Status.RUNTIME_ERROR and "line 2, in <module>" in crash.feedback
    assert "return [][n]" in crash.feedback


def test_float_output_compared_as_apps_does(tmp_path: Path, sandbox: Sandbox) -> None:
    io = {"inputs": [["3"]], "outputs": [["1.5000000001", "3"]]}
    (problem,) = load_dataset(write(tmp_path, [record(2, [], io)]))
    assert sandbox.run("n = int(input())\nprint(n / 2)\nprint(n)\n", problem.tests).passed
    assert sandbox.run("n = int(input())\nprint(n / 2 + 0.01)\nprint(n)\n", problem.tests).status \
        == Status.WRONG_ANSWER


def test_call_based_problem(tmp_path: Path, sandbox: Sandbox) -> None:
    io = {"fn_name": "pairs", "inputs": [[3], [1]], "outputs": [[[[0, 1], [1, 2]]], [[]]]}
    (problem,) = load_dataset(write(tmp_path, [record(3, [], io, "def pairs(n):\n\t")]))
    assert problem.tests.extra["compare"] == "apps"
    assert sandbox.run("def pairs(n):\n    return [(i, i + 1) for i in range(n - 1)]\n", problem.tests).passed
    assert sandbox.run("def pairs(n):\n    return [[i, i + 1] for i in range(n)]\n", problem.tests).status \
        == Status.WRONG_ANSWER
    one = {"fn_name": "first", "inputs": [[[5, 6]]], "outputs": [[5]]}
    starter = "class Solution:\n    def first(self, xs):\n"
    (problem,) = load_dataset(write(tmp_path, [record(4, [], one, starter)]))
    assert sandbox.run(starter + "        return xs[0]\n", problem.tests).passed
    assert sandbox.run(starter + "        return [xs[0]]\n", problem.tests).passed  # APPS: == [5] too


@pytest.mark.parametrize(("expected", "actual", "same"), [
    ("1 2\n3\n", "1 2  \n3", True),
    ("3\n1 2\n", "2 1\n3\n", True),  # lines as sets of tokens, in any order (APPS's last checks)
    ("0.3333333\n", "0.33333333333\n", True),
    ("0.1234\n", "0.1231\n", True),  # numbers rounded to 3 places (APPS's last check)
    ("0.1234\n", "0.1244\n", False),
    ("1 2\n3\n", "1  2 3\n", False),  # APPS compares line by line: one line is not two
    ("1 2\n", "1 3\n", False),
    ("a", "0.0", False),
])
def test_evaluator_is_apps_cascade(expected: str, actual: str, same: bool) -> None:
    namespace: dict[str, Any] = {}
    exec(apps.EVALUATOR, namespace)  # the suite's own trusted source
    assert namespace["evaluate"](expected, actual) is same
