"""KodCode rows (``KodCode/KodCode-V1`` and its subsets): ``question``, ``solution``, ``test``,
``test_info``.

``test`` is a pytest module that imports the solution (``from solution import
...``); KodCode's harness (``pipeline/run_test.sh``) writes the solution as
``solution.py`` and the tests as ``test_solution.py`` in one folder and runs
``pytest --rootdir=.`` there under a 30-second timeout: the row passes when
pytest exits with 0.  Each row becomes a ``pytest`` suite holding ``test``;
``question``, ``solution`` (the reference) and ``test_info`` (the function
names and signatures the question asks for) are not read.

Where the judging differs from KodCode's:

* the verdict is per test (pass rate = passed / collected tests) and comes from
  a channel the solution cannot write (:mod:`~rewardkit.sandbox.runtime.pytest_runner`),
  not from pytest's exit code: a solution that ends the process with
  ``os._exit(0)`` when it is imported passes KodCode's harness, and fails here.
* no plugin is loaded (no ``pytest-cov``: KodCode measures coverage but
  judges on the exit code alone), no ``conftest.py`` or ini file is read, and
  the cache is off.
* the time limit is the sandbox's for the whole run, where KodCode's is 30 s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..suite import SuiteError, TestSuite

if TYPE_CHECKING:  # the package imports this module
    from . import RowTests

NAME = "kodcode"
COLUMNS = ("question", "solution", "test", "test_info")


def found(row: Mapping[str, Any]) -> bool:
    """Whether the row has a ``test`` module beside KodCode's ``test_info`` or ``question``
    (and no HumanEval ``entry_point``)."""
    return isinstance(row.get("test"), str) and row.get("entry_point") is None and \
        (row.get("test_info") is not None or isinstance(row.get("question"), str))


def suite(row: Mapping[str, Any]) -> TestSuite:
    """The row's ``pytest`` suite; SuiteError when ``test`` is empty or does not compile."""
    tests = str(row.get("test") or "")
    if not tests.strip():
        raise SuiteError("a KodCode row needs 'test': a pytest module importing from solution")
    return TestSuite.from_dict({"mode": "pytest", "check": tests})


def read_row(row: Mapping[str, Any]) -> RowTests:
    """The row's tests as :class:`~rewardkit.sandbox.formats.RowTests` (language python)."""
    from . import RowTests

    return RowTests(suite(row), NAME, "python")
