"""Helpers for the analyzer tests: run one tool only, so each case is quick and focused."""

from __future__ import annotations

from typing import Any

from rewardkit.analyzers import analyze
from rewardkit.analyzers.engine import TOOLS
from rewardkit.analyzers.report import QualityReport


def only(tool: str, **thresholds: Any) -> dict[str, Any]:
    """A profile with every tool but ``tool`` switched off."""
    return {"tools": {t: t == tool for t in TOOLS}, "thresholds": thresholds}


def run_only(tool: str, code: str, **thresholds: Any) -> QualityReport:
    """Analyse ``code`` with one tool; fails the test if that tool errored."""
    report = analyze(code, only(tool, **thresholds))
    assert report.errors == (), report.errors
    return report


def rules(report: QualityReport, tool: str) -> set[str]:
    """The rule ids ``tool`` reported."""
    return {f.rule for f in report.findings if f.tool == tool}
