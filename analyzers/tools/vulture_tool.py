"""Vulture: dead code (CWE-561). One scanner per unit, so names never leak across sources.

Vulture honours ``# noqa`` anywhere on a line, in a string too, and counts lines
with ``str.splitlines``: unless the profile honours suppressions, its copy of
the text has every ``# noqa`` defused (:mod:`..suppressions`).

A solution is called by a test harness that vulture never sees: its public
top-level functions and classes and their public methods (``solution``,
``class Solution: def twoSum``) are its interface, not dead code, unless the
profile sets ``vulture_report_interface``.  Private (``_name``) and nested
definitions, imports and variables are still checked.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from vulture import Vulture

from ..finding import Finding
from ..profile import Profile
from ..suppressions import defuse_vulture_noqa
from .base import PerUnitTool, Unit

DEFINITIONS = ("function", "class", "method", "property")  # vulture's kinds a harness may call


class VultureTool(PerUnitTool):
    """Unused imports, definitions and variables, and unreachable code."""

    name = "vulture"

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        self._honour = bool(profile.threshold("honour_suppressions"))
        self._interface = bool(profile.threshold("vulture_report_interface"))

    def check(self, unit: Unit) -> Iterable[Finding | None]:
        """Dead code vulture reports at or above the profile's minimum confidence."""
        scanner = Vulture()
        scanner.scan(unit.text if self._honour else defuse_vulture_noqa(unit.text),
                     filename=str(unit.path))
        min_conf = int(self.profile.threshold("vulture_min_confidence"))
        interface = set() if self._interface else interface_lines(unit.tree)
        for item in scanner.get_unused_code(min_confidence=min_conf):
            if item.typ in DEFINITIONS and item.first_lineno in interface:
                continue
            kind = item.typ.replace("_", "-")
            rule = kind if kind == "unreachable-code" else f"unused-{kind}"
            yield self.emit(
                rule, f"{item.message} ({item.confidence}% confidence)", item.first_lineno
            )


def interface_lines(tree: ast.Module) -> set[int]:
    """The lines (``def``/``class`` and decorators) of the public top-level functions and
    classes and of those classes' public methods."""
    lines: set[int] = set()
    for node in _public(tree.body):
        members = _public(node.body) if isinstance(node, ast.ClassDef) else []
        for definition in [node, *members]:
            first = min([d.lineno for d in definition.decorator_list] + [definition.lineno])
            lines.update(range(first, definition.lineno + 1))
    return lines


def _public(body: list[ast.stmt]) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    return [node for node in body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and not node.name.startswith("_")]
