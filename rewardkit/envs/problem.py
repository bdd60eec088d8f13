"""A dataset row as an episode's problem: the tests the model may run and the hidden ones that judge it.

The row is read with :func:`rewardkit.sandbox.formats.read` (any format).
Formats that keep a public/private split give it: LiveCodeBench's public and
private test cases, CodeContests' public tests against its private and
generated ones.  Any other row's stdio or call cases are split with
:func:`split_tests` (``public`` cases visible, the rest hidden).  A suite
that cannot be split (a script check, a single case, a pytest module) is
visible whole and judges the episode itself: such a row has no hidden tests.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..sandbox import SuiteError, TestSuite, formats
from ..sandbox.formats import codecontests, livecodebench

# Columns that may hold the problem's statement, in the order they are looked for.
STATEMENT_COLUMNS = ("question_content", "question", "description", "problem", "statement", "text")
SPLITTABLE = ("stdio", "call")


def split_tests(suite: TestSuite | dict[str, Any] | str, public: int | float = 1,
                seed: int = 0) -> tuple[TestSuite, TestSuite]:
    """Split a stdio or call suite's cases into (public, private) suites, both non-empty.

    ``public`` is a number of cases (``int`` >= 1) or a fraction (``float`` in
    (0, 1), rounded, at least one case); the cases are drawn with ``seed`` and
    keep their order.  Script suites raise :class:`SuiteError`.
    """
    parsed = suite if isinstance(suite, TestSuite) else TestSuite.from_dict(suite)
    if parsed.mode == "script":
        raise SuiteError("a script suite is one check(candidate) function and cannot be split into public "
                         "and private tests; give the problem stdio or call tests")
    count = len(parsed.cases)
    if count < 2:
        raise SuiteError(f"splitting needs at least 2 test cases, the suite has {count}")
    size = _public_size(public, count)
    chosen = set(random.Random(seed).sample(range(count), size))  # nosec B311 - which cases show, no secret
    pick = [case for i, case in enumerate(parsed.cases) if i in chosen]
    rest = [case for i, case in enumerate(parsed.cases) if i not in chosen]
    return replace(parsed, cases=tuple(pick)), replace(parsed, cases=tuple(rest))


def _public_size(public: int | float, count: int) -> int:
    if isinstance(public, bool) or public <= 0:
        raise ValueError(f"public must be a positive count or a fraction in (0, 1), got {public!r}")
    if isinstance(public, float):
        if public >= 1:
            raise ValueError(f"a public fraction must be below 1, got {public}")
        size = max(1, round(public * count))
    else:
        size = public
    if size >= count:
        raise ValueError(f"{size} public tests would leave no private test out of {count}")
    return size


@dataclass(frozen=True)
class Problem:
    """One row's problem: ``visible`` tests (the tools run these), ``hidden`` ones (None when the
    row has none: the visible tests then judge), the language, and HumanEval's ``prefix`` (the
    source a completion continues)."""

    visible: TestSuite
    hidden: TestSuite | None
    language: str
    format: str
    prefix: str | None = None

    @property
    def judge(self) -> TestSuite:
        """The tests that score the episode."""
        return self.hidden if self.hidden is not None else self.visible


def read_problem(row: Mapping[str, Any], format: str | None = None, public: int | float = 1,
                 seed: int = 0) -> Problem:
    """The row's :class:`Problem`; FormatError when no format reads the row, SuiteError when its
    tests are malformed."""
    tests = formats.read(row, format)
    language = str(row.get("language") or tests.language or "python")
    visible, hidden = _split(row, tests, public, seed)
    return Problem(visible, hidden, language, tests.format, tests.prompt)


def _split(row: Mapping[str, Any], tests: formats.RowTests, public: int | float,
           seed: int) -> tuple[TestSuite, TestSuite | None]:
    if tests.format == livecodebench.NAME and row.get("private_test_cases") is not None:
        hidden = _lcb_private(row)
        if hidden is not None:
            return formats.read({**row, "private_test_cases": None}, livecodebench.NAME).suite, hidden
    if tests.format == codecontests.NAME:
        visible = formats.read(row, codecontests.PUBLIC).suite
        try:
            return visible, codecontests.reader(codecontests.SETS[1:])(row).suite
        except SuiteError:  # no private or generated test: the public ones judge
            return visible, None
    suite = tests.suite
    if suite.mode in SPLITTABLE and len(suite.cases) > 1:
        try:
            return split_tests(suite, public, seed)
        except ValueError:  # ``public`` would leave no case hidden: every case is visible
            return suite, None
    return suite, None


def _lcb_private(row: Mapping[str, Any]) -> TestSuite | None:
    """LiveCodeBench's private tests alone (None when the list is empty)."""
    cases = livecodebench.test_list(row["private_test_cases"], "private_test_cases")
    if not cases:
        return None
    func_name = livecodebench.metadata(row).get("func_name")
    return TestSuite.from_dict(livecodebench.suite(cases, func_name))


def statement(row: Mapping[str, Any]) -> str | None:
    """The problem's statement from the first statement column the row has, with its starter code."""
    for column in STATEMENT_COLUMNS:
        value = row.get(column)
        if isinstance(value, str) and value.strip():
            starter = row.get("starter_code")
            if isinstance(starter, str) and starter.strip():
                return f"{value.strip()}\n\nStarter code:\n{starter.strip()}"
            return value.strip()
    return None
