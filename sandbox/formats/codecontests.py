"""CodeContests (``deepmind/code_contests``) rows: ``public_tests``, ``private_tests``, ``generated_tests``.

Each column is ``{"input": [...], "output": [...]}`` (stdin texts and their
expected stdout), every problem a program on stdin.  Format ``code_contests``
uses all three sets, as AlphaCode judged a submission correct (its paper:
the generated tests cut the rate of wrong programs passing the public and
private tests alone); ``code_contests_public`` uses only the public tests
(the examples in the statement: cheap, and no hidden data in the reward).
Name one with ``format=``; found from the columns, a row is read as
``code_contests``.

The judging: CodeContests' checker compares the output with the expected one
token by token, whitespace (spaces, line breaks) only separating tokens;
:data:`TOKENS_EVALUATOR` does that.  Where it differs: the contest's own
checkers (problems with several right answers, or a float tolerance) are not
in the data and are not run, so such problems fail a right answer printed
differently, as they do with the token comparison of the dataset's tools.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..suite import SuiteError, TestSuite

if TYPE_CHECKING:  # the package imports this module
    from . import RowTests

NAME = "code_contests"
PUBLIC = "code_contests_public"
SETS = ("public_tests", "private_tests", "generated_tests")
COLUMNS = SETS

# CodeContests' comparison: the outputs' whitespace-separated tokens are equal.
TOKENS_EVALUATOR = '''def evaluate(expected, actual):
    """CodeContests: the same tokens, whitespace only separating them."""
    return expected.split() == actual.split()
'''


def found(row: Mapping[str, Any]) -> bool:
    """Whether the row has CodeContests' ``public_tests`` and ``private_tests``."""
    return row.get("public_tests") is not None and row.get("private_tests") is not None


def _cases(row: Mapping[str, Any], column: str) -> list[dict[str, str]]:
    value = row.get(column)
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise SuiteError(f"{column} is not JSON: {exc}") from exc
    inputs, outputs = (value.get(k) if isinstance(value, dict) else None for k in ("input", "output"))
    if not isinstance(inputs, list) or not isinstance(outputs, list) or len(inputs) != len(outputs):
        raise SuiteError(f"{column} must be {{input: [...], output: [...]}} with as many of each")
    return [{"input": str(i), "output": str(o)} for i, o in zip(inputs, outputs, strict=True)]


def reader(sets: tuple[str, ...]) -> Callable[[Mapping[str, Any]], RowTests]:
    """A reader of the row's tests in ``sets`` (column names), in that order."""
    def read_row(row: Mapping[str, Any]) -> RowTests:
        from . import RowTests

        cases = [case for column in sets for case in _cases(row, column)]
        if not cases:
            raise SuiteError(f"the row has no test cases in {', '.join(sets)}")
        suite = TestSuite.from_dict({"mode": "stdio", "cases": cases, "evaluator": TOKENS_EVALUATOR})
        return RowTests(suite, NAME if sets == SETS else PUBLIC)
    return read_row
