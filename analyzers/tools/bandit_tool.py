"""Bandit through its manager API: severity from bandit, CWE as bandit reports it.

Severity: bandit's LOW/MEDIUM/HIGH become low/medium/high, and HIGH severity
with HIGH confidence becomes critical. B110/B112 (try-except-pass/continue) are
skipped: rk-reliability's ``empty-except`` reports the same handlers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bandit.core.config import BanditConfig
from bandit.core.issue import Issue
from bandit.core.manager import BanditManager

from ..finding import Finding
from ..profile import Profile
from .base import Tool, Unit

_SKIPPED_TESTS = ["B110", "B112"]
_SEVERITY = {"LOW": "low", "MEDIUM": "medium", "HIGH": "high"}


class BanditTool(Tool):
    """All of bandit's default plugins except the two duplicated elsewhere."""

    name = "bandit"

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        logging.getLogger("bandit").setLevel(logging.CRITICAL)
        self._config = BanditConfig()

    def run(self, units: Sequence[Unit]) -> list[list[Finding]]:
        """One bandit pass over the batch's files (``# nosec`` honoured), split back per unit."""
        manager = BanditManager(self._config, "file", profile={"exclude": _SKIPPED_TESTS})
        manager.files_list = [str(u.path) for u in units]
        manager.run_tests()
        if manager.skipped:
            raise RuntimeError("; ".join(f"{name}: {why}" for name, why in manager.skipped))
        index = {str(u.path): i for i, u in enumerate(units)}
        out: list[list[Finding]] = [[] for _ in units]
        for issue in manager.get_issue_list():
            cwe = issue.cwe.id or None
            found = self.emit(issue.test_id, issue.text, issue.lineno, cwe, _severity(issue))
            if found is not None:
                out[index[issue.fname]].append(found)
        return out


def _severity(issue: Issue) -> str:
    """Bandit's severity as ours; HIGH severity with HIGH confidence is critical."""
    if issue.severity == "HIGH" and issue.confidence == "HIGH":
        return "critical"
    return _SEVERITY.get(issue.severity, "medium")
