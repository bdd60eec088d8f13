"""An analysis worker stays near its warm size however many sources it analyses.

mypy raises the garbage collector's thresholds for the whole process, so each run's garbage
used to stay: ~5 MiB a run, until after ~370 runs the worker scored innocent sources as
``analysis-memory`` (quality 0), then failed.  Found by the service's load test.
"""

from __future__ import annotations

import pytest
from killer import children_with

from rewardkit.analyzers import analyze_many, batch, pool, shutdown_pool

# ~5 MiB a run kept would grow the worker by ~195 MiB between run 20 and the last, twice the bound
RUNS = 60


def _worker_rss_mb() -> float:
    workers = children_with("rewardkit.analyzers.analysis_worker")
    assert len(workers) == 1, workers
    return float(workers[0].memory_info().rss) / 2**20


@pytest.mark.slow
def test_a_worker_does_not_keep_each_runs_garbage() -> None:
    shutdown_pool()
    sizes = []
    for i in range(RUNS):
        report = analyze_many([f"# run {i}\nn = int(input())\nprint(n * 3)\n"], workers=1)[0]
        assert not report.errors and report.score > 0, report
        if i in (20, RUNS - 1):
            sizes.append(_worker_rss_mb())
    shutdown_pool()
    assert sizes[1] - sizes[0] < 100, f"the worker grew from {sizes[0]:.0f} to {sizes[1]:.0f} MiB"


def test_a_worker_grown_past_half_its_limit_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker near its memory limit would blame the next source for running out: it is replaced
    once its address space passes half the limit (set here below a warm worker's size)."""
    shutdown_pool()
    first = [analyze_many([f"# first {i}\nx = {i}\n"], workers=1) and _worker_pid() for i in range(2)]
    assert first[0] is not None and first[0] == first[1]  # below the mark, a worker is kept warm
    monkeypatch.setattr(pool, "RECYCLE_MB", 1)
    reports = analyze_many(["# then\nx = 1\n"], workers=1)
    assert not reports[0].errors and _worker_pid() is None  # above it, the worker was let go
    shutdown_pool()


def _worker_pid() -> int | None:
    """The idle worker kept by the pool, if any."""
    idle = batch._pool._idle  # the pool's own record of whom it keeps
    return idle[0].process.pid if idle else None
