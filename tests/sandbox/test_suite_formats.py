"""verl / APPS ground truth and open-r1 verification_info read as test suites, run for real."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rewardkit import rewards
from rewardkit.rewards import Engine
from rewardkit.sandbox import Sandbox, Status, SuiteError, TestSuite

ADD_STDIO = "a, b = map(int, input().split())\nprint(a + b)\n"
# verl's stdio ground truth (prime_code / TACO), the second input as a list of lines
VERL_STDIO = {"inputs": ["1 2\n", ["40", ""]], "outputs": ["3\n", ["40"]]}
# verl's call-based ground truth: one JSON argument per line, list-wrapped JSON outputs
VERL_CALL = {"fn_name": "add", "inputs": ["1\n2", "[1, 2]\n[3]"], "outputs": ["[3]", "[[1, 2, 3]]"]}
ADD_CALL = "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize("given", [VERL_STDIO, json.dumps(VERL_STDIO)], ids=["dict", "json"])
def test_verl_stdio_ground_truth_is_a_stdio_suite(given: Any) -> None:
    # HEAD: SuiteError "stdio mode needs at least one case in 'cases'"
    suite = TestSuite.from_dict(given)
    assert suite.mode == "stdio" and [(c.input, c.output) for c in suite.cases] == \
        [("1 2\n", "3\n"), ("40\n", "40")]


def test_verl_call_ground_truth_is_a_call_suite() -> None:
    suite = TestSuite.from_dict(VERL_CALL)
    assert (suite.mode, suite.entry_point) == ("call", "add")
    assert [(c.args, c.expected) for c in suite.cases] == [((1, 2), 3), (([1, 2], [3]), [1, 2, 3])]
    apps_raw = TestSuite.from_dict({"fn_name": "f", "inputs": [[1, 2]], "outputs": [[3]]})
    assert apps_raw.cases[0].args == (1, 2) and apps_raw.cases[0].expected == 3


def test_verl_stdio_runs_with_verls_leniency(sandbox: Sandbox) -> None:
    suite = TestSuite.from_dict(VERL_STDIO)
    wrong = "a = input().split()\nprint(int(a[0]))\n"  # right on the second case only
    # verl strips each line and skips blank ones: leading spaces and blank lines pass
    lenient = "print()\nprint('  ', sum(map(int, input().split())))\n"
    floats = TestSuite.from_dict({"inputs": ["1\n"], "outputs": ["0.3333333\n"]})
    right, bad, spaced, close, far = sandbox.run_many([
        ("print(sum(map(int, input().split())))\n", suite),
        (wrong, suite), (lenient, suite),
        ("print(1 / 3)\n", floats), ("print(1 / 2)\n", floats)])
    assert right.status == Status.PASSED and right.tests_passed == 2, right.feedback
    assert bad.status == Status.WRONG_ANSWER and bad.tests_passed == 1
    assert spaced.passed, spaced.feedback
    assert close.passed and not far.passed


def test_verl_stdio_programs_run_as_prime_code_runs_them(sandbox: Sandbox) -> None:
    """prime_code runs a stdin program as the body of a function, as APPS's harness does: a
    top-level ``return`` ends it and ``exit()`` after the answer is no failure."""
    suite = TestSuite.from_dict(VERL_STDIO)
    early = "total = sum(map(int, input().split()))\nprint(total)\nif total:\n    return\nprint('never')\n"
    exits = "print(sum(map(int, input().split())))\nexit(0)\n"
    wrong = "print(0)\nreturn\n"
    ended, exited, bad = sandbox.run_many([(early, suite), (exits, suite), (wrong, suite)])
    assert ended.passed and exited.passed, (ended.feedback, exited.feedback)
    assert bad.status == Status.WRONG_ANSWER


def test_verl_call_runs_right_and_wrong(sandbox: Sandbox) -> None:
    suite = TestSuite.from_dict(json.dumps(VERL_CALL))
    right, wrong = sandbox.run_many([(ADD_CALL, suite),
                                     ("def add(a, b):\n    return a\n", suite)])
    assert right.status == Status.PASSED and right.tests_passed == 2, right.feedback
    assert wrong.status == Status.WRONG_ANSWER and wrong.tests_passed == 0


INFO = {"language": "python", "test_cases": [
    {"input": "1 2\n", "output": "3\n", "type": "stdin_stdout"},
    {"input": "5 5\n", "output": "10\n", "type": "stdin_stdout"}]}


def test_open_r1_verification_info_is_a_stdio_suite_with_its_language() -> None:
    from rewardkit.sandbox.formats import case_count, suite_language

    suite = TestSuite.from_dict(INFO)
    assert suite.mode == "stdio" and len(suite) == 2 and suite_language(suite.extra) == "python"
    assert case_count(INFO) == 2 and case_count(json.dumps(VERL_CALL)) == 2
    assert case_count({"mode": "stdio", "cases": [{}]}) == 1 and case_count("nope") is None


@pytest.mark.parametrize(("given", "message"), [
    ({"inputs": [], "outputs": []}, "at least one"),
    ({"inputs": ["1"], "outputs": []}, "1 inputs but 0 outputs"),
    ({"fn_name": "f", "inputs": ["not json"], "outputs": ["1"]}, "one JSON value per line"),
    ({"fn_name": "1x", "inputs": ["1"], "outputs": ["1"]}, "fn_name"),
    ({"inputs": ["1"], "outputs": ["1"], "assert_case": ["assert 1"]}, "assert_case"),
    ({"test_cases": [{"input": "", "output": "", "type": "function_call"}]}, "'function_call'"),
    ({"test_cases": []}, "non-empty"),
])
def test_foreign_shapes_that_cannot_be_used_say_why(given: dict[str, Any], message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        TestSuite.from_dict(given)


def test_engine_reads_verification_info_and_its_language(sandbox: Sandbox) -> None:
    """A row with verification_info and no tests is scored on it, in its language; an
    unsupported language is a compile error naming it, not a crash of the batch.  (Correctness
    only: the quality component judges Python rows alone.)"""
    cpp = ("#include <iostream>\nint main() { long a, b; std::cin >> a >> b; "
           "std::cout << a + b << std::endl; }\n")
    reward = rewards.pass_rate(engine=Engine(sandbox=sandbox))
    rows = [{"completion": f"```python\n{ADD_STDIO}```", "verification_info": INFO},
            {"completion": "```python\nprint(0)\n```", "verification_info": json.dumps(INFO)},
            {"completion": f"```cpp\n{cpp}```", "verification_info": INFO | {"language": "cpp"}},
            {"completion": "```fortran\nprint *, 3\n```",
             "verification_info": INFO | {"language": "fortran"}}]
    right, wrong, cpp_right, fortran = reward.score(rows)
    assert right.components["pass_rate"] == 1.0 and wrong.components["pass_rate"] == 0.0
    assert cpp_right.components["pass_rate"] == 1.0, cpp_right.info
    assert fortran.value is not None and fortran.components["pass_rate"] == 0.0
    assert "fortran" in json.dumps(fortran.info)
