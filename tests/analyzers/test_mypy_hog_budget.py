"""A ~200-byte source that keeps mypy busy for minutes costs its budget, in seconds, and only its
own call: it scores the lowest quality within the default budget, and an analysis running in
another thread meanwhile is not held up by it.  The budget is CPU time: an honest source whose
worker gets no CPU for a while is not blamed for it."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from analyzer_helpers import nested_max
from killer import children_with

from rewardkit.analyzers import QualityReport, analyze, analyze_many
from rewardkit.analyzers.pool import WALL_FACTOR
from rewardkit.analyzers.profile import load_profile

HOG = nested_max(8)  # ~100 s of mypy
HONEST = "def add(a: int, b: int) -> int:\n    return a + b\n"
WORKER = "rewardkit.analyzers.analysis_worker"  # in every analysis worker's command line
START_S = 8.0  # a fresh worker's start (the killed one is replaced), on a loaded machine


def _timed_out(report: QualityReport) -> bool:
    return [(f.tool, f.rule) for f in report.findings] == [("rk-input", "analysis-timeout")]


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_cache")
def test_the_mypy_hog_scores_the_lowest_within_the_default_budget() -> None:
    budget = load_profile().tool_budget("mypy")
    assert budget <= 10, "a reward's budget is seconds, not tens of seconds"
    started = time.monotonic()
    report = analyze(f"# {time.time_ns()}\n{HOG}")  # a source no cache has seen
    elapsed = time.monotonic() - started
    assert report.errors == () and _timed_out(report), report
    assert f"mypy did not finish this source within its {budget:g} s budget" in report.findings[0].message
    assert report.score == 0.0
    assert elapsed < WALL_FACTOR * budget + START_S, elapsed  # CPU time; wall clock on a busy host


def test_per_tool_budgets_are_bounded_by_tool_timeout_s() -> None:
    profile = load_profile({"thresholds": {"tool_timeout_s": 1.5, "tool_budget_s": {"radon": 0.5}}})
    assert profile.tool_budget("radon") == 0.5
    assert profile.tool_budget("mypy") == 1.5
    assert profile.tool_budget("pylint") == 1.5  # the default's 3 s entry, bounded
    with pytest.raises(ValueError, match="unknown tool 'nope'"):
        load_profile({"thresholds": {"tool_budget_s": {"nope": 1.0}}})
    with pytest.raises(ValueError, match="positive number"):
        load_profile({"thresholds": {"tool_budget_s": {"mypy": 0}}})


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_cache")
def test_a_hog_holds_only_its_own_call() -> None:
    """Two threads analyse at once (as the reward service's requests do): the honest source's
    answer does not wait for the hog's budget."""
    profile = {"thresholds": {"tool_timeout_s": 4.0}}
    warm = [HONEST.replace("add", f"warm_{i}") for i in range(2)]
    analyze_many(warm, profile, workers=2)  # two idle workers: one for each thread
    hog: list[QualityReport] = []
    thread = threading.Thread(target=lambda: hog.extend(analyze_many([HOG], profile, workers=1)))
    started = time.monotonic()
    thread.start()
    time.sleep(0.5)  # the hog is on one of them
    honest = analyze_many([HONEST], profile, workers=1)
    honest_s = time.monotonic() - started
    thread.join(60)
    hog_s = time.monotonic() - started
    assert _timed_out(hog[0]) and honest[0].errors == () and not _timed_out(honest[0])
    assert honest_s < hog_s / 2, (honest_s, hog_s)


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_cache")
def test_a_worker_starved_of_cpu_does_not_make_its_source_overrun() -> None:
    """mypy takes about 2 s of CPU on this source, within its 5 s budget; its worker is stopped
    for 4.5 s of it (as a host busy with other work would starve it).  The source gets its
    normal report: the budget counts CPU time, and the wall clock only past twice the budget."""
    profile = {"thresholds": {"tool_timeout_s": 5.0}}
    source = f"# {time.time_ns()}\n{nested_max(6)}"
    analyze_many([HONEST], profile, workers=1)  # a warm worker, which takes the job at once
    reports: list[QualityReport] = []
    thread = threading.Thread(target=lambda: reports.extend(analyze_many([source], profile, workers=1)))
    thread.start()
    time.sleep(0.3)  # mypy is on the source
    workers = [child.pid for child in children_with(WORKER)]
    for pid in workers:
        os.kill(pid, signal.SIGSTOP)
    time.sleep(4.5)
    for pid in workers:
        os.kill(pid, signal.SIGCONT)
    thread.join(60)
    (report,) = reports
    assert report.errors == () and not _timed_out(report), report
    assert "mypy" in {f.tool for f in report.findings}
