"""Benchmark of the embedded problems' reference distributions: signal against noise.

Percentile rewards and Beyond-T/M/I only mean something when the references
of a problem are further apart than one measurement is noisy.  Run
``python benchmarks/perf/bench_references.py``.  It measures every reference
of the 36 embedded problems afresh (a throw-away reference cache) with
``repeats=3``, as ``make demo`` and ``rewardkit bench`` do, and prints:

* how many references pass (target: all);
* the noise: the CPU-time spread of each reference's repeats (MAD / median),
  at the median, the 90th percentile and the worst;
* the signal, beside it: the slowest reference of each problem over its
  fastest, at the median and the least;
* how long measuring took.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from rewardkit.benchmarks.embedded import load_mini
from rewardkit.benchmarks.references import measure_references
from rewardkit.sandbox import Sandbox


def main() -> None:
    """Measure all embedded references with repeats=3 and print their spread and range."""
    problems = load_mini()
    with tempfile.TemporaryDirectory() as cache, Sandbox(repeats=3) as sandbox:
        os.environ["REWARDKIT_CACHE_DIR"] = cache  # measure afresh, leave the user's cache alone
        clock = time.perf_counter()
        measured = measure_references(problems, sandbox, progress=False)
        seconds = time.perf_counter() - clock
    total = sum(len(p.references) for p in problems)
    passing = [r.metrics for p in problems for r in p.passing_references() if r.metrics]
    spreads = sorted(float(m["spread"].get("time_s", 0.0)) for m in passing)
    ratios = [max(times) / min(times) for times in (p.reference_values("time_s") for p in problems)]
    print(f"references of the embedded benchmark: {len(passing)}/{total} pass "
          f"({len(problems)} problems, repeats=3, measured {measured} in {seconds:.1f} s)")
    print(f"  noise, CPU-time spread of one reference (MAD/median): median "
          f"{statistics.median(spreads):.2%}, p90 {spreads[int(0.9 * len(spreads))]:.2%}, "
          f"max {spreads[-1]:.2%}")
    print(f"  signal, slowest/fastest reference of a problem: median {statistics.median(ratios):.1f}x, "
          f"least {min(ratios):.1f}x")


if __name__ == "__main__":
    main()
