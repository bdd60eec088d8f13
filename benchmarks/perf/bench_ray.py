"""Ray backend benchmark: throughput of CPU-bound sandbox jobs with one and two Ray workers.

A batch of 32 Python jobs of about 0.2 s CPU each runs through
``Sandbox(backend="ray")`` on a local Ray instance with 2 CPUs (``num_cpus=1``
per task), once with ``workers=1`` (one task at a time: one Ray worker busy)
and once with ``workers=2`` (two), and through the local backend with
``workers=1`` and ``workers=2`` as the reference.  The four take turns, batch
by batch, so that load from elsewhere on a shared machine hits them alike.
Printed: jobs per second of each (median of 3 batches, each after a warm-up
batch that starts the workers), the scaling ratio two workers / one of Ray beside
that of the local backend (2.0 at best; the driver, Ray's own daemons and
whatever else runs share the two cores), and Ray's two-worker figure against
the local backend's, which shows what a Ray task adds to a local job.

Run: ``python benchmarks/perf/bench_ray.py`` (``make bench`` runs it).
"""

from __future__ import annotations

import logging
import os
import statistics
import sys
import time
from typing import Any

from rewardkit.sandbox import Sandbox, TestSuite

JOBS = 32
ROUNDS = 3
TARGET_S = 0.2
ONE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "done\n"}]})


def busy_loop(n: int) -> str:
    """A program that spends CPU time in proportion to ``n``."""
    return f"total = 0\nfor k in range({n}):\n    total += k % 7\nprint('done')\n"


def sized_job(sb: Sandbox) -> str:
    """A busy loop that takes about ``TARGET_S`` CPU seconds in ``sb``."""
    probe = 1_000_000
    spent = sb.run(busy_loop(probe), ONE).time_s
    return busy_loop(int(probe * TARGET_S / spent))


def one_batch(sb: Sandbox, code: str) -> float:
    """Jobs per second of one batch of ``JOBS`` copies of ``code``, after a warm-up batch.

    Ray may end a worker process it finds idle between turns; the warm-up
    starts it again, so start-up is not timed.
    """
    sb.run_many([(code, ONE)] * sb.workers)
    start = time.perf_counter()
    results = sb.run_many([(code, ONE)] * JOBS)
    elapsed = time.perf_counter() - start
    failed = sorted({r.status.value for r in results if not r.passed})
    if failed:
        raise RuntimeError(f"some jobs did not pass: {failed}")
    return JOBS / elapsed


def main() -> None:
    """Measure the local backend and Ray with one and two workers in turns, and print the figures."""
    print(f"ray benchmark on {os.cpu_count()} cores, python {sys.version.split()[0]}")
    try:
        import ray
    except ImportError:
        print("  ray: not measured (pip install 'rewardkit[ray]')")
        return
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level=logging.ERROR)
    setups: dict[str, dict[str, Any]] = {
        "ray, workers=1": {"backend": "ray", "workers": 1},
        "ray, workers=2": {"backend": "ray", "workers": 2},
        "local backend, workers=1 (reference)": {"workers": 1},
        "local backend, workers=2 (reference)": {"workers": 2},
    }
    sandboxes = {name: Sandbox(**options) for name, options in setups.items()}
    try:
        code = sized_job(sandboxes["local backend, workers=2 (reference)"])
        rates: dict[str, list[float]] = {name: [] for name in sandboxes}
        for _ in range(ROUNDS):
            for name, sb in sandboxes.items():
                rates[name].append(one_batch(sb, code))
    finally:
        for sb in sandboxes.values():
            sb.close()
        ray.shutdown()
    median = {name: statistics.median(values) for name, values in rates.items()}
    print(f"  {JOBS} CPU-bound jobs of ~{TARGET_S:g} s each, median of {ROUNDS} batches taken in turns")
    for name, rate in median.items():
        print(f"  {name:38s} {rate:6.2f} jobs/s")
    one, two, local_one, local_two = median.values()
    print(f"  scaling, two workers / one: ray {two / one:.2f}x, local backend {local_two / local_one:.2f}x"
          f"   (2.00 at best)")
    print(f"  ray, two workers / local backend, two workers = {two / local_two:.2f}")

if __name__ == "__main__":
    main()
