"""A tool that fails or overruns is named in ``errors``; the others still count."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest

from rewardkit.analyzers import QualityReport, analyze, analyze_many
from rewardkit.analyzers.tools.base import Unit
from rewardkit.analyzers.tools.radon_tool import RadonTool

CODE = "import os\ntry:\n    x = 1\nexcept:\n    pass\n"


@pytest.mark.usefixtures("fresh_cache")
def test_failing_tool_is_reported_and_others_count(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: RadonTool, units: Sequence[Unit]) -> list[list[object]]:
        raise RuntimeError("radon exploded")

    monkeypatch.setattr(RadonTool, "run", broken)
    report = analyze(CODE, {"tools": {"mypy": False, "pylint": False}})
    assert [(e.tool, e.reason) for e in report.errors] == [
        ("radon", "RuntimeError: radon exploded")
    ]
    assert {"vulture", "rk-reliability"} <= {f.tool for f in report.findings}


@pytest.mark.usefixtures("fresh_cache")
def test_failure_is_isolated_to_the_source_that_causes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    original = RadonTool.check

    def picky(self: RadonTool, unit: Unit) -> object:
        if "BOOM" in unit.text:
            raise ValueError("bad source")
        return original(self, unit)

    monkeypatch.setattr(RadonTool, "check", picky)
    reports = analyze_many(["x = 1\n", "BOOM = 1\n"], {"tools": {"mypy": False}}, workers=1)
    assert reports[0].errors == ()
    assert [e.tool for e in reports[1].errors] == ["radon"]


@pytest.mark.usefixtures("fresh_cache")
def test_tool_timeout_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(self: RadonTool, units: Sequence[Unit]) -> list[list[object]]:
        time.sleep(5)
        return [[] for _ in units]

    monkeypatch.setattr(RadonTool, "run", slow)
    start = time.perf_counter()
    report = analyze(CODE, {"tools": {"mypy": False}, "thresholds": {"tool_timeout_s": 0.2}})
    assert time.perf_counter() - start < 3
    assert [e.tool for e in report.errors] == ["radon"]
    assert "timed out" in report.errors[0].reason
    assert any(f.tool == "rk-reliability" for f in report.findings)


@pytest.mark.usefixtures("fresh_cache")
def test_reports_with_errors_are_not_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    profile = {"tools": {"mypy": False, "pylint": False}}
    monkeypatch.setattr(RadonTool, "run", lambda self, units: 1 / 0)
    assert analyze(CODE, profile).errors
    monkeypatch.undo()
    assert analyze(CODE, profile).errors == ()


@pytest.mark.usefixtures("fresh_cache")
def test_tool_time_limit_holds_off_the_main_thread() -> None:
    """A server or an async reward analyses from worker threads, where no alarm rings."""
    profile = {"tools": {"mypy": False}, "thresholds": {"tool_timeout_s": 0.001}}
    reports: list[object] = []
    worker = threading.Thread(target=lambda: reports.extend(analyze_many([CODE], profile)))
    worker.start()
    worker.join(timeout=120)
    (report,) = reports
    assert isinstance(report, QualityReport)
    assert any("timed out" in error.reason for error in report.errors)
