"""Vulture: dead code (CWE-561). One scanner per unit, so names never leak across sources.

Vulture honours ``# noqa`` anywhere on a line, in a string too, and counts lines
with ``str.splitlines``: unless the profile honours suppressions, its copy of
the text has every ``# noqa`` defused (:mod:`..suppressions`).
"""

from __future__ import annotations

from collections.abc import Iterable

from vulture import Vulture

from ..finding import Finding
from ..profile import Profile
from ..suppressions import defuse_vulture_noqa
from .base import PerUnitTool, Unit


class VultureTool(PerUnitTool):
    """Unused imports, definitions and variables, and unreachable code."""

    name = "vulture"

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        self._honour = bool(profile.threshold("honour_suppressions"))

    def check(self, unit: Unit) -> Iterable[Finding | None]:
        """Dead code vulture reports at or above the profile's minimum confidence."""
        scanner = Vulture()
        scanner.scan(unit.text if self._honour else defuse_vulture_noqa(unit.text),
                     filename=str(unit.path))
        min_conf = int(self.profile.threshold("vulture_min_confidence"))
        for item in scanner.get_unused_code(min_confidence=min_conf):
            kind = item.typ.replace("_", "-")
            rule = kind if kind == "unreachable-code" else f"unused-{kind}"
            yield self.emit(
                rule, f"{item.message} ({item.confidence}% confidence)", item.first_lineno
            )
