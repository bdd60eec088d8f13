"""``pytest`` mode: a pytest module run against the solution's module in the sandbox
(:mod:`~rewardkit.sandbox.runtime.pytest_runner`), each test's verdict read from the runner's
own channel (:mod:`~rewardkit.sandbox.pytest_tests`)."""

from __future__ import annotations

from typing import Any

from .. import pytest_tests
from ..link import clip
from ..runtime import protocol
from ..suite import SuiteError, TestSuite
from ..types import Status
from .base import Mode, Run, compiles, text_field
from .call import PYTHON


class Pytest(Mode):
    """``check`` is a pytest module that imports the solution (``from solution import ...``):
    the solution is saved as ``solution.py``, the tests as ``test_solution.py``, and pytest runs
    them once in the sandbox.  The pass rate is passed / collected tests (never fewer than the
    test functions the module defines); a module the solution keeps from loading (it fails to
    import, a name is missing) is the solution's runtime error with no test passed::

        {"mode": "pytest",
         "check": "from solution import add\\n\\ndef test_add():\\n    assert add(1, 2) == 3\\n"}
    """

    name = "pytest"
    fields = ("check",)

    def languages(self) -> frozenset[str]:
        """Python only: pytest imports the solution."""
        return PYTHON

    def read(self, data: dict[str, Any]) -> dict[str, Any]:
        """The test module: Python that compiles and defines at least one test."""
        check = text_field(data, "check", "pytest mode needs 'check': a pytest module that imports "
                                          "from solution (from solution import ...)")
        if check is None or not check.strip():
            raise SuiteError("pytest mode needs 'check': a pytest module that imports from solution")
        compiles("check", check)
        if not pytest_tests.test_names(check):
            raise SuiteError("the pytest module defines no test (a test* function, or a test* "
                             "method of a Test* class)")
        return {"check": check}

    def to_dict(self, suite: TestSuite) -> dict[str, Any]:
        """The test module."""
        return {"check": suite.check}

    def size(self, suite: TestSuite) -> int:
        """The test functions the module defines (parametrized ones count once until run)."""
        return max(len(pytest_tests.test_names(str(suite.check))), 1)

    def begin(self, message: protocol.Begin, suite: TestSuite, language: str) -> protocol.Begin:
        """The solution as ``solution.py``, the test module beside it, run by the pytest runner."""
        message["pytest"] = str(suite.check)
        return message

    def judge(self, run: Run) -> None:
        """Run the module once and tally its verdicts (:func:`.pytest_tests.verdict`): the
        frames the worker kept, those bearing its nonce, never pytest's output or exit code."""
        report = run.link.ask(protocol.Run(op="run", stdin=""))
        if not report.get("ok") or not isinstance(report.get("verdicts"), list):
            raise protocol.ProtocolError(f"worker could not run the tests: {clip(repr(report))}")
        run.tally.add_usage(report)
        said = pytest_tests.verdict(report["verdicts"], pytest_tests.test_names(str(run.suite.check)),
                                    str(report["outcome"]))
        run.tally.total, run.tally.passed = said.total, said.passed
        if said.status is None:
            run.tally.outcome(report, None, run.limits)
        elif said.status != Status.PASSED:
            run.tally.fail(said.status, None, said.message)
