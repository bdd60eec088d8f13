"""Close enough is not equal: a float near an exact answer does not pass for it.

A policy that cannot get an integer answer right can often get near it in
floating point (``n * n / 2`` for the count of pairs ``n * (n - 1) // 2``:
relative error ``1/n``), and a judge that compares every number within a
tolerance takes it.  Only a float expectation tolerates (call mode within
1e-6, verl's stdio within ``numpy.allclose``); an int expectation is met by
an equal int, a bool by a bool.  Each attack below returns or prints such a
near float and must fail; the control beside it (a float answer within the
tolerance of a float expectation) must still pass.
"""

from __future__ import annotations

import pytest

from rewardkit.sandbox import Sandbox, Status, TestSuite, values_equal
from rewardkit.sandbox.formats.verl import VERL_EVALUATOR

N = 10**7
PAIRS = N * (N - 1) // 2  # 49,999,995,000,000; n * n / 2 is 5e13, 1e-7 away relatively

NEAR_CALL = "def pairs(n):\n    return n * n / 2\n"
RIGHT_CALL = "def pairs(n):\n    return n * (n - 1) // 2\n"
NEAR_STDIO = "n = int(input())\nprint(n * n / 2)\n"


def _evaluate(expected: str, actual: str) -> bool:
    namespace: dict[str, object] = {}
    exec(VERL_EVALUATOR, namespace)  # the suite's own evaluator, as the judge runs it
    return bool(namespace["evaluate"](expected, actual))  # type: ignore[operator]


@pytest.mark.parametrize("suite", [
    {"mode": "call", "entry_point": "pairs", "cases": [{"args": [N], "expected": PAIRS}]},
    {"inputs": [str(N)], "outputs": [str(PAIRS)], "fn_name": "pairs"},  # verl call-based
], ids=["rewardkit-call", "verl-call"])
def test_a_near_float_is_not_an_int_answer(local_sandbox: Sandbox, suite: dict[str, object]) -> None:
    tests = TestSuite.from_dict(suite)
    result = local_sandbox.run(NEAR_CALL, tests)
    assert result.status == Status.WRONG_ANSWER, result.feedback
    assert local_sandbox.run(RIGHT_CALL, tests).passed


def test_a_printed_near_float_is_not_an_int_line(local_sandbox: Sandbox) -> None:
    tests = TestSuite.from_dict({"inputs": [f"{N}\n"], "outputs": [f"{PAIRS}\n"]})  # verl stdio
    result = local_sandbox.run(NEAR_STDIO, tests)
    assert result.status == Status.WRONG_ANSWER, result.feedback
    assert local_sandbox.run(f"input()\nprint({PAIRS})\n", tests).passed


@pytest.mark.parametrize(("expected", "printed"), [
    ("123", "123.0"), ("-5", "-5.00001"), ("7\n1000000000", "7\n1000001000.0"),
])
def test_verl_stdio_takes_no_float_for_an_integer_line(expected: str, printed: str) -> None:
    assert not _evaluate(expected, printed)


def test_float_expectations_still_tolerate() -> None:
    assert values_equal(0.3, 0.1 + 0.2) and values_equal(2.0, 2) and values_equal([0.5, 1], [0.5000001, 1])
    assert _evaluate("0.3\n2", "0.30000000000000004\n2") and _evaluate("2.5", "2.500001")
    assert not values_equal(PAIRS, float(PAIRS)) and not values_equal(3, 3.0)
    assert not values_equal(1, True) and not values_equal(True, 1) and not values_equal([1, 2], [1, 2.0])
    assert not values_equal(0.5, 10**400)  # past float's range: no error, no match
