"""Every tool has a hard per-source time budget: overrunning it is the source's fault, and the
rest of the batch is neither blamed nor held up."""

from __future__ import annotations

import threading
import time

import pytest
from analyzer_helpers import nested_max

from rewardkit.analyzers import QualityReport, analyze_many, clear_cache

BUDGET_S = 3.0
PROFILE = {"thresholds": {"tool_timeout_s": BUDGET_S}}
SLOW = nested_max(8)  # ~100 s of mypy
OTHERS = [f"def add_{i}(a: int, b: int) -> int:\n    return a + b * {i}\n" for i in range(10)]


def _is_timeout(report: QualityReport) -> bool:
    return [(f.tool, f.rule) for f in report.findings] == [("rk-input", "analysis-timeout")]


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_cache")
def test_a_slow_source_spends_its_own_budget_and_scores_the_lowest() -> None:
    alone = analyze_many(OTHERS, PROFILE, workers=2)
    clear_cache()
    start = time.monotonic()
    reports = analyze_many([*OTHERS[:5], SLOW, *OTHERS[5:]], PROFILE, workers=2)
    elapsed = time.monotonic() - start
    slow = reports.pop(5)
    assert slow.errors == () and _is_timeout(slow), slow
    assert "mypy did not finish this source within its 3 s budget" in slow.findings[0].message
    assert slow.score == 0.0
    assert reports == alone  # the others: their normal reports, not blamed
    assert elapsed < BUDGET_S + 8, elapsed  # the budget, a fresh worker's start, the others' work


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_cache")
def test_the_budget_holds_off_the_main_thread() -> None:
    """A server or an async reward analyses from worker threads, where no alarm rings."""
    reports: list[QualityReport] = []
    thread = threading.Thread(target=lambda: reports.extend(analyze_many([SLOW], PROFILE)))
    start = time.monotonic()
    thread.start()
    thread.join(timeout=120)
    assert time.monotonic() - start < BUDGET_S + 8
    (report,) = reports
    assert report.errors == () and _is_timeout(report)
