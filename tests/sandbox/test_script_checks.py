"""Script checks (HumanEval style) judged call by call: the solution sees exactly the calls the
check makes, in its order, whether the check runs here or on a referee."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite

QUICK = Limits(time_s=2, memory_mb=512)
ADD = "def add(a, b):\n    return a + b\n"
RANDOM_LOOP = ("import random", "for _ in range(50):",
               "    a, b = random.randint(0, 99), random.randint(0, 99)",
               "    assert candidate(a, b) == a + b")


def check(*lines: str) -> str:
    return "def check(candidate):\n" + "".join(f"    {line}\n" for line in lines)


def script(source: str, definitions: str | None = None) -> TestSuite:
    return TestSuite.from_dict({"mode": "script", "entry_point": "add", "check": source,
                                "definitions": definitions})


@pytest.fixture(scope="module", params=[True, False], ids=["trusted", "referee"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    with Sandbox(workers=1, limits=QUICK, trust_suites=bool(request.param)) as sb:
        yield sb


def test_a_solution_with_state_answers_as_one_call_at_a_time(sandbox: Sandbox) -> None:
    counting = "seen = []\ndef add(a, b):\n    seen.append((a, b))\n    return len(seen) * 100 + a + b\n"
    suite = script(check("assert candidate(1, 1) == 102", "assert candidate(0, 0) == 200",
                         "for a in (5, 6):", "    assert candidate(a, 0) == (a - 2) * 100 + a"))
    assert sandbox.run(counting, suite).status == Status.PASSED


def test_a_check_that_steers_by_an_answer_gets_the_calls_it_makes(sandbox: Sandbox) -> None:
    counting = "seen = []\ndef add(a, b):\n    seen.append(a)\n    return len(seen)\n"
    steered = check("r = candidate(0, 0)", "if type(r) == int:", "    assert candidate(1, 0) == 2",
                    "else:", "    assert candidate(5, 0) == 2")
    assert sandbox.run(counting, script(steered)).status == Status.PASSED


def test_a_check_failing_early_never_makes_its_later_calls(sandbox: Sandbox) -> None:
    stalls = "def add(a, b):\n    while a == 2:\n        pass\n    return a - b\n"
    result = sandbox.run(stalls, script(check("assert candidate(1, 1) == 2, 'one and one'",
                                              "assert candidate(2, 0) == 2")))
    assert (result.status, result.feedback) == (Status.WRONG_ANSWER, "A check failed: one and one.")
    assert result.time_s < 1.0  # add(2, 0), which never returns, was not called


def test_an_assert_message_calls_the_solution_live(sandbox: Sandbox) -> None:
    suite = script(check("assert candidate(2, 3) == 5, 'got ' + str(candidate(2, 3))",
                         "assert candidate(1, 1) == 2"))
    result = sandbox.run("def add(a, b):\n    return a * b\n", suite)
    assert (result.status, result.feedback) == (Status.WRONG_ANSWER, "A check failed: got 6.")


def test_calls_the_definitions_make_as_they_load_come_before_the_checks(sandbox: Sandbox) -> None:
    solution = "seen = []\ndef double(a):\n    seen.append(a)\n    return 2 * a\n\n" \
               "def add(a, b):\n    seen.append(a)\n    return len(seen) * 100 + a + b\n"
    suite = script(check("assert candidate(1, 1) == 202", "assert candidate(0, 0) == 300"),
                   "BASE = double(1)\n")
    result = sandbox.run(solution, suite)
    assert result.status == Status.PASSED, result.feedback


def test_a_helper_the_definitions_define_is_theirs(sandbox: Sandbox) -> None:
    # HumanEval/38: the check calls the prompt's encode_cyclic, which the solution defines again
    definitions = "def encode(s):\n    return s[::-1]\n\ndef add(a, b):\n    '''stub'''\n"
    solution = "def encode(s):\n    return 'garbage'\n\ndef add(a, b):\n    return a[::-1] + b\n"
    suite = script(check("for word in ('ab', 'cd'):", "    assert candidate(encode(word), '') == word"),
                   definitions)
    assert sandbox.run(solution, suite).status == Status.PASSED


def test_a_loop_of_random_calls_is_judged_and_leaves_the_callers_random_numbers_alone(
        sandbox: Sandbox) -> None:
    random.seed(5)
    expected = [random.random() for _ in range(3)]
    random.seed(5)
    assert sandbox.run(ADD, script(check(*RANDOM_LOOP))).status == Status.PASSED
    assert [random.random() for _ in range(3)] == expected
    wrong = "def add(a, b):\n    return a - b if a % 2 else a + b\n"  # wrong on an odd a, unless b is 0
    assert sandbox.run(wrong, script(check(*RANDOM_LOOP))).status == Status.WRONG_ANSWER


def test_a_literal_the_check_cannot_build_is_the_checks_fault(sandbox: Sandbox) -> None:
    suite = script(check("assert candidate(1, 1) == 2", "assert candidate({[1]: 2}, 0) == 2"))
    result = sandbox.run(ADD, suite)
    assert (result.status, result.feedback) == (Status.WRONG_ANSWER,
                                                "The check raised TypeError: unhashable type: 'list'")
