"""A Venus record's ``test_case_generator`` builds its cases, run in the sandbox (the Afterburner paper's
protocol), validated against the references.

The records are written here in the Venus_Python schema (Nim Game, the paper's Figure 7 example);
the generators use the two forms the module documents: ``generate_test_cases`` and JITT's
``TestCaseGenerator`` class.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from rewardkit.benchmarks.loaders import CaseGenerator, LoaderError, load_dataset, runnable_code
from rewardkit.benchmarks.loaders.venus import venus_problem
from rewardkit.sandbox import Sandbox

RUNNER = """==Code Submission==

n = int(input())
print("true" if Solution().canWinNim(n) else "false")
"""
EVALUATOR = "def evaluate(expected, actual):\n    return expected.strip() == actual.strip()\n"
RIGHT = "class Solution:\n    def canWinNim(self, n: int) -> bool:\n        return n % 4 != 0\n"
WRONG = "class Solution:\n    def canWinNim(self, n: int) -> bool:\n        return True\n"
FIGURE_7 = """import random

def sample_solution(n):
    return "true" if n % 4 != 0 else "false"

def generate_test_cases(num_cases):
    fixed = [1, 2, 3, 4, 5, 8, 16, 2147483647]
    values = fixed + [random.randint(1, 2**31 - 1) for _ in range(max(0, num_cases - len(fixed)))]
    return [{"input": str(v), "output": sample_solution(v)} for v in values]
"""
JITT = """import random

class TestCaseGenerator:
    def generate_test_input(self):
        return random.randint(1, 1000)

    def generate_expected_output(self, n):
        return Solution().canWinNim(n)  # the reference solution, defined before this code runs

    def serialize_input(self, n):
        return str(n)

    def deserialize_input(self, text):
        return int(text)

    def serialize_output(self, won):
        return "true" if won else "false"

    def deserialize_output(self, text):
        return text == "true"
"""


def record(generator: str, solutions: list[str] | None = None, cases: list[dict[str, str]] | None = None,
           problem_id: int = 292) -> dict[str, Any]:
    return {"problem_id": problem_id, "title": "nim-game", "question_content": "Can you win Nim?",
            "difficulty": "Easy", "tags": ["math"], "code_prompt": RIGHT, "test_case_generator": generator,
            "test_case_evaluator": EVALUATOR, "test_case_runners": RUNNER,
            "test_cases": json.dumps(cases or []),
            "solutions": [{"code": c, "passed": True} for c in ([RIGHT] if solutions is None else solutions)]}


@pytest.fixture
def cases(sandbox: Sandbox) -> CaseGenerator:
    return CaseGenerator(sandbox=sandbox)


def test_the_generator_builds_the_cases_and_they_judge(tmp_path: Path, sandbox: Sandbox) -> None:
    path = tmp_path / "venus.jsonl"
    path.write_text(json.dumps(record(FIGURE_7)) + "\n", encoding="utf-8")
    (problem,) = load_dataset(path, case_generator=CaseGenerator(sandbox=sandbox))
    inputs = [c.input for c in problem.tests.cases]
    assert len(inputs) == 16 and inputs[:8] == ["1", "2", "3", "4", "5", "8", "16", "2147483647"]
    assert [c.output for c in problem.tests.cases[:4]] == ["true", "true", "true", "false"]
    right, wrong = (sandbox.run(runnable_code(problem, code), problem.tests) for code in (RIGHT, WRONG))
    assert right.passed and wrong.status.value == "wrong_answer"
    again = venus_problem(record(FIGURE_7), case_generator=CaseGenerator(sandbox=sandbox))
    assert [c.input for c in again.tests.cases] == inputs  # seeded: the same cases every load
    reseeded = venus_problem(record(FIGURE_7), case_generator=CaseGenerator(seed=1, sandbox=sandbox))
    assert [c.input for c in reseeded.tests.cases][8:] != inputs[8:]


def test_the_generator_runs_in_the_sandbox_not_in_the_loader(cases: CaseGenerator) -> None:
    spy = "import os\n\ndef generate_test_cases():\n    return [{'input': '1', 'output': str(os.getpid())}]\n"
    problem = venus_problem(record(spy, solutions=[]), case_generator=cases)
    (case,) = problem.tests.cases
    assert case.output.isdigit() and int(case.output) != os.getpid()


def test_jitt_test_case_generator_class(cases: CaseGenerator) -> None:
    problem = venus_problem(record(JITT), case_generator=cases)
    assert len(problem.tests.cases) == 16
    assert all(c.output == ("true" if int(c.input) % 4 else "false") for c in problem.tests.cases)


def test_generated_cases_join_the_stored_ones_and_count_zero_keeps_only_those(cases: CaseGenerator,
                                                                               sandbox: Sandbox) -> None:
    stored = [{"input": "4", "output": "false"}, {"input": "7", "output": "true"}]
    problem = venus_problem(record(FIGURE_7, cases=stored), case_generator=cases)
    inputs = [c.input for c in problem.tests.cases]
    assert inputs[:2] == ["4", "7"] and inputs.count("4") == 1 and len(inputs) == 17
    only = venus_problem(record(FIGURE_7, cases=stored),
                         case_generator=CaseGenerator(count=0, sandbox=sandbox))
    assert [c.input for c in only.tests.cases] == ["4", "7"]
    broken = "def generate_test_cases(n):\n    raise RuntimeError('no cases today')\n"
    kept = venus_problem(record(broken, cases=stored), case_generator=cases)
    assert [c.input for c in kept.tests.cases] == ["4", "7"]
    assert "no cases today" in kept.extra["test_case_generator_error"]


def test_a_case_the_references_fail_is_dropped_and_a_wrong_generator_is_reported(
        cases: CaseGenerator) -> None:
    one_wrong = FIGURE_7.replace('return [{"input"', 'return [{"input": "12", "output": "true"}] + [{"input"')
    problem = venus_problem(record(one_wrong), case_generator=cases)
    assert "12" not in [c.input for c in problem.tests.cases] and len(problem.tests.cases) == 16
    inverted = FIGURE_7.replace('"true" if n % 4 != 0 else "false"', '"false" if n % 4 != 0 else "true"')
    with pytest.raises(LoaderError, match="reference #0 fails more than a quarter of the cases"):
        venus_problem(record(inverted), case_generator=cases)


def test_a_broken_generator_is_one_skipped_record(tmp_path: Path, sandbox: Sandbox) -> None:
    path = tmp_path / "venus.jsonl"
    broken = "def generate_test_cases(n):\n    raise RuntimeError('no cases today')\n"
    nothing = "x = 1\n"
    numbers = "def generate_test_cases(n):\n    return [{'input': 1, 'output': True}]\n"
    path.write_text("".join(json.dumps(record(g, problem_id=i)) + "\n"
                            for i, g in enumerate([FIGURE_7, broken, nothing, numbers])), encoding="utf-8")
    with pytest.warns(UserWarning, match="3 records skipped"):
        problems = load_dataset(path, case_generator=CaseGenerator(sandbox=sandbox))
    assert [p.problem_id for p in problems] == ["0"]
    reasons = {s.index: s.reason for s in problems.skipped}
    assert "test_case_generator failed" in reasons[1] and "no cases today" in reasons[1]
    assert "defines none of generate_test_cases()" in reasons[2]
    assert "input and output must be text" in reasons[3]
