"""Named measurement protocols: a paper's limits, repeats, statistic, clock and CPU pinning.

``Sandbox(protocol="mercury")`` measures the way the Mercury paper did, so its
numbers can be compared with the paper's.  Sources (facts only):

``rewardkit``
    This library's defaults: ``Limits()``, one run per measurement (median and
    spread when ``repeats`` is raised), CPU time of the solution's own work, not pinned.
``monolith``
    Afterburner paper, Appendix H and §4 (GRPO): each Monolith worker is a container with
    1 vCPU pinned and 1 GB of memory, a 90 s timeout; time and peak memory come from
    one execution (``time -v``; the published Monolith, ``llm_sandbox/docker.py``,
    reports ``duration`` as the span of its VmRSS sampling log: elapsed time).  The
    paper's 16 evaluations per code are for its bootstrap CIs, not for one figure.
``mercury``
    Mercury paper, Appendix A.3: runtime is the elapsed time of solution
    instantiation plus evaluation of every test case; the published evaluator
    (``src/evaluator.py``, ``Evaluator.evaluate``) gives each run a 30 s timeout
    over the whole suite and sets no memory limit (``reliability_guard()`` without
    a size).  Three runs combined by their mean, as the issue specifies; the paper
    and its code time a single run.  No memory limit is not expressible, so the
    memory limit is rewardkit's 1024 MB.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from .types import ExecutionResult, Limits

STATISTICS = ("median", "mean")
CLOCKS = ("cpu", "wall")


@dataclass(frozen=True)
class MeasurementProtocol:
    """How one measurement is taken: per-test-case limits, runs, how runs combine, which clock, pinning."""

    name: str
    limits: Limits
    repeats: int
    statistic: str
    clock: str
    cpus: int | None
    description: str

    def __post_init__(self) -> None:
        if self.statistic not in STATISTICS:
            raise ValueError(f"statistic must be one of {STATISTICS}, got {self.statistic!r}")
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {CLOCKS}, got {self.clock!r}")
        if self.repeats < 1:
            raise ValueError("repeats must be at least 1")
        if self.cpus is not None and self.cpus < 1:
            raise ValueError("cpus must be None (not pinned) or at least 1")

    def time_of(self, result: ExecutionResult) -> float:
        """What "time" means under this protocol: CPU seconds (``time_s``) or elapsed (``wall_s``)."""
        return result.wall_s if self.clock == "wall" else result.time_s

    def combine(self, values: Sequence[float]) -> float:
        """Repeated values combined by this protocol's statistic."""
        return statistics.fmean(values) if self.statistic == "mean" else statistics.median(values)


PROTOCOLS: dict[str, MeasurementProtocol] = {
    "rewardkit": MeasurementProtocol(
        "rewardkit", Limits(), repeats=1, statistic="median", clock="cpu", cpus=None,
        description="rewardkit's defaults: CPU time of the solution's own work, median of repeats"),
    "monolith": MeasurementProtocol(
        "monolith", Limits(time_s=90.0, memory_mb=1024, suite_time_s=90.0), repeats=1,
        statistic="mean", clock="wall", cpus=1,
        description="Monolith (Afterburner paper, Appendix H): 90 s, 1 GB, one pinned CPU, "
                    "one elapsed-time run per measurement"),
    "mercury": MeasurementProtocol(
        "mercury", Limits(time_s=30.0, suite_time_s=30.0), repeats=3, statistic="mean",
        clock="wall", cpus=None,
        description="Mercury (Mercury paper, Appendix A.3): elapsed time over all test cases, "
                    "30 s timeout, mean of 3 runs"),
}


def protocol(name: str | MeasurementProtocol) -> MeasurementProtocol:
    """The protocol called ``name`` (a protocol is returned as is); ValueError naming the choices."""
    if isinstance(name, MeasurementProtocol):
        return name
    try:
        return PROTOCOLS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown measurement protocol {name!r}; choose one of "
                         f"{', '.join(sorted(PROTOCOLS))}") from None
