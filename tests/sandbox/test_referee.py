"""``Sandbox(trust_suites=False)``: a suite's own code runs in a sandboxed referee, on every backend.

The referee judges as the trusted path does (right, wrong, raising and broken checks and
evaluators), its code cannot reach the host or this process, the solution and the referee cannot
reach each other, and the referee's own time is not charged to the solution.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite

QUICK = Limits(time_s=2, memory_mb=512)
ADD = "def add(a, b):\n    return a + b\n"
DOUBLE = "print(int(input()) * 2)\n"
BACKENDS = ["local", "docker", "ray"]


@pytest.fixture(scope="module", params=BACKENDS)
def referee_sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    backend = str(request.param)
    if backend == "docker" and os.environ.get("REWARDKIT_SKIP_DOCKER") == "1":
        pytest.skip("REWARDKIT_SKIP_DOCKER=1: docker backend tests skipped on request")
    if backend == "ray":
        request.getfixturevalue("ray_local").ensure()
    with Sandbox(backend=backend, workers=1, limits=QUICK, trust_suites=False) as sandbox:
        yield sandbox


def script(check: str, definitions: str | None = None) -> TestSuite:
    data: dict[str, Any] = {"mode": "script", "entry_point": "add", "check": check}
    if definitions is not None:
        data["definitions"] = definitions
    return TestSuite.from_dict(data)


def with_evaluator(source: str) -> TestSuite:
    cases = [{"input": "2\n", "output": "4\n"}, {"input": "5\n", "output": "10\n"}]
    return TestSuite.from_dict({"mode": "stdio", "evaluator": source, "cases": cases})


CHECK = "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(a=2, b=5) == 7\n"
EVALUATE = "def evaluate(expected, actual):\n    return expected.split() == actual.split()\n"


def test_right_and_wrong_answers_are_judged_as_in_process(referee_sandbox: Sandbox) -> None:
    suite = script(CHECK, definitions="import math\n")
    assert referee_sandbox.run(ADD, suite).status == Status.PASSED
    wrong = referee_sandbox.run("def add(a, b):\n    return a - b\n", suite)
    assert wrong.status == Status.WRONG_ANSWER and wrong.feedback == "A check failed."
    raising = referee_sandbox.run("def add(a, b):\n    raise KeyError(a)\n", suite)
    assert raising.status == Status.RUNTIME_ERROR and "KeyError" in raising.feedback
    assert referee_sandbox.run(DOUBLE, with_evaluator(EVALUATE)).status == Status.PASSED
    assert referee_sandbox.run("print(4)", with_evaluator(EVALUATE)).status == Status.WRONG_ANSWER


HELPERS = ("def double(x):\n    return 2 * x\n"
           "def len(x):\n    return 0\n"
           "def poly(x):\n    return -1\n"
           "def add(a, b):\n    return double(a) // 2 + b\n")
# the check calls the solution's own helper by name, as in HumanEval's harness (MBPP's tests do);
# names the suite's code defines (poly) and builtins (len) stay the suite's
HELPER_CHECK = ("def check(candidate):\n    assert candidate(1, 2) == 3\n    assert double(4) == 8\n"
                "    assert len([1, 2]) == 2 and poly(3) == 9\n")


@pytest.mark.parametrize("trusted", [True, False])
def test_the_check_calls_the_solutions_helpers_by_name(trusted: bool) -> None:
    suite = script(HELPER_CHECK, definitions="def poly(x):\n    return x * x\n")
    with Sandbox(workers=1, limits=QUICK, trust_suites=trusted) as sandbox:
        assert sandbox.run(HELPERS, suite).status == Status.PASSED
        wrong = sandbox.run(HELPERS.replace("return 2 * x", "return 3 * x", 1), suite)
        assert wrong.status == Status.WRONG_ANSWER
        missing = sandbox.run(ADD, suite)
        assert missing.status == Status.WRONG_ANSWER and "NameError" in missing.feedback


def test_a_solution_that_dies_or_hangs_under_the_check(referee_sandbox: Sandbox) -> None:
    suite = script(CHECK)
    hung = referee_sandbox.run("def add(a, b):\n    while True:\n        pass\n", suite)
    assert hung.status == Status.TIMEOUT
    gone = referee_sandbox.run("import os\ndef add(a, b):\n    os._exit(0)\n", suite)
    assert gone.status == Status.RUNTIME_ERROR


@pytest.mark.parametrize(("check", "says"), [
    ("def check(candidate):\n    raise ValueError('broken suite')\n", "ValueError: broken suite"),
    ("def check(candidate):\n    while True:\n        pass\n", "the check did not finish"),
    ("def check(candidate):\n    candidate(lambda: 0)\n", "not plain data"),
    ("import os\ndef check(candidate):\n    os._exit(3)\n", "the check did not finish"),
    ("x = [0] * (10 ** 10)\ndef check(candidate):\n    pass\n", "MemoryError"),
])
def test_a_broken_check_fails_the_case_not_the_infrastructure(referee_sandbox: Sandbox, check: str,
                                                              says: str) -> None:
    started = time.monotonic()
    result = referee_sandbox.run(ADD, script(check))
    assert result.status == Status.WRONG_ANSWER, result
    assert says in result.feedback, result.feedback
    assert time.monotonic() - started < 30


def test_a_broken_evaluator_fails_the_case(referee_sandbox: Sandbox) -> None:
    for source in ("def evaluate(expected, actual):\n    raise RuntimeError\n",
                   "def evaluate(expected, actual):\n    while True:\n        pass\n",
                   "evaluate = 3\n",
                   "class Yes:\n    def __bool__(self):\n        raise RuntimeError\n"
                   "def evaluate(expected, actual):\n    return Yes()\n"):
        assert referee_sandbox.run(DOUBLE, with_evaluator(source)).status == Status.WRONG_ANSWER


def test_suite_code_cannot_reach_the_host(referee_sandbox: Sandbox, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RK_REFEREE_SECRET", "s3cret")
    key = tmp_path / "answer-key"
    key.write_text("42")
    marker = tmp_path / "written-by-the-check"
    check = ("import os\n"
             "def check(candidate):\n"
             f"    open({str(marker)!r}, 'w').write('x')\n"
             f"    assert open({str(key)!r}).read() == '42'\n"
             "    assert os.environ.get('RK_REFEREE_SECRET') == 's3cret'\n"
             "    assert candidate(1, 2) == 3\n")
    result = referee_sandbox.run(ADD, script(check))
    assert result.status == Status.WRONG_ANSWER, result
    assert not marker.exists()


def test_solution_and_referee_cannot_reach_each_other(referee_sandbox: Sandbox) -> None:
    """The solution leaves a note in its scratch and names itself in a global; the check looks
    for both (it sees only its own scratch and its own definitions)."""
    solution = ("import os\n"
                "open('/tmp/note-from-solution', 'w').write('pass me')\n"
                "SECRET_OF_SOLUTION = 1\n"
                "def add(a, b):\n    return a + b\n")
    check = ("import os\n"
             "def check(candidate):\n"
             "    assert candidate(1, 2) == 3\n"
             "    assert os.path.exists('/tmp/note-from-solution') or 'SECRET_OF_SOLUTION' in globals()\n")
    assert referee_sandbox.run(solution, script(check)).status == Status.WRONG_ANSWER


def test_the_referee_time_is_not_charged_to_the_solution(referee_sandbox: Sandbox) -> None:
    check = ("import time\n"
             "def check(candidate):\n"
             "    end = time.process_time() + 0.5\n"
             "    while time.process_time() < end:\n"
             "        pass\n"
             "    assert candidate(1, 2) == 3\n")
    result = referee_sandbox.run(ADD, script(check))
    assert result.status == Status.PASSED
    assert result.time_s < 0.25, result.time_s
