"""``analyze_many(..., backend="ray")`` on a local Ray instance: same reports, faults as errors."""

from __future__ import annotations

import os
from typing import Any

import pytest

from rewardkit.analyzers import QualityReport, analyze_many, batch

ray = pytest.importorskip("ray", reason="the ray package is not installed (pip install 'rewardkit[ray]')")
pytestmark = pytest.mark.usefixtures("ray_instance")

CODES: list[object] = [
    "import os\nimport subprocess\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n",
    "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n",
    "def broken(:\n",
    b"x = eval(input())\n",
    "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n",  # a duplicate
    "try:\n    pass\nexcept:\n    pass\n",
]


def summary(report: QualityReport) -> tuple[Any, ...]:
    return report.score, report.findings, report.errors


@pytest.mark.usefixtures("fresh_cache")
def test_ray_reports_equal_local_ones() -> None:
    local = analyze_many(CODES, workers=1)
    batch.clear_cache()
    on_ray = analyze_many(CODES, backend="ray")
    assert [summary(r) for r in on_ray] == [summary(r) for r in local]
    assert not any(r.errors for r in on_ray)
    assert {f.rule for f in on_ray[0].findings} >= {"B602"}


@pytest.mark.usefixtures("fresh_cache")
def test_a_dead_ray_worker_gives_errors_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    def dies(profile_data: dict[str, Any], codes: list[object]) -> list[QualityReport]:
        os._exit(1)

    monkeypatch.setattr(batch, "_work", dies)
    reports = analyze_many(CODES[:3], backend="ray", workers=2)
    assert len(reports) == 3
    for report in reports:
        assert [(e.tool, e.reason) for e in report.errors] == [
            ("rewardkit", "analysis worker failed: WorkerCrashedError")]
    monkeypatch.undo()
    assert not any(r.errors for r in analyze_many(CODES[:3], backend="ray"))  # failures were not cached


def test_unknown_backend_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown analysis backend"):
        analyze_many(CODES, backend="dask")
