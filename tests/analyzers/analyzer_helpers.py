"""Helpers for the analyzer tests: run one tool only, so each case is quick and focused."""

from __future__ import annotations

from typing import Any

from rewardkit.analyzers import analyze
from rewardkit.analyzers.report import QualityReport
from rewardkit.analyzers.tool_runner import TOOLS


def only(tool: str, **thresholds: Any) -> dict[str, Any]:
    """A profile with every tool but ``tool`` switched off, and nothing done before it runs
    (``honour_suppressions``: no suppression erasure, no hidden-code check)."""
    return {"tools": {t: t == tool for t in TOOLS},
            "thresholds": {"honour_suppressions": True, **thresholds}}


def run_only(tool: str, code: str, **thresholds: Any) -> QualityReport:
    """Analyse ``code`` with one tool; fails the test if that tool errored."""
    report = analyze(code, only(tool, **thresholds))
    assert report.errors == (), report.errors
    return report


def rules(report: QualityReport, tool: str) -> set[str]:
    """The rule ids ``tool`` reported."""
    return {f.rule for f in report.findings if f.tool == tool}


def nested_max(levels: int) -> str:
    """~200 bytes that take mypy minutes: each level doubles its overload inference (7: ~17 s, 8: ~100 s)."""
    expr = "xs"
    for i in range(levels):
        expr = f"max({expr}, key=lambda v{i}: v{i})"
    return f"xs = [1, 2]\nbiggest = {expr}\n"
