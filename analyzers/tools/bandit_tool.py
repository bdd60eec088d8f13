"""Bandit through its manager API: severity from bandit, CWE as bandit reports it.

Severity: bandit's LOW/MEDIUM/HIGH become low/medium/high, and HIGH severity
with HIGH confidence becomes critical. B110/B112 (try-except-pass/continue) are
skipped: rk-reliability's ``empty-except`` reports the same handlers.  One
manager per source (they cost microseconds), so progress is per source; bandit
turns an exception in a file into a skipped file, and the manager here keeps
the exception, so that the tool runner can tell a source that defeated bandit
from a bandit fault.  ``# nosec`` is ignored unless the profile honours suppressions.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from bandit.core.config import BanditConfig
from bandit.core.issue import Issue
from bandit.core.manager import BanditManager

from ..finding import Finding
from ..profile import Profile
from .base import Progress, Tool, Unit

_SKIPPED_TESTS = ["B110", "B112"]
_SEVERITY = {"LOW": "low", "MEDIUM": "medium", "HIGH": "high"}


class _Manager(BanditManager):
    """A manager that keeps the exception behind a file bandit skipped."""

    crash: Exception | None = None

    def _execute_ast_visitor(self, *args: Any) -> Any:
        try:
            return super()._execute_ast_visitor(*args)
        except Exception as exc:
            self.crash = exc
            raise


class BanditTool(Tool):
    """All of bandit's default plugins except the two duplicated elsewhere."""

    name = "bandit"

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        logging.getLogger("bandit").setLevel(logging.CRITICAL)
        self._config = BanditConfig()
        self._ignore_nosec = not profile.threshold("honour_suppressions")

    def run(self, units: Sequence[Unit], progress: Progress) -> list[list[Finding]]:
        """Bandit's issues, source by source; a source bandit skipped raises, from its cause."""
        out: list[list[Finding]] = []
        for unit in units:
            progress([unit])
            manager = _Manager(self._config, "file", profile={"exclude": _SKIPPED_TESTS},
                               ignore_nosec=self._ignore_nosec)
            manager.files_list = [str(unit.path)]
            manager.run_tests()
            if manager.skipped:
                why = "; ".join(f"{name}: {reason}" for name, reason in manager.skipped)
                raise RuntimeError(why) from manager.crash
            out.append(self.keep(
                self.emit(issue.test_id, issue.text, issue.lineno, issue.cwe.id or None, _severity(issue))
                for issue in manager.get_issue_list()))
        return out


def _severity(issue: Issue) -> str:
    """Bandit's severity as ours; HIGH severity with HIGH confidence is critical."""
    if issue.severity == "HIGH" and issue.confidence == "HIGH":
        return "critical"
    return _SEVERITY.get(issue.severity, "medium")
