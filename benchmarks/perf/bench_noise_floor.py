"""Benchmark of the efficiency reward on a drifting host: paired rounds against a cached baseline.

A trainer keeps one reward object for a run.  Here one ``efficiency("time")``
reward (its own engine, ``repeats=3``) scores SAMPLES GRPO-shaped groups spread
over time (a pause of GAP seconds between them), each group a baseline and
eight candidates: four renamed copies of the baseline (identical work), and
programs doing 1.5x, 1/1.5, 1.25x and 1/1.25 of its work.  Every group has
fresh names, so nothing is read from a cache.  Two ways of scoring are compared:

* **paired** (the default when rows give ``baseline_code``): the group and its
  baseline run in interleaved rounds on one worker, each gain the median over
  rounds of the ratio to the neighbouring baseline runs;
* **cached baseline** (rows giving ``baseline_metrics``, the unpaired path): the
  baseline measured once at the start and reused, against the same candidate
  measurements.

A fixed calibration loop, timed in this process before every group, shows how
much the machine's speed drifted during the run.  Run
``python benchmarks/perf/bench_noise_floor.py [SAMPLES] [GAP]`` (default 20 and 1).
It prints, dated, the share of samples in which identical code scores 0, the
faster programs score above 0 and the slower below, next to the goals it is held to
(95%, 90% at 1.5x, 80% at 1.25x).
"""

from __future__ import annotations

import datetime
import os
import statistics
import sys
import time
from typing import Any

from rewardkit import rewards
from rewardkit.rewards import Engine
from rewardkit.rewards.composite import Reward
from rewardkit.trainers.datasets import answer_text

N = 1_000_000  # numbers summed per case: about 20 ms of CPU on the development machine
CASES = 2
# name -> (work relative to the baseline, the sign its gain must have)
KINDS: dict[str, tuple[float, int]] = {"1.5x": (1.5, -1), "1/1.5": (1 / 1.5, 1),
                                       "1.25x": (1.25, -1), "1/1.25": (1 / 1.25, 1)}
COPIES = 4
GOALS = {"identical": 0.95, "1.5x": 0.90, "1/1.5": 0.90, "1.25x": 0.80, "1/1.25": 0.80}


def program(scale: float, name: str) -> str:
    """Sum ``scale·n`` numbers in a function whose local is called ``name``; print n(n+1)/2."""
    return (f"def solve(n):\n    {name} = 0\n    for i in range(int(n * {scale}) + 1):\n"
            f"        {name} += i\n    return n * (n + 1) // 2\n\n\nprint(solve(int(input())))\n")


def tests(n: int = N, cases: int = CASES) -> dict[str, Any]:
    """``cases`` stdio cases of ``n``."""
    return {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{n * (n + 1) // 2}\n"}] * cases}


def group(label: str) -> tuple[str, list[tuple[str, str]]]:
    """The baseline and ``(kind, code)`` candidates of one sample, named after ``label``."""
    candidates = [("identical", program(1.0, f"copy_{label}_{i}")) for i in range(COPIES)]
    candidates += [(kind, program(scale, f"work_{kind.replace('/', '_').replace('.', '_')}_{label}"))
                   for kind, (scale, _) in KINDS.items()]
    return program(1.0, f"base_{label}"), candidates


def right(kind: str, value: float) -> bool:
    """Whether a score has the sign its kind's work calls for (0 for identical code)."""
    return value == 0.0 if kind == "identical" else value * KINDS[kind][1] > 0


def calibration() -> float:
    """Seconds a fixed in-process loop takes now: the machine's speed at this moment."""
    start = time.process_time()
    total = 0
    for i in range(300_000):
        total += i
    return time.process_time() - start


def run(samples: int, gap: float, suite: dict[str, Any] | None = None,
        reward: Reward | None = None) -> dict[str, Any]:
    """Score ``samples`` groups ``gap`` seconds apart; per kind, the share scored right, paired and
    against the cached baseline, and the calibration loop's times."""
    suite = suite or tests()
    score = reward or rewards.efficiency("time", engine=Engine(repeats=3))
    cached: dict[str, Any] | None = None
    right_paired: dict[str, list[bool]] = {kind: [] for kind in GOALS}
    right_cached: dict[str, list[bool]] = {kind: [] for kind in GOALS}
    clock: list[float] = []
    for sample in range(samples):
        clock.append(calibration())
        baseline, candidates = group(f"{os.getpid()}_{sample}")
        completions = [answer_text(code, "plan") for _, code in candidates]
        paired = score(completions=completions, tests=[suite] * len(candidates),
                       baseline_code=[baseline] * len(candidates))
        if cached is None:  # the baseline as a trainer's cache holds it: measured once, first
            [first] = score.engine.sandbox.run_many([(baseline, suite)])
            cached = {"passed": first.passed, "time_s": first.time_s}
        unpaired = score(completions=completions, tests=[suite] * len(candidates),
                         baseline_metrics=[cached] * len(candidates))
        for (kind, _), mine, theirs in zip(candidates, paired, unpaired, strict=True):
            right_paired[kind].append(mine is not None and right(kind, mine))
            right_cached[kind].append(theirs is not None and right(kind, theirs))
        if sample + 1 < samples:
            time.sleep(gap)
    clock.append(calibration())
    return {"paired": right_paired, "cached": right_cached, "clock": clock}


def share(values: list[bool]) -> float:
    """The share of True."""
    return sum(values) / len(values) if values else 0.0


def main(argv: list[str]) -> None:
    """``[SAMPLES] [GAP]``: score the groups and print the shares next to the goals."""
    samples = int(argv[0]) if argv else 20
    gap = float(argv[1]) if len(argv) > 1 else 1.0
    started = time.monotonic()
    figures = run(samples, gap)
    clock = [1000 * t for t in figures["clock"]]
    print(f"{datetime.date.today().isoformat()}: {samples} groups of {COPIES} renamed copies + "
          f"{', '.join(KINDS)} work, {gap:g} s apart, {time.monotonic() - started:.0f} s in all, "
          f"{os.cpu_count()} CPUs")
    low, high = min(clock), max(clock)
    print(f"calibration loop (in process, before each group): min {low:.1f} ms, median "
          f"{statistics.median(clock):.1f} ms, max {high:.1f} ms (max/min {high / low:.2f}x)")
    print(f"{'kind':<10} {'goal':>6} {'paired':>8} {'cached baseline':>16}")
    for kind, goal in GOALS.items():
        what = "scored 0" if kind == "identical" else ("< 0" if KINDS[kind][1] < 0 else "> 0")
        print(f"{kind:<10} {goal:>6.0%} {share(figures['paired'][kind]):>8.0%} "
              f"{share(figures['cached'][kind]):>16.0%}   ({what})")


if __name__ == "__main__":
    main(sys.argv[1:])
