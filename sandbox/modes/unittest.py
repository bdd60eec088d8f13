"""``unittest`` mode: test code in the solution's own language, built with it into one test
program and run once (Rust: :mod:`~rewardkit.sandbox.rust_tests`)."""

from __future__ import annotations

import re
from typing import Any

from .. import rust_tests
from ..link import clip
from ..runtime import protocol
from ..runtime.languages import DEFAULT_EDITION, LANGUAGES
from ..suite import SuiteError, TestSuite
from ..types import Status
from .base import Mode, Run

_EDITION = re.compile(r"20\d\d")  # a Rust edition: 2015, 2018, 2021, 2024...


class Unittest(Mode):
    """``check`` is test code for the language's built-in test runner (Rust: a
    ``#[cfg(test)] mod tests`` of ``#[test]`` functions); optional ``edition``.
    It passes when every test passes: the suite counts one test."""

    name = "unittest"
    fields = ("check",)

    def languages(self) -> frozenset[str]:
        """The languages with a built-in test runner."""
        return frozenset(name for name, spec in LANGUAGES.items() if spec.test_compile)

    def refusal(self, language: str) -> str | None:
        """Why ``language`` cannot run unittest suites, or None."""
        if language in self.languages():
            return None
        return (f"unittest mode needs a language with a built-in test runner "
                f"({', '.join(sorted(self.languages()))}); {language} has none")

    def read(self, data: dict[str, Any]) -> dict[str, Any]:
        """Test code (not compiled here: it is the solution's language) and an optional edition."""
        check, edition = data.get("check"), data.get("edition")
        if not isinstance(check, str) or not check.strip():
            raise SuiteError("unittest mode needs 'check': test code in the solution's language "
                             "(Rust: a #[cfg(test)] mod tests with #[test] functions)")
        if edition is not None and not (isinstance(edition, str) and _EDITION.fullmatch(edition)):
            raise SuiteError(f"'edition' must be a Rust edition such as \"2021\" or \"2024\", "
                             f"got {edition!r}")
        return {"check": check}

    def to_dict(self, suite: TestSuite) -> dict[str, Any]:
        """The test code."""
        return {"check": suite.check}

    def size(self, suite: TestSuite) -> int:
        """One: the test program passes or not."""
        return 1

    def refused_code(self, code: str) -> str | None:
        """What would let the solution reach the test code or the entry point (Rust)."""
        refused = rust_tests.refused(code)
        if refused is None:
            return None
        return (f"unittest mode refuses {refused!r} in the solution: it could read the test code "
                "compiled beside it, or run code before the test program's entry point or in place "
                "of a function it calls.")

    def begin(self, message: protocol.Begin, suite: TestSuite, language: str) -> protocol.Begin:
        """The test program in place of the solution, built with the test runner."""
        edition = str(suite.extra.get("edition") or DEFAULT_EDITION)
        message["code"] = rust_tests.test_program(message["code"], str(suite.check), edition)
        message["tests"], message["edition"] = True, edition
        return message

    def judge(self, run: Run) -> None:
        """Run the test program once and tally its verdicts (:func:`.rust_tests.verdict`): the
        frames the worker kept, those bearing its nonce, never the program's output."""
        report = run.link.ask(protocol.Run(op="run", stdin=""))
        if not report.get("ok") or not isinstance(report.get("verdicts"), list):
            raise protocol.ProtocolError(f"worker could not run the tests: {clip(repr(report))}")
        run.tally.add_usage(report)
        said = rust_tests.verdict(report["verdicts"], rust_tests.test_names(str(run.suite.check)),
                                  str(report["outcome"]), run.code.count("\n") + 3)
        if said is None:
            run.tally.outcome(report, None, run.limits)
        elif said[0] == Status.PASSED:
            run.tally.passed = 1
        else:
            run.tally.fail(said[0], None, said[1])
