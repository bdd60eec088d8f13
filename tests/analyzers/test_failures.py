"""Inside a worker's tool runner: a tool that fails is named in ``errors`` for the source that breaks it
(or blamed on the source, when the source caused it); the other tools and sources still count.

The tools are made to fail here by replacing their code in this process, on a runner of its own;
real failures of real workers are in ``test_analysis_worker_faults``.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from rewardkit.analyzers import load_profile
from rewardkit.analyzers.tool_runner import ToolRunner
from rewardkit.analyzers.tools.base import Progress, Unit
from rewardkit.analyzers.tools.radon_tool import RadonTool

CODE = "import os\ntry:\n    x = 1\nexcept:\n    pass\n"
PROFILE = {"tools": {"mypy": False, "pylint": False}}


def _runner() -> ToolRunner:
    return ToolRunner(load_profile(PROFILE))


def test_failing_tool_is_reported_and_others_count(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: RadonTool, units: Sequence[Unit], progress: Progress) -> list[list[object]]:
        raise RuntimeError("radon exploded")

    monkeypatch.setattr(RadonTool, "run", broken)
    (report,) = _runner().analyze([CODE])
    assert [(e.tool, e.reason) for e in report.errors] == [("radon", "RuntimeError: radon exploded")]
    assert {"vulture", "rk-reliability"} <= {f.tool for f in report.findings}


def test_failure_is_isolated_to_the_source_that_causes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    original = RadonTool.check

    def picky(self: RadonTool, unit: Unit) -> object:
        if "BOOM" in unit.text:
            raise ValueError("bad source")
        return original(self, unit)

    monkeypatch.setattr(RadonTool, "check", picky)
    fine, broken = _runner().analyze(["x = 1\n", "BOOM = 1\n"])
    assert fine.errors == ()
    assert [e.tool for e in broken.errors] == ["radon"]


def test_a_recursion_error_is_blamed_on_the_source(monkeypatch: pytest.MonkeyPatch) -> None:
    def recurse(self: RadonTool, unit: Unit) -> object:
        if "DEEP" in unit.text:
            try:
                raise RecursionError("maximum recursion depth exceeded")
            except RecursionError as exc:  # tools wrap it, as pylint and bandit do
                raise RuntimeError("fatal error while checking") from exc
        return []

    monkeypatch.setattr(RadonTool, "check", recurse)
    fine, deep = _runner().analyze(["x = 1\n", "DEEP = 1\n"])
    assert fine.errors == () and deep.errors == ()
    assert [(f.tool, f.rule) for f in deep.findings] == [("rk-input", "analysis-recursion")]
    assert deep.score == 0.0


def test_a_tool_that_cannot_start_fails_every_source(monkeypatch: pytest.MonkeyPatch) -> None:
    def cannot_start(self: RadonTool, *args: object) -> None:
        raise OSError("no radon here")

    monkeypatch.setattr(RadonTool, "__init__", cannot_start)
    reports = _runner().analyze(["x = 1\n", "y = 2\n"])
    assert [[e.tool for e in r.errors] for r in reports] == [["radon"], ["radon"]]
    assert "unavailable: OSError: no radon here" in reports[0].errors[0].reason
