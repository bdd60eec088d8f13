"""``pytest`` suites: validation, the pass rate (passed / collected), whose fault a failure is,
and the verdict rules of :mod:`rewardkit.sandbox.pytest_tests`."""

from __future__ import annotations

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite
from rewardkit.sandbox.pytest_tests import test_names as names_of
from rewardkit.sandbox.pytest_tests import verdict
from rewardkit.sandbox.suite import SuiteError

QUICK = Limits(time_s=10, memory_mb=512)
TESTS = ("import pytest\nfrom solution import add\n\n\ndef test_one():\n    assert add(1, 2) == 3\n\n\n"
         "@pytest.mark.parametrize('a', [0, 5, 10])\ndef test_zero(a):\n    assert add(a, 0) == a\n\n\n"
         "class TestPair:\n    def test_pair(self):\n        assert add(2, 2) == 4\n")
SUITE = TestSuite.from_dict({"mode": "pytest", "check": TESTS})
ALL = ["test_solution.py::test_one", "test_solution.py::test_zero[0]", "test_solution.py::test_zero[5]",
       "test_solution.py::test_zero[10]", "test_solution.py::TestPair::test_pair"]


def test_names_are_the_tests_pytest_collects_by_default() -> None:
    assert names_of(TESTS) == ("test_one", "test_zero", "TestPair::test_pair")
    assert names_of("class TestX:\n    def __init__(self):\n        pass\n    def test_a(self):\n"
                    "        pass\n\ndef helper():\n    pass\n") == ()


@pytest.mark.parametrize(("data", "fault"), [
    ({"mode": "pytest"}, "needs 'check'"),
    ({"mode": "pytest", "check": "def test_a(:\n"}, "does not compile"),
    ({"mode": "pytest", "check": "from solution import add\n"}, "defines no test"),
])
def test_unusable_suites_say_what_to_fix(data: dict[str, str], fault: str) -> None:
    with pytest.raises(SuiteError, match=fault):
        TestSuite.from_dict(data)


def test_suite_round_trips_and_counts_its_test_functions() -> None:
    assert TestSuite.from_dict(SUITE.to_dict()) == SUITE
    assert len(SUITE) == 3


def _frames(results: dict[str, str], done: bool = True) -> list[dict[str, object]]:
    frames: list[dict[str, object]] = [{"collected": ALL}]
    frames += [{"test": nodeid, "result": result, "error": "AssertionError", "message": "m"}
               for nodeid, result in results.items()]
    return frames + ([{"done": len(results)}] if done else [])


def test_verdict_passes_only_every_collected_test_and_a_done_frame() -> None:
    names = names_of(TESTS)
    assert verdict(_frames(dict.fromkeys(ALL, "passed")), names, "ok").status == Status.PASSED
    half = verdict(_frames(dict.fromkeys(ALL, "passed") | {ALL[1]: "failed"}), names, "ok")
    assert (half.status, half.passed, half.total) == (Status.WRONG_ANSWER, 4, 5)
    early = verdict(_frames(dict.fromkeys(ALL[:2], "passed"), done=False), names, "ok")
    assert (early.status, early.passed, early.total) == (Status.RUNTIME_ERROR, 2, 5)
    limit = verdict(_frames(dict.fromkeys(ALL[:2], "passed"), done=False), names, "timeout")
    assert (limit.status, limit.passed) == (None, 2)


def test_verdict_counts_the_module_s_tests_when_fewer_are_collected() -> None:
    names = names_of(TESTS)
    only_one = [{"collected": ALL[:1]}, {"test": ALL[0], "result": "passed"}, {"done": 1}]
    said = verdict(only_one, names, "ok")
    assert (said.status, said.passed, said.total) == (Status.WRONG_ANSWER, 1, 3)
    skipped = verdict(_frames(dict.fromkeys(ALL, "skipped")), names, "ok")
    assert (skipped.status, skipped.passed) == (Status.WRONG_ANSWER, 0)
    missing = verdict([{"fault": "pytest is not installed"}], names, "runtime_error")
    assert missing.status == Status.SANDBOX_ERROR


def test_pass_rate_is_passed_over_collected_tests(sandbox: Sandbox) -> None:
    right, half, unimportable, raising = sandbox.run_many([
        ("def add(a, b):\n    return a + b\n", SUITE),
        ("def add(a, b):\n    return a + b if b else 7\n", SUITE),
        ("def plus(a, b):\n    return a + b\n", SUITE),
        ("def add(a, b):\n    return [][0]\n", SUITE),
    ], limits=QUICK)
    assert (right.status, right.tests_passed, right.tests_total) == (Status.PASSED, 5, 5)
    assert (half.status, half.tests_passed, half.tests_total) == (Status.WRONG_ANSWER, 2, 5)
    assert "test_zero" in half.feedback
    assert (unimportable.status, unimportable.tests_passed, unimportable.tests_total) == \
        (Status.RUNTIME_ERROR, 0, 3)
    assert "cannot import name 'add'" in unimportable.feedback
    assert (raising.status, raising.pass_rate) == (Status.RUNTIME_ERROR, 0.0)
    assert "IndexError" in raising.feedback


def test_pytest_mode_runs_python_only(sandbox: Sandbox) -> None:
    with pytest.raises(ValueError, match="pytest mode runs Python only"):
        sandbox.run("fn add(a: i64, b: i64) -> i64 { a + b }\n", SUITE, language="rust", limits=QUICK)


def test_pytest_s_own_start_up_is_not_the_solution_s_time() -> None:
    from rewardkit.sandbox.backends.local import start_local_worker

    worker = start_local_worker()
    try:
        worker.request({"op": "begin", "code": "def add(a, b):\n    return a + b\n", "language": "python",
                        "kind": "program", "pytest": TESTS, "limits": {"time_s": 10}}, timeout=60)
        report = worker.request({"op": "run", "stdin": ""}, timeout=60)
    finally:
        worker.close()
    start_up = report["startup_subtracted"]["time_s"]  # the runner on an empty module: pytest's import
    assert report["outcome"] == "ok" and report["time_s"] < start_up / 2, report
