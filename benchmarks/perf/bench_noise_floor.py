"""Benchmark of the efficiency noise floor: identical code measured in separate processes.

The floor (:func:`rewardkit.rewards.components.noise_floor_for`) decides when
a measured gain is real.  Its lower bound is the meter's noise *between*
processes, which back-to-back repeats in one worker understate.  Run
``python benchmarks/perf/bench_noise_floor.py [PROCESSES] [RUNS]`` (default
4 and 6).  For each program (about 3 ms of work, and about 80 ms) it starts
PROCESSES fresh sandboxes, takes RUNS measurements of ``repeats=3`` in each,
and compares every measurement with those of the other processes, the way a
reward compares a candidate with a baseline measured earlier.  It prints:

* the relative gain between identical code at the median, p95 and worst, next
  to the floor the reward applies to those pairs;
* how many of those pairs the efficiency reward scores other than 0, with the
  floor and with ``noise_floor=0.0`` (the Afterburner paper's, every
  difference counts), next to each other.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from dataclasses import asdict

from rewardkit.rewards import formulas
from rewardkit.rewards.components import noise_floor_for
from rewardkit.rewards.engine import METRIC_OF, Metrics

PROGRAMS = {  # name -> (code, inputs of its three cases)
    "3 ms": ("n = int(input())\nprint(n * (n + 1) // 2)\n", [3, 100, 1000]),
    "80 ms": ("n = int(input())\ntotal = 0\nfor i in range(n + 1):\n    total += i\nprint(total)\n",
              [500_000] * 3),
}
OBJECTIVES = ("time", "memory")


def measure(name: str, runs: int) -> None:
    """In a fresh process: ``runs`` measurements of the program with repeats=3, as JSON on stdout."""
    from rewardkit.sandbox import Sandbox

    code, inputs = PROGRAMS[name]
    suite = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{n * (n + 1) // 2}\n"}
                                        for n in inputs]}
    with Sandbox(workers=1, repeats=3) as sandbox:
        sandbox.run(code, suite)  # warm-up
        results = [sandbox.run(code, suite) for _ in range(runs)]
    print(json.dumps([asdict(Metrics.from_result(r)) for r in results if r.passed]))


def _quantile(values: list[float], fraction: float) -> float:
    return values[min(len(values) - 1, int(fraction * len(values)))]


def report(name: str, processes: int, runs: int) -> None:
    """Measure ``name`` in ``processes`` processes and print the noise and what the floor does with it."""
    per_process = [[Metrics.from_dict(m) for m in json.loads(subprocess.run(
        [sys.executable, __file__, "measure", name, str(runs)], check=True, capture_output=True,
        text=True).stdout)] for _ in range(processes)]
    pairs = [(a, b) for i, mine in enumerate(per_process) for j, theirs in enumerate(per_process)
             if i != j for a in mine for b in theirs]
    print(f"{name} program, {processes} processes x {runs} measurements (repeats=3), {len(pairs)} pairs")
    for objective in OBJECTIVES:
        print(*_noise_lines(objective, pairs), sep="\n")


def _noise_lines(objective: str, pairs: list[tuple[Metrics, Metrics]]) -> list[str]:
    """The gain between identical code on ``objective``, and how often the reward scores it."""
    key = METRIC_OF[objective]
    gains = sorted(abs(a.value(objective) - b.value(objective)) / a.value(objective) for a, b in pairs)
    floors = [noise_floor_for(objective, a, b) for a, b in pairs]
    scored = [formulas.efficiency_gain(a.value(objective), b.value(objective), objective, noise_floor=floor)
              for (a, b), floor in zip(pairs, floors, strict=True)]
    paper = [formulas.efficiency_gain(a.value(objective), b.value(objective), objective) for a, b in pairs]
    return [f"  {key}: gain between identical code p50 {_quantile(gains, 0.5):.1%}, "
            f"p95 {_quantile(gains, 0.95):.1%}, max {gains[-1]:.1%}; floor applied "
            f"{statistics.median(floors):.1%} (median)",
            f"  {key}: pairs scored other than 0: {sum(v != 0 for v in scored) / len(pairs):.1%} with "
            f"the floor, {sum(v != 0 for v in paper) / len(pairs):.1%} with noise_floor=0 (the paper's)"]


def main(argv: list[str]) -> None:
    """``measure NAME RUNS`` in a child process; otherwise ``[PROCESSES] [RUNS]``: the report."""
    if argv[:1] == ["measure"]:
        measure(argv[1], int(argv[2]))
        return
    processes, runs = (int(argv[0]), int(argv[1])) if len(argv) == 2 else (4, 6)
    for name in PROGRAMS:
        report(name, processes, runs)


if __name__ == "__main__":
    main(sys.argv[1:])
