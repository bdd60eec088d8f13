"""MBPP rows (full and sanitized): ``text``, ``code``, ``test_list``, ``test_setup_code``,
``challenge_test_list``; the sanitized set has ``prompt`` and ``test_imports`` instead.

MBPP's harness runs ``code``, then ``test_setup_code``, then the asserts of
``test_list``, in one namespace (google-research/mbpp's evaluation; bigcode's
``mbpp`` task and human-eval's ``unsafe_execute`` do the same with the
completion in place of ``code``); a row passes when no assert fails.  Each row
becomes a ``script`` suite: ``definitions`` = ``test_setup_code`` (or the
sanitized set's ``test_imports``, one import per line), ``check`` =
a ``check(candidate)`` holding the asserts, ``entry_point`` = the first
function the first assert calls that is no builtin.  The asserts call the
solution's functions by name: in script mode each function the solution
defines is there by its name.

``challenge_test_list`` (MBPP's harder extra asserts, empty in most rows) is
left out, as bigcode's harness and the MBPP paper's reported numbers do; the
format ``mbpp_challenge`` (``format="mbpp_challenge"``) adds those asserts
after ``test_list``'s.  ``text`` and ``code`` (the reference) are not read.

Where the judging differs from the harness's:

* the asserts run in rewardkit's trusted process and each call of the solution
  in the sandbox, so a solution that ends the process (``exit(0)``) or returns
  an object whose ``__eq__`` always says True does not pass (the harness,
  ``exec`` under human-eval's guard, also fails ``exit(0)``: it catches
  ``SystemExit``); a value crosses as plain data, so an assert that needs
  the solution's own object (``isinstance`` of its class) fails here.
* a time limit per call, where the harness's is for the whole program.
"""

from __future__ import annotations

import ast
import builtins
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..suite import SuiteError, TestSuite

if TYPE_CHECKING:  # the package imports this module
    from . import RowTests

NAME = "mbpp"
CHALLENGE = "mbpp_challenge"
COLUMNS = ("text", "code", "test_list", "test_setup_code", "challenge_test_list", "test_imports")


def found(row: Mapping[str, Any]) -> bool:
    """Whether the row has MBPP's ``test_list`` (a list, or JSON text of one)."""
    return isinstance(_asserts(row.get("test_list")), list)


def suite(row: Mapping[str, Any], challenge: bool = False) -> TestSuite:
    """The row's ``script`` suite, with ``challenge_test_list``'s asserts when ``challenge``;
    SuiteError when it has no assert or its asserts call no function."""
    asserts = [str(a) for a in _asserts(row.get("test_list")) or []]
    if challenge:
        asserts += [str(a) for a in _asserts(row.get("challenge_test_list")) or []]
    asserts = [a for a in asserts if a.strip()]
    if not asserts:
        raise SuiteError("an MBPP row needs at least one assert in 'test_list'")
    imports = [str(line) for line in _asserts(row.get("test_imports")) or []]
    setup = "\n".join([str(row.get("test_setup_code") or ""), *imports]).strip()
    entry = entry_point(asserts, setup)
    body = "".join(f"    {line}\n" for a in asserts for line in a.strip().splitlines())
    return TestSuite.from_dict({"mode": "script", "entry_point": entry,
                                "check": f"def check(candidate):\n{body}",
                                "definitions": setup if setup.strip() else None})


def entry_point(asserts: Sequence[str], setup: str = "") -> str:
    """The first function the asserts call by name that is neither a builtin nor defined by the
    setup code; SuiteError when there is none (or an assert does not parse)."""
    defined = _defined(setup)
    for text in asserts:
        try:
            tree = ast.parse(text.strip())
        except SyntaxError as exc:
            raise SuiteError(f"an MBPP assert does not parse: {text[:200]!r}: {exc}") from None
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    not hasattr(builtins, node.func.id) and node.func.id not in defined:
                return node.func.id
    raise SuiteError("no MBPP assert calls a function by name: the entry point cannot be found")


def _defined(setup: str) -> set[str]:
    try:
        tree = ast.parse(setup)
    except SyntaxError as exc:
        raise SuiteError(f"the MBPP row's test_setup_code does not parse: {exc}") from None
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def _asserts(value: Any) -> list[Any] | None:
    """A test list column: a list, or JSON text of one (a dataset saved as text); else None."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    return list(value) if isinstance(value, (list, tuple)) else None


def read_row(row: Mapping[str, Any]) -> RowTests:
    """The row's tests (``test_list``) as :class:`~rewardkit.sandbox.formats.RowTests`."""
    from . import RowTests

    return RowTests(suite(row), NAME, "python")


def read_challenge(row: Mapping[str, Any]) -> RowTests:
    """The row's tests with its ``challenge_test_list`` too."""
    from . import RowTests

    return RowTests(suite(row, challenge=True), CHALLENGE, "python")
