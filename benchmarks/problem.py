"""The one problem type every dataset loads into.

A :class:`Problem` is what a benchmark evaluates against: a statement, starter
code, the language, a test suite (already materialised from a generator where
the dataset has one) and reference solutions.  References carry their
measured metrics once :mod:`rewardkit.benchmarks.references` has measured them
on this machine; absolute numbers do not carry across machines, so datasets
ship code, not timings.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from ..sandbox import TestSuite

DIFFICULTIES = ("easy", "medium", "hard")


@dataclass
class Reference:
    """A reference solution: its code, a label saying what kind it is, and metrics once measured.

    ``metrics`` holds ``passed``, ``time_s``, ``peak_memory_kb``,
    ``integral_kb_s`` (and ``spread``) as the sandbox reports them.
    """

    code: str
    label: str = ""
    metrics: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {"code": self.code, "label": self.label, "metrics": self.metrics}


@dataclass
class Problem:
    """One benchmark problem; ``problem_id`` is the dataset's own id (``HumanEval/0``, ...)."""

    problem_id: str
    statement: str
    tests: TestSuite
    language: str = "python"
    title: str = ""
    starter_code: str = ""
    difficulty: str = ""
    tags: tuple[str, ...] = ()
    references: list[Reference] = field(default_factory=list)
    source: str = ""  # the dataset it came from: mini, venus, mercury, apps, humaneval, a path
    extra: dict[str, Any] = field(default_factory=dict)

    def untestable(self) -> str | None:
        """Why the problem has no runnable tests, or None: a stdio/call suite needs a case, a
        script suite an ``entry_point`` and a ``check`` (in Python: source that defines ``check``)."""
        return missing_tests(self.tests, self.language)

    @property
    def measured(self) -> bool:
        """Whether every reference has metrics (filled by ``references.measure_references``)."""
        return all(r.metrics is not None for r in self.references)

    def passing_references(self) -> list[Reference]:
        """References measured on this machine that pass the tests."""
        return [r for r in self.references if r.metrics and r.metrics.get("passed")]

    def reference_values(self, key: str) -> list[float]:
        """One metric (``time_s``, ``peak_memory_kb``, ``integral_kb_s``) of the passing references."""
        return [float(r.metrics[key]) for r in self.passing_references() if r.metrics]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (the tests in :meth:`TestSuite.to_dict` form)."""
        return {"problem_id": self.problem_id, "title": self.title, "statement": self.statement,
                "starter_code": self.starter_code, "language": self.language,
                "difficulty": self.difficulty, "tags": list(self.tags),
                "tests": self.tests.to_dict(), "references": [r.to_dict() for r in self.references],
                "source": self.source, "extra": self.extra}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Problem:
        """Read back :meth:`to_dict` output (the form of a local JSONL problem file)."""
        refs = [Reference(r["code"], r.get("label", ""), r.get("metrics")) if isinstance(r, dict)
                else Reference(str(r)) for r in data.get("references", [])]
        return cls(str(data["problem_id"]), str(data.get("statement", "")),
                   TestSuite.from_dict(data["tests"]), str(data.get("language", "python")),
                   str(data.get("title", "")), str(data.get("starter_code", "")),
                   str(data.get("difficulty", "")), tuple(data.get("tags", ())), refs,
                   str(data.get("source", "")), dict(data.get("extra", {})))


def missing_tests(suite: TestSuite, language: str = "python") -> str | None:
    """What keeps ``suite`` from testing anything (see :meth:`Problem.untestable`), or None."""
    if suite.mode == "unittest":  # TestSuite.from_dict made sure it has test code
        return None
    if suite.mode != "script":
        return None if suite.cases else f"its {suite.mode} suite has no cases"
    missing = [what for what, absent in (("'entry_point'", not (suite.entry_point or "").strip()),
                                         ("'check'", not (suite.check or "").strip())) if absent]
    if missing:
        return f"its script suite has no {' and no '.join(missing)}"
    if language == "python" and not _defines(str(suite.check), "check"):
        return "its check source defines no check(candidate)"
    return None


def _defines(source: str, name: str) -> bool:
    """Whether Python ``source`` binds ``name`` anywhere (a def, a class, an assignment, an import)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name) in (name, "*"):
            return True
    return False
