"""Real faults of real worker processes: a worker killed from outside is an infrastructure fault
(an error, never cached); a source that crashes its worker twice, alone, is the source's fault."""

from __future__ import annotations

import signal

import pytest
from analyzer_helpers import nested_max
from killer import killing

from rewardkit.analyzers import analyze_many

SLOW = nested_max(8)  # ~100 s of mypy
WORKER = "rewardkit.analyzers.analysis_worker"  # in every analysis worker's command line
CODES = ["def add(a: int, b: int) -> int:\n    return a + b\n", "import os\nprint(os.sep)\n"]


@pytest.mark.usefixtures("fresh_cache")
def test_killed_workers_are_an_infrastructure_fault_and_not_cached() -> None:
    with killing(WORKER, signal.SIGKILL):
        reports = analyze_many(CODES, workers=2)
    for report in reports:
        assert report.findings == ()
        assert [(e.tool, e.reason) for e in report.errors] == [
            ("rewardkit", "analysis worker killed by SIGKILL")]
    again = analyze_many(CODES, workers=2)  # fresh workers; the failures were not cached
    assert all(r.errors == () and r.findings for r in again)


@pytest.mark.slow
@pytest.mark.usefixtures("fresh_cache")
def test_a_source_that_crashes_its_worker_twice_is_to_blame() -> None:
    """A crash (SIGSEGV, as a stack overflow in a tool would give) while mypy is on the source,
    then again with the source alone: ``analysis-crash``, the lowest score."""
    with killing(WORKER, signal.SIGSEGV, after_s=8.0):
        (report,) = analyze_many([SLOW], {"thresholds": {"tool_timeout_s": 120.0}}, workers=1)
    assert report.errors == ()
    assert [(f.tool, f.rule) for f in report.findings] == [("rk-input", "analysis-crash")]
    assert "mypy crashed its process twice on this source (killed by SIGSEGV)" in report.findings[0].message
    assert report.score == 0.0
