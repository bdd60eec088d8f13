"""Public test-data formats, read from a dataset row's own columns into a rewardkit suite.

A trainer passes every dataset column (TRL does), so :func:`read` finds the
format from the columns a row has, or takes the one named (``format=``), and
returns the row's :class:`RowTests`.  Each format is a :class:`Format`: the
columns it reads, how it is recognised and how it is read; the modules of this
package hold the readers and say where their judging differs from their own
harness's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..suite import SuiteError, TestSuite
from . import codecontests, deepcoder, humaneval, kodcode, livecodebench, mbpp, prime, taco, verl
from .columns import json_or_text


class FormatError(SuiteError):
    """A row whose tests no known format reads; the message names the columns seen."""


@dataclass(frozen=True)
class RowTests:
    """A row's tests as rewardkit runs them.

    ``language`` is the language the row's data declares (a ``language``
    column wins over it); ``prompt`` is source the completion continues
    (HumanEval's prompt), prepended when the completion does not define the
    entry point itself.
    """

    suite: TestSuite
    format: str
    language: str | None = None
    prompt: str | None = None


@dataclass(frozen=True)
class Format:
    """One public format: the columns it reads, how a row in it is recognised, how it is read."""

    name: str
    columns: tuple[str, ...]
    found: Callable[[Mapping[str, Any]], bool]
    read: Callable[[Mapping[str, Any]], RowTests]


def _tests_dict(row: Mapping[str, Any]) -> dict[str, Any] | None:
    value = json_or_text(row.get("tests"))
    return value if isinstance(value, dict) else None


def _native_found(row: Mapping[str, Any]) -> bool:
    tests = row.get("tests")
    if isinstance(tests, TestSuite):
        return True
    data = _tests_dict(row)
    return data is not None and not is_foreign(data)


def _verl_found(row: Mapping[str, Any]) -> bool:
    data = _tests_dict(row)
    return data is not None and is_foreign(data)


def _suite_tests(name: str, column: str) -> Callable[[Mapping[str, Any]], RowTests]:
    """A reader for a format held whole in one column, that :meth:`TestSuite.from_dict` reads."""
    def read_column(row: Mapping[str, Any]) -> RowTests:
        suite = TestSuite.from_dict(row[column])
        return RowTests(suite, name, suite_language(suite.extra))
    return read_column


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("rewardkit", ("tests",), _native_found, _suite_tests("rewardkit", "tests")),
    Format("verl", ("tests",), _verl_found, _suite_tests("verl", "tests")),
    Format(deepcoder.NAME, deepcoder.COLUMNS, deepcoder.found, deepcoder.read_row),
    Format("verification_info", ("verification_info",),
           lambda row: row.get("verification_info") is not None,
           _suite_tests("verification_info", "verification_info")),
    Format(livecodebench.NAME, livecodebench.COLUMNS, livecodebench.found, livecodebench.read_row),
    Format(codecontests.NAME, codecontests.COLUMNS, codecontests.found,
           codecontests.reader(codecontests.SETS)),
    Format(codecontests.PUBLIC, codecontests.COLUMNS[:1], lambda row: False,
           codecontests.reader(codecontests.SETS[:1])),
    Format(taco.NAME, taco.COLUMNS, taco.found, taco.read_row),
    Format(humaneval.NAME, humaneval.COLUMNS, humaneval.found, humaneval.read_row),
    Format(mbpp.NAME, mbpp.COLUMNS, mbpp.found, mbpp.read_row),
    Format(mbpp.CHALLENGE, mbpp.COLUMNS, lambda row: False, mbpp.read_challenge),
    Format(kodcode.NAME, kodcode.COLUMNS, kodcode.found, kodcode.read_row),
)}
COLUMNS: tuple[str, ...] = tuple(dict.fromkeys(c for f in FORMATS.values() for c in f.columns))


def has_tests(row: Mapping[str, Any]) -> bool:
    """Whether the row holds tests in any known format."""
    return any(f.found(row) for f in FORMATS.values())


def read(row: Mapping[str, Any], format: str | None = None) -> RowTests:
    """The row's tests, in the format named or else the first one its columns fit.

    FormatError names the columns seen and the formats known when none fits;
    SuiteError says what is wrong with tests that are in a known format.
    """
    if format is not None:
        if format not in FORMATS:
            raise FormatError(f"unknown test format {format!r}; known: {', '.join(FORMATS)}")
        return FORMATS[format].read(row)
    for candidate in FORMATS.values():
        if candidate.found(row):
            return candidate.read(row)
    seen = ", ".join(sorted(k for k, v in row.items() if v is not None)) or "none"
    raise FormatError(f"no test format fits this row (columns: {seen}); known formats and the "
                      f"columns they read: " + "; ".join(f"{f.name} ({', '.join(f.columns)})"
                                                        for f in FORMATS.values()))


def is_foreign(data: dict[str, Any]) -> bool:
    """Whether a tests dict is verl's or ``verification_info``'s shape, not rewardkit's own."""
    return "mode" not in data and "cases" not in data and ("test_cases" in data or "inputs" in data
                                                          or "outputs" in data)


def native_suite(data: dict[str, Any]) -> dict[str, Any]:
    """The rewardkit suite dict for verl/APPS ground truth or a ``verification_info`` value."""
    return prime.suite(data) if "test_cases" in data else verl.suite(data)


def case_count(data: Any) -> int | None:
    """How many cases a suite (native or foreign; dict or JSON text) holds, without building it."""
    data = json_or_text(data)
    if isinstance(data, list):  # a test list (DeepCoder, LiveCodeBench)
        return len(data)
    if not isinstance(data, dict):
        return None
    for key in ("cases", "test_cases", "inputs", "input"):
        if isinstance(data.get(key), list):
            return len(data[key])
    return None


def suite_language(extra: dict[str, Any]) -> str | None:
    """The language a converted ``verification_info`` declared (from the suite's ``extra``)."""
    language = extra.get("language")
    return str(language) if language else None
