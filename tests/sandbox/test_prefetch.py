"""A script check's opening literal calls go to the solution in one batch, and judge as one by one.

:func:`literal_calls` reads only what is sure from the check's source; the
sandbox runs tell that the batch is used (fewer requests to the worker: it goes
with the job's begin request, which also ends the job when the batch is the
whole check), that a solution keeping state between calls answers as it would
one call at a time, and that a check failing early still gives the verdict and
message it gave.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import Any

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite
from rewardkit.sandbox.check_code import check_code
from rewardkit.sandbox.link import Link, WorkerFault
from rewardkit.sandbox.prefetch import literal_calls, opening_calls

QUICK = Limits(time_s=2, memory_mb=512)
ADD = "def add(a, b):\n    return a + b\n"


def check(*lines: str, param: str = "candidate") -> str:
    return f"def check({param}):\n" + "".join(f"    {line}\n" for line in lines)


# -- what is read from the source --------------------------------------------------------------
def test_opening_asserts_give_their_calls_in_order() -> None:
    source = check('"""a docstring"""', "assert candidate(1, 2) == 3",
                   "assert abs(candidate(-1.5, (2, 'x')) - candidate([1], {'k': {2}})) < 1e-6",
                   "assert sorted(candidate(0, 0)) == {'a': candidate(3, 3)}['a']", "pass",
                   "for i in range(3):", "    assert candidate(i, i) == 2 * i",
                   "assert candidate(9, 9) == 18")
    assert literal_calls(source) == ((1, 2), (-1.5, (2, "x")), ([1], {"k": {2}}), (0, 0), (3, 3))


def test_parameter_name_is_the_checks_own() -> None:
    assert literal_calls(check("assert f(1) == 1", "assert candidate(2) == 2", param="f")) == ((1,),)


@pytest.mark.parametrize("stopper", [
    "assert candidate(1) == 1 or candidate(2) == 2",  # short-circuit: the second call may not happen
    "assert candidate(1) if x else candidate(2)",
    "assert 0 < candidate(1) < 5",  # a chained comparison skips its tail
    "assert [candidate(i) for i in (1, 2)] == [1, 2]",
    "assert candidate(x) == 1",  # not a literal
    "assert candidate(*[1]) == 1",
    "assert candidate(1, key=2) == 1",
    "assert helper(candidate) == 1",  # the candidate passed on: called who knows when
    "assert candidate(candidate(1)) == 1",
    "assert {candidate(1): 2} == {1: 2}",  # a key is evaluated before its value
    "x = candidate(1)",
    "print(candidate(1))",
    "assert candidate({[1]: 2}) == 2",  # raises when the check runs it: the check's own fault
    "assert candidate({1, [2]}) == 2",
])
def test_a_call_that_is_not_sure_ends_the_run(stopper: str) -> None:
    assert literal_calls(check("assert candidate(0) == 0", stopper, "assert candidate(7) == 7")) == ((0,),)


def test_an_assert_message_that_calls_ends_the_run_after_its_test() -> None:
    source = check("assert candidate(1) == 1, 'got ' + str(candidate(1))", "assert candidate(2) == 2")
    assert literal_calls(source) == ((1,),)


@pytest.mark.parametrize(("lines", "whole"), [
    (("assert candidate(1) == 1", "assert True, 'a note'", "pass", "assert candidate(2) == 2"), True),
    (("assert candidate(1) == 1", "assert candidate(2) == 2, 'no call in the message'"), True),
    (("assert candidate(1) == 1", "assert candidate(2) == 2, str(candidate(2))"), False),
    (("assert candidate(1) == 1", "print('done')"), False),
    (("assert candidate(1) == 1", "for i in range(2):", "    assert candidate(i) == i"), False),
])
def test_the_opening_run_says_whether_it_is_the_whole_check(lines: tuple[str, ...], whole: bool) -> None:
    assert opening_calls(check(*lines)).whole is whole


@pytest.mark.parametrize("source", [
    "@decorate\n" + check("assert candidate(1) == 1"),
    check("assert candidate(1) == 1") + "check = other\n",
    check("assert candidate(1) == 1") + check("assert candidate(2) == 2"),
    check("assert candidate(1) == 1") + "def later():\n    global check\n    check = None\n",
    check("assert candidate(1) == 1") + "from helpers import *\n",
    check("assert candidate(1) == 1", param="*candidates"),
    "def check(candidate):\n    assert candidate(1) ==\n",  # not Python at all
])
def test_a_check_that_may_not_be_this_function_gives_nothing(source: str) -> None:
    assert literal_calls(source) == ()


# -- what the judge does with them -------------------------------------------------------------
@pytest.fixture(scope="module", params=[True, False], ids=["trusted", "referee"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    with Sandbox(workers=1, limits=QUICK, trust_suites=bool(request.param)) as sb:
        yield sb


@pytest.fixture()
def calls_sent(monkeypatch: pytest.MonkeyPatch) -> collections.Counter[str]:
    """How many requests carried calls of the solution's ``add`` (``call``: one; ``calls``: a batch;
    ``begin``: a batch the worker made as the job began), and under ``end`` how many ended a job."""
    sent: collections.Counter[str] = collections.Counter()
    ask = Link.ask

    def counting(self: Link, message: dict[str, Any]) -> dict[str, Any]:
        reply = ask(self, message)
        if message.get("name") == "add" or (message["op"] == "begin" and reply.get("prefetched")):
            sent[str(message["op"])] += 1
        if message["op"] == "end" and self._role == "sandbox worker":
            sent["end"] += 1
        return reply

    monkeypatch.setattr(Link, "ask", counting)
    return sent


def script(source: str, definitions: str | None = None) -> TestSuite:
    return TestSuite.from_dict({"mode": "script", "entry_point": "add", "check": source,
                                "definitions": definitions})


SIX = check(*(f"assert candidate({i}, 1) == {i + 1}" for i in range(6)))


def test_the_opening_calls_cross_in_one_request(sandbox: Sandbox,
                                                calls_sent: collections.Counter[str]) -> None:
    loop = "    for i in range(3):\n        assert candidate(i, i) == 2 * i\n"
    result = sandbox.run(ADD, script(SIX + loop))
    assert result.status == Status.PASSED
    if sandbox.trust_suites:  # rehearsed: the loop's three calls go with the begin too
        assert calls_sent == {"begin": 1}
    else:
        assert calls_sent == {"begin": 1, "call": 3, "end": 1}  # six with the begin; the loop's three live


def test_a_check_of_opening_calls_only_is_judged_in_one_request(
        sandbox: Sandbox, calls_sent: collections.Counter[str]) -> None:
    slow = "import time\n\ndef add(a, b):\n    t = time.process_time()\n" \
           "    while time.process_time() - t < 0.05:\n        pass\n    return a + b\n"
    result = sandbox.run(slow, script(SIX))
    assert result.status == Status.PASSED and result.tests_passed == 1
    assert calls_sent == {"begin": 1}  # no request of its own for the batch, nor to end the job
    assert result.time_s >= 0.25  # the module process's time came with the begin reply


@pytest.mark.parametrize(("solution", "status", "feedback"), [
    ("def add(a, b):\n    return a - b\n", Status.WRONG_ANSWER, "A check failed: first."),
    ("import os\ndef add(a, b):\n    os._exit(3)\n", Status.RUNTIME_ERROR, "Runtime error (exit code 3)"),
    ("def add(a, b):\n    while True:\n        pass\n", Status.TIMEOUT, "Time limit exceeded (limit 2 s)."),
    ("import sys\ndef add(a, b):\n    print('note', file=sys.stderr)\n    raise ValueError(a)\n",
     Status.RUNTIME_ERROR, "Runtime error:\nTraceback"),
])
def test_a_job_ended_with_its_begin_reply_keeps_its_verdict(
        sandbox: Sandbox, calls_sent: collections.Counter[str], solution: str, status: Status,
        feedback: str) -> None:
    result = sandbox.run(solution, script(check("assert candidate(1, 1) == 2, 'first'",
                                                "assert candidate(2, 2) == 4")))
    assert calls_sent == {"begin": 1}
    assert result.status == status and result.feedback.startswith(feedback), result.feedback
    if "stderr" in solution:
        assert "note" in result.stderr


def test_a_datasets_checks_stay_compiled_between_runs(sandbox: Sandbox) -> None:
    """Each suite's check is compiled (and its names read) once while a dataset of a few hundred
    suites is judged again and again (a cache of 256 entries, two per suite, recompiled all)."""
    suites = [script(check(f"assert candidate({i}, 0) == {i}")) for i in range(300)]
    check_code.cache_clear()
    for _ in range(2):
        assert all(r.passed for r in sandbox.run_many([(ADD, suite) for suite in suites]))
    assert check_code.cache_info().misses == len(suites)  # with a referee too: this side reads it


def test_a_request_after_the_worker_ended_the_job_is_a_fault() -> None:
    class Answers:
        def request(self, message: dict[str, Any], timeout: float, max_frame: int) -> dict[str, Any]:
            return {"ok": True}

    link = Link(Answers(), 1.0, 1 << 20)
    assert link.ask({"op": "begin"}) == {"ok": True}
    link.job_ended()
    with pytest.raises(WorkerFault, match="'call' request after the worker had ended the job"):
        link.ask({"op": "call", "name": "add", "args": []})


def test_a_solution_with_state_answers_as_one_call_at_a_time(sandbox: Sandbox) -> None:
    counting = "seen = []\ndef add(a, b):\n    seen.append((a, b))\n    return len(seen) * 100 + a + b\n"
    suite = script(check("assert candidate(1, 1) == 102", "assert candidate(0, 0) == 200",
                         "for a in (5, 6):", "    assert candidate(a, 0) == (a - 2) * 100 + a"))
    assert sandbox.run(counting, suite).status == Status.PASSED


def test_a_check_failing_early_keeps_its_verdict(sandbox: Sandbox) -> None:
    # the batch also runs add(2, 0), which never ends; the check fails on the first call's answer
    stalls = "def add(a, b):\n    while a == 2:\n        pass\n    return a - b\n"
    suite = script(check("assert candidate(1, 1) == 2, 'one and one'", "assert candidate(2, 0) == 2"))
    result = sandbox.run(stalls, suite)
    assert result.status == Status.WRONG_ANSWER
    assert result.feedback == "A check failed: one and one."


def test_an_assert_message_calls_the_solution_live(sandbox: Sandbox) -> None:
    wrong = "def add(a, b):\n    return a * b\n"
    suite = script(check("assert candidate(2, 3) == 5, 'got ' + str(candidate(2, 3))",
                         "assert candidate(1, 1) == 2"))
    result = sandbox.run(wrong, suite)
    assert (result.status, result.feedback) == (Status.WRONG_ANSWER, "A check failed: got 6.")


def test_no_batch_when_the_suites_code_can_reach_the_solution(
        sandbox: Sandbox, calls_sent: collections.Counter[str]) -> None:
    # ``twice`` calls the entry point by its name: its calls come between the candidate's
    definitions = "def twice(a):\n    return add(a, a)\n"
    suite = script(check("assert candidate(1, 1) == 2", "assert twice(3) == 6",
                         "assert candidate(2, 2) == 4"), definitions)
    assert sandbox.run(ADD, suite).status == Status.PASSED
    # a rehearsal sees ``twice``'s call where it comes; read from the source, nothing is sure
    assert calls_sent == ({"begin": 1} if sandbox.trust_suites else {"call": 3, "end": 1})


def test_a_prompt_that_defines_the_entry_point_is_judged_in_one_request(
        sandbox: Sandbox, calls_sent: collections.Counter[str]) -> None:
    # HumanEval's definitions are its prompt: a stub of the entry point and helpers the solution
    # defines again; the candidate replaces the stub, and the prompt's helpers are its own
    prompt = "def double(a):\n    return a + a\n\ndef add(a, b):\n    \"\"\"Add.\"\"\"\n\nSTUB = add(0, 0)\n"
    solution = "def double(a):\n    return 0\n\n" + ADD
    result = sandbox.run(solution, script(check("assert candidate(1, 1) == 2",
                                                "assert candidate(2, 2) == 4"), prompt))
    assert result.status == Status.PASSED
    assert calls_sent == {"begin": 1}


def test_calls_the_definitions_make_as_they_load_come_before_the_checks(
        sandbox: Sandbox, calls_sent: collections.Counter[str]) -> None:
    # the definitions' top level calls the solution's ``double`` before the check runs: no batch
    # may overtake that call (a solution with state would answer differently)
    solution = "seen = []\ndef double(a):\n    seen.append(a)\n    return 2 * a\n\n" \
               "def add(a, b):\n    seen.append(a)\n    return len(seen) * 100 + a + b\n"
    suite = script(check("assert candidate(1, 1) == 202", "assert candidate(0, 0) == 300"),
                   "BASE = double(1)\n")
    result = sandbox.run(solution, suite)
    assert result.status == Status.PASSED, result.feedback
    assert calls_sent == {"call": 2, "end": 1}


def test_a_literal_the_check_cannot_build_is_the_checks_fault(sandbox: Sandbox) -> None:
    # not an infrastructure fault (sandbox_error): the check raises when it gets there, as live
    suite = script(check("assert candidate(1, 1) == 2", "assert candidate({[1]: 2}, 0) == 2"))
    result = sandbox.run(ADD, suite)
    assert (result.status, result.feedback) == (Status.WRONG_ANSWER,
                                                "The check raised TypeError: unhashable type: 'list'")
