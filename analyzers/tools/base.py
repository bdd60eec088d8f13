"""What every tool adapter shares: the unit of work and the two-step adapter shape.

An adapter is configured once from a profile (``__init__``) and then run over
batches of units (``run``), returning one list of findings per unit, in order.
``run`` calls ``progress(units)`` before it works on a subset of the batch, as
finely as the tool allows: the analysis pool blames the units last named when a
tool overruns its time budget (:mod:`..pool`).
"""

from __future__ import annotations

import ast
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import ClassVar

from ..finding import Finding
from ..profile import Profile

Progress = Callable[[Sequence["Unit"]], None]


@dataclass(frozen=True)
class Unit:
    """One parsed source: unique module name, text, AST and its file on disk."""

    name: str
    text: str
    tree: ast.Module
    path: Path

    @cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node of the tree (``ast.walk`` order), computed once for all checks."""
        return list(ast.walk(self.tree))

    @cached_property
    def parents(self) -> dict[int, ast.AST]:
        """Parent of each node, keyed by ``id(node)``."""
        return {id(c): p for p in self.nodes for c in ast.iter_child_nodes(p)}


class Tool(ABC):
    """A configured adapter around one analysis tool."""

    name: ClassVar[str]

    def __init__(self, profile: Profile) -> None:
        self.profile = profile

    @abstractmethod
    def run(self, units: Sequence[Unit], progress: Progress) -> list[list[Finding]]:
        """Findings per unit, aligned with ``units``. May raise; the tool runner records it."""

    def emit(
        self, rule: str, message: str, line: int, cwe: int | None = None,
        severity: str | None = None,
    ) -> Finding | None:
        """A finding of this tool under the profile (None when the rule is off)."""
        return self.profile.finding(self.name, rule, message, line, cwe, severity)

    def keep(self, findings: Iterable[Finding | None]) -> list[Finding]:
        """Drop the switched-off (None) entries."""
        return [f for f in findings if f is not None]


class PerUnitTool(Tool):
    """An adapter that looks at one unit at a time."""

    def run(self, units: Sequence[Unit], progress: Progress) -> list[list[Finding]]:
        out = []
        for unit in units:
            progress([unit])
            out.append(self.keep(self.check(unit)))
        return out

    @abstractmethod
    def check(self, unit: Unit) -> Iterable[Finding | None]:
        """Findings of one unit (None entries are dropped)."""
