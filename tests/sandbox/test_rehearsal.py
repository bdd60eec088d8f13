"""A trusted check is rehearsed before the solution runs, and the real check is held to it.

:func:`rehearse` runs the check with a candidate that writes its calls down:
what it writes down, and where it must stop, is read here directly.  The
sandbox runs tell that a check calling the solution in a loop, with random
arguments, takes one request; that a check which goes another way than its
rehearsal is judged again, unrehearsed, with the verdict and the figures of
a check never rehearsed; and that a check's random numbers are its own.
"""

from __future__ import annotations

import collections
import gc
import random
from collections.abc import Iterator
from typing import Any

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite, rehearsal
from rewardkit.sandbox.check_code import check_code
from rewardkit.sandbox.link import Link
from rewardkit.sandbox.modes.script_plan import REHEARSED, rehearsed_opening
from rewardkit.sandbox.rehearsal import rehearse

QUICK = Limits(time_s=2, memory_mb=512)
ADD = "def add(a, b):\n    return a + b\n"
RANDOM_LOOP = ("import random", "for _ in range(50):",
               "    a, b = random.randint(0, 99), random.randint(0, 99)",
               "    assert candidate(a, b) == a + b")


def check(*lines: str) -> str:
    return "def check(candidate):\n" + "".join(f"    {line}\n" for line in lines)


def calls_of(*lines: str, definitions: str | None = None, seed: int = 7,
             limit: int = 256) -> tuple[tuple[tuple[Any, ...], ...], bool] | None:
    rehearsal = rehearse(check(*lines), definitions, "add", seed, limit)
    return None if rehearsal is None else (rehearsal.calls, rehearsal.whole)


# -- what a rehearsal writes down -------------------------------------------------------------
def test_a_loop_of_random_calls_is_written_down_whole_and_the_same_for_a_seed() -> None:
    first = calls_of(*RANDOM_LOOP)
    assert first is not None and first[1] and len(first[0]) == 50
    assert calls_of(*RANDOM_LOOP) == first
    assert calls_of(*RANDOM_LOOP, seed=8) != first


def test_a_check_that_imports_no_random_is_rehearsed_once_for_every_seed() -> None:
    """Its calls do not depend on the seed: the rehearsal is kept and handed out again; a check
    that imports random is rehearsed with each job's seed."""
    fixed = check("for a in range(20):", "    assert candidate(a, 1) == a + 1")
    first = rehearse(fixed, None, "add", 1, 256)
    assert first is not None and first.whole and len(first.calls) == 20
    assert rehearse(fixed, None, "add", 2, 256) is first
    drawn = check(*RANDOM_LOOP)
    assert rehearse(drawn, None, "add", 1, 256) is not rehearse(drawn, None, "add", 1, 256)


def test_a_kept_rehearsal_is_encoded_for_the_judge_once() -> None:
    """The judge's form of a kept rehearsal's calls is made once for all its jobs; that of a
    seeded rehearsal is dropped with it."""
    fixed = check("for a in range(20):", "    assert candidate(a, 1) == a + 1")
    once = rehearse(fixed, None, "add", 1, 256)
    assert once is not None
    assert rehearsed_opening(once) is rehearsed_opening(once)
    gc.collect()  # no earlier rehearsal held only by a cycle may leave REHEARSED during the count
    held = len(REHEARSED)
    drawn = rehearse(check(*RANDOM_LOOP), None, "add", 1, 256)
    assert drawn is not None and rehearsed_opening(drawn).keys
    assert len(REHEARSED) == held + 1
    del drawn
    gc.collect()
    assert len(REHEARSED) == held


@pytest.mark.parametrize("test", [
    "candidate(1, 0) == 1", "abs(candidate(1, 0) - 1) < 1e-9", "candidate(1, 0) is not None",
    "isinstance(candidate(1, 0), int)", "sorted(candidate(1, 0)) == [1]", "candidate(1, 0)",
    "candidate(1, 0) is None or candidate(5, 5)",  # the real check may call add(5, 5): it says so
])
def test_an_assert_that_uses_a_result_is_taken_to_pass(test: str) -> None:
    # the real assert passes, and the check goes on as rehearsed, or fails, and the check ends
    assert calls_of(f"assert {test}", "assert candidate(2, 0) == 2") == (((1, 0), (2, 0)), True)


@pytest.mark.parametrize("stopper", [
    "if candidate(1, 0):\n        pass",  # the result steers the check
    "x = candidate(1, 0)\n    candidate(x, 0)",  # the result is passed on
    "candidate(1, 0)\n    print('once')",  # an effect: it happens once, in the real check
    "candidate(1, 0)\n    import os",  # a module that is not known to be pure
    "candidate(1, 0)\n    candidate(1, b=0)",  # keyword arguments do not go in a batch
    "candidate(1, 0)\n    assert 1 == 2",  # fails whatever the solution answers
    "candidate(1, 0)\n    {}['missing']",  # raises whatever the solution answers
])
def test_a_rehearsal_stops_where_the_rest_may_depend_on_a_result(
        stopper: str, capsys: pytest.CaptureFixture[str]) -> None:
    calls = calls_of(stopper, "assert candidate(2, 0) == 2")
    assert calls is not None
    assert calls[1] is False and (2, 0) not in calls[0]
    assert capsys.readouterr().out == ""


def test_a_call_is_written_down_as_it_was_made() -> None:
    # the check changes the list after passing it: the batch must carry what each call got
    assert calls_of("x = [1]", "candidate(x, 0)", "x.append(2)", "candidate(x, 0)") == \
        ((([1], 0), ([1, 2], 0)), True)


def test_a_rehearsal_stops_at_its_limit() -> None:
    rehearsed = calls_of(*RANDOM_LOOP, limit=10)
    assert rehearsed is not None and len(rehearsed[0]) == 10 and not rehearsed[1]


@pytest.mark.parametrize("lines", [
    ("try:", "    assert candidate(1, 0) == 1", "except AssertionError:", "    pass"),
    ("with open('x') as f:", "    pass"),
    ("assert (y := candidate(1, 0)) == 1",),
])
def test_a_check_that_could_catch_or_bind_what_a_rehearsal_cannot_see_is_not_rehearsed(
        lines: tuple[str, ...]) -> None:
    assert calls_of(*lines) is None


def test_the_definitions_are_rehearsed_with_the_check() -> None:
    definitions = "import string\ndef shift(s):\n    return ''.join(chr(ord(c) + 1) for c in s)\n"
    assert calls_of("for word in ('ab', 'yz'):", "    assert candidate(shift(word), 0) == word",
                    definitions=definitions) == ((("bc", 0), ("z{", 0)), True)


# -- what the judge does with it ----------------------------------------------------------------
@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=1, limits=QUICK) as sb:
        yield sb


@pytest.fixture()
def requests(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    """The requests each job sent its worker, by op."""
    sent: collections.Counter[str] = collections.Counter()
    ask = Link.ask

    def counting(self: Link, message: dict[str, Any]) -> dict[str, Any]:
        sent[str(message["op"])] += 1
        return ask(self, message)

    monkeypatch.setattr(Link, "ask", counting)
    return sent


def script(source: str, definitions: str | None = None) -> TestSuite:
    return TestSuite.from_dict({"mode": "script", "entry_point": "add", "check": source,
                                "definitions": definitions})


def test_a_loop_of_random_calls_is_judged_in_one_request(sandbox: Sandbox,
                                                         requests: collections.Counter[str]) -> None:
    assert sandbox.run(ADD, script(check(*RANDOM_LOOP))).status == Status.PASSED
    assert requests == {"begin": 1}
    wrong = "def add(a, b):\n    return a - b if a % 2 else a + b\n"  # wrong on an odd a, unless b is 0
    assert sandbox.run(wrong, script(check(*RANDOM_LOOP))).status == Status.WRONG_ANSWER


def test_judging_leaves_the_callers_random_numbers_alone(sandbox: Sandbox) -> None:
    random.seed(5)
    expected = [random.random() for _ in range(3)]
    random.seed(5)
    assert sandbox.run(ADD, script(check(*RANDOM_LOOP))).status == Status.PASSED
    assert [random.random() for _ in range(3)] == expected


STEERED = check("r = candidate(0, 0)", "if type(r) == int:", "    assert candidate(1, 0) == 2",
                "else:", "    assert candidate(5, 0) == 2")  # the rehearsal takes the else branch
COUNTING = "seen = []\ndef add(a, b):\n    seen.append(a)\n    return len(seen)\n"


def test_a_check_that_leaves_its_rehearsal_is_judged_again_unrehearsed(
        sandbox: Sandbox, requests: collections.Counter[str]) -> None:
    # add(5, 0) ran in the batch; had the check gone on live, add(1, 0) would answer 3, not 2
    result = sandbox.run(COUNTING, script(STEERED))
    assert result.status == Status.PASSED, result.feedback
    assert requests["begin"] == 2
    requests.clear()  # a check that once left its rehearsal is not rehearsed again
    assert sandbox.run(COUNTING, script(STEERED)).status == Status.PASSED
    assert requests["begin"] == 1


def test_a_check_that_passes_before_its_rehearsal_ends_has_the_figures_of_its_own_calls(
        sandbox: Sandbox, requests: collections.Counter[str]) -> None:
    # the rehearsal also makes add(1, 0), a second of CPU, which the real check never asks for
    slow = "def add(a, b):\n    while a == 1:\n        pass\n    return a\n"
    early = check("r = candidate(0, 0)", "if type(r) == int:", "    return", "assert candidate(1, 0) == 1")
    result = sandbox.run(slow, script(early))
    assert result.status == Status.PASSED, result.feedback
    assert requests["begin"] == 2
    assert result.time_s < 0.5


def test_a_helper_the_definitions_define_is_theirs_and_costs_no_request(
        sandbox: Sandbox, requests: collections.Counter[str]) -> None:
    # HumanEval/38: the check calls the prompt's encode_cyclic, which the solution defines again
    definitions = "def encode(s):\n    return s[::-1]\n\ndef add(a, b):\n    '''stub'''\n"
    solution = "def encode(s):\n    return 'garbage'\n\ndef add(a, b):\n    return a[::-1] + b\n"
    suite = script(check("for word in ('ab', 'cd'):", "    assert candidate(encode(word), '') == word"),
                   definitions)
    assert sandbox.run(solution, suite).status == Status.PASSED
    assert requests == {"begin": 1}


def test_a_check_too_slow_to_rehearse_is_rehearsed_once(sandbox: Sandbox, requests: collections.Counter[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # a budget any rehearsal overruns, rather than a check that overruns 50 ms on this machine
    monkeypatch.setattr(rehearsal, "BUDGET_S", 1e-9)
    slow = check("total = sum(i * i for i in range(1000))", "assert candidate(total, 0) == total")
    assert sandbox.run(ADD, script(slow)).status == Status.PASSED
    assert requests == {"begin": 1}
    requests.clear()
    assert sandbox.run(ADD, script(slow)).status == Status.PASSED
    assert requests == {"begin": 1, "call": 1, "end": 1}


# -- which names the definitions keep for themselves -------------------------------------------
@pytest.mark.parametrize(("definitions", "kept"), [
    ("def encode(s):\n    return s\n", True),
    ("import string as encode\n", True),
    ("@staticmethod\ndef encode(s):\n    return s\n", False),  # a decorator may return anything
    ("def encode(s):\n    return s\nencode = decode\n", False),  # rebound, to the solution's, say
    ("def encode(s):\n    return s\ndef later():\n    global encode\n    encode = None\n", False),
    ("def encode(s):\n    return s\nfrom string import *\n", False),  # may bind any name
    ("if True:\n    def encode(s):\n        return s\n", False),  # not a top-level statement
    # a name past the 256th needs EXTENDED_ARG in the bytecode that binds it
    ("".join(f"v{i} = {i}\n" for i in range(300)) + "def encode(s):\n    return s\n", True),
])
def test_a_name_the_definitions_define_once_for_good_is_theirs(definitions: str, kept: bool) -> None:
    code = check_code(check("assert candidate(encode('ab')) == 'ab'"), definitions)
    assert ("encode" not in code.may_call("add")) is kept
