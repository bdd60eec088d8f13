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
    a size).  Three runs combined by their mean, as rewardkit chose for this protocol; the paper
    and its code time a single run.  No memory limit is not expressible, so the
    memory limit is rewardkit's 1024 MB.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from .types import ExecutionResult, Limits

STATISTICS = ("median", "mean")
# the metrics a paired measurement compares with the neighbouring baseline runs
PAIRED_METRICS = ("time_s", "wall_s", "peak_memory_kb", "integral_kb_s")
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


@dataclass
class PairedResult:
    """A baseline and candidates measured in interleaved rounds on one worker.

    ``baseline`` and each of ``candidates`` are their runs combined as
    :meth:`Sandbox.run` combines repeats (same verdicts, medians, spread).
    ``ratios[i][metric]`` holds candidate ``i``'s per-round ratios to the
    baseline (:func:`paired_ratios`), empty unless both passed every run;
    ``noise[metric]`` is the spread of one such ratio (:func:`pair_noise`);
    ``rounds`` is how many rounds were run.
    """

    baseline: ExecutionResult
    candidates: list[ExecutionResult]
    ratios: list[dict[str, list[float]]] = field(default_factory=list)
    noise: dict[str, float] = field(default_factory=dict)
    rounds: int = 0


def paired_ratios(baselines: Sequence[ExecutionResult],
                  rounds: Sequence[Sequence[tuple[int, ExecutionResult]]],
                  count: int) -> list[dict[str, list[float]]]:
    """Each candidate's per-round ratios to the baseline runs on either side of its round.

    ``baselines[r]`` ran just before round ``r`` and ``baselines[r + 1]`` just after it;
    ``rounds[r]`` lists ``(candidate index, result)`` in the order they ran.  The baseline a
    run is compared with is interpolated between the two by the run's place in its round, so
    a host whose speed drifts steadily during a round shifts both sides alike.  A candidate
    (or a round) with a run that did not pass, or a baseline value of 0, gives no ratio.
    """
    ratios: list[dict[str, list[float]]] = [{name: [] for name in PAIRED_METRICS} for _ in range(count)]
    # a round with no baseline run after it (the measurement was cut short) gives no ratio
    for (before, after), runs in zip(itertools.pairwise(baselines), rounds, strict=False):
        if not (before.passed and after.passed):
            continue
        for place, (candidate, result) in enumerate(runs):
            if result.passed:
                weight = (place + 1) / (len(runs) + 1)
                for name, ratio in _ratios(result, before, after, weight).items():
                    ratios[candidate][name].append(ratio)
    return ratios


def _ratios(result: ExecutionResult, before: ExecutionResult, after: ExecutionResult,
            weight: float) -> dict[str, float]:
    """``result``'s ratio to the baseline interpolated between ``before`` and ``after`` at
    ``weight``, per metric whose reference is above 0."""
    found = {}
    for name in PAIRED_METRICS:
        reference = (1 - weight) * float(getattr(before, name)) + weight * float(getattr(after, name))
        if reference > 0:
            found[name] = float(getattr(result, name)) / reference
    return found


def pair_noise(ratios: Sequence[dict[str, list[float]]],
               baselines: Sequence[ExecutionResult]) -> dict[str, float]:
    """The spread of one paired ratio, per metric: a robust standard deviation of its logarithm.

    It is taken from the differences that are noise alone: between two rounds' ratios of one
    candidate, and between successive runs of the baseline, ``|log a - log b|``, whose
    median is ``0.6745·sqrt(2)·σ`` for normal noise of deviation ``σ``.  The median keeps a
    slow spell in one run from setting the figure.  0 where there are no such differences.
    """
    noise = {}
    for name in PAIRED_METRICS:
        gaps = [gap for paired in ratios for gap in _log_gaps(paired.get(name, []), every_pair=True)]
        gaps += _log_gaps([float(getattr(r, name)) for r in baselines if r.passed], every_pair=False)
        noise[name] = statistics.median(gaps) / (0.6745 * math.sqrt(2)) if gaps else 0.0
    return noise


def _log_gaps(values: Sequence[float], every_pair: bool) -> list[float]:
    """``|log a - log b|`` between every two positive values, or between successive ones."""
    logs = [math.log(v) for v in values if v > 0]
    if every_pair:
        return [abs(a - b) for i, a in enumerate(logs) for b in logs[i + 1:]]
    return [abs(a - b) for a, b in itertools.pairwise(logs)]
