"""Sandbox benchmark: overhead per run, measurement stability, the deterministic meter.

Every figure is printed beside a reference measured in the same run, because
absolute times on these shared machines are noisy:

1. overhead of one run of a trivial Python solution with one test (median of
   200) next to a bare ``python -c pass`` spawn, and docker one-container-per-run
   and warm-pool runs;
2. stability: 20 measurements of a ~80 ms CPU-bound program with the other core
   kept busy (coefficient of variation of ``time_s``), and how often single
   measurements order two programs whose work differs by 10%, beside plain
   single-shot wall-clock timing of a subprocess (what published sandboxes do)
   and beside paired measurement (``Sandbox.run_paired``: the two in interleaved
   rounds, the median ratio deciding); a fixed in-process loop timed before each
   measurement shows how much the host's speed drifted meanwhile;
3. ``meter="instructions"``: identical counts run to run, 1% differences
   ordered right every time, and its slowdown against the default meter;
4. the cost of one call in a ``call`` suite (20,000 calls, batched): a
   function with type hints (``List[int]``, read for TreeNode/ListNode
   arguments) beside the same function without them.

Run: ``python benchmarks/perf/bench_sandbox.py`` (``make bench`` runs it).
"""

from __future__ import annotations

import datetime
import functools
import os
import statistics
import subprocess  # nosec B404 - the reference timings spawn Python itself
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import product

from rewardkit.sandbox import Sandbox, TestSuite

ONE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "ok\n"}]})
TRIVIAL = "print('ok')\n"


def loop(n: int) -> str:
    """A CPU-bound program whose work grows linearly with ``n``."""
    return f"x = 0\nfor i in range({n}):\n    x += i * i\nprint('ok')\n"


def median_ms(samples: list[float]) -> float:
    """Median of samples in seconds, as milliseconds."""
    return statistics.median(samples) * 1000


def timed(fn: Callable[[], object], count: int) -> list[float]:
    """Wall seconds of ``count`` calls of ``fn``, one sample per call."""
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def cv(values: list[float]) -> float:
    """Coefficient of variation: standard deviation over mean."""
    return statistics.stdev(values) / statistics.mean(values)


def ordered_fraction(fast: list[float], slow: list[float]) -> float:
    """Fraction of (fast, slow) sample pairs in which the fast one measured lower."""
    pairs = list(product(fast, slow))
    return sum(a < b for a, b in pairs) / len(pairs)


@contextmanager
def other_core_busy() -> Iterator[None]:
    """Keep another core busy with a spinning Python process during the block."""
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])  # nosec B603 - fixed argv
    try:
        time.sleep(0.2)
        yield
    finally:
        hog.kill()
        hog.wait()


def section_overhead() -> None:
    """Print section 1: per-run overhead, local and docker, against a bare spawn."""
    print("\n[1] overhead per run: trivial Python solution, one stdio test")
    with Sandbox(workers=1) as sb:
        for _ in range(10):
            sb.run(TRIVIAL, ONE)
        local = timed(lambda: sb.run(TRIVIAL, ONE), 200)
    spawn = timed(lambda: subprocess.run([sys.executable, "-c", "pass"],
                                         check=True), 50)  # nosec B603 - fixed argv
    print(f"  local backend (warm forked worker)  median {median_ms(local):7.2f} ms  (200 runs)")
    print(f"  bare `python -c pass` spawn         median {median_ms(spawn):7.2f} ms  (50 runs)")
    ratio = statistics.median(local) / statistics.median(spawn)
    print(f"  local / bare spawn = {ratio:.3f}   (target <= 0.5)")
    docker_overheads()


def docker_overheads() -> None:
    """Print docker per-run times, fresh containers and warm pool, unless skipped."""
    if os.environ.get("REWARDKIT_SKIP_DOCKER") == "1":
        print("  docker: skipped (REWARDKIT_SKIP_DOCKER=1)")
        return
    try:
        with Sandbox(backend="docker", workers=1) as fresh:
            fresh.run(TRIVIAL, ONE)
            per_run = timed(lambda: fresh.run(TRIVIAL, ONE), 20)
        with Sandbox(backend="docker", workers=1, warm_pool=True) as warm:
            for _ in range(5):
                warm.run(TRIVIAL, ONE)
            pooled = timed(lambda: warm.run(TRIVIAL, ONE), 100)
    except RuntimeError as exc:
        print(f"  docker: not measured ({exc})")
        return
    print(f"  docker, one container per run       median {median_ms(per_run):7.2f} ms  (20 runs)")
    print(f"  docker, warm pool                   median {median_ms(pooled):7.2f} ms  (100 runs,"
          f" target < 50 ms)")


def calibrate(sb: Sandbox, target_s: float) -> int:
    """Loop size whose run takes about ``target_s`` CPU seconds."""
    n = 200_000
    for _ in range(4):
        spent = statistics.median(sb.run(loop(n), ONE).time_s for _ in range(3))
        n = int(n * target_s / spent)
    return n


def subprocess_wall(code: str) -> float:
    """Single-shot wall time of running ``code`` as a plain Python subprocess."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(code)
    try:
        start = time.perf_counter()
        subprocess.run([sys.executable, handle.name], check=True, capture_output=True)  # nosec B603 - own file
        return time.perf_counter() - start
    finally:
        os.unlink(handle.name)


def drift_loop() -> float:
    """Wall seconds of a fixed in-process loop: the host's speed at this moment."""
    start = time.perf_counter()
    sum(i * i for i in range(200_000))
    return time.perf_counter() - start


def section_stability() -> None:
    """Print section 2: spread and ordering of repeated measurements under load."""
    print("\n[2] stability with the other core busy (~80 ms CPU-bound program)")
    drift: list[float] = []

    def measured(take: Callable[[], float]) -> float:
        drift.append(drift_loop())
        return take()

    with Sandbox(workers=1) as sb:
        n = calibrate(sb, 0.080)
        fast_code, slow_code = loop(n), loop(int(n * 1.1))
        with other_core_busy():
            single = [measured(lambda: sb.run(loop(n), ONE).time_s) for _ in range(20)]
            wall = [measured(lambda: subprocess_wall(loop(n))) for _ in range(20)]
            fast = [measured(lambda: sb.run(fast_code, ONE).time_s) for _ in range(30)]
            slow = [measured(lambda: sb.run(slow_code, ONE).time_s) for _ in range(30)]
            fast_wall = [measured(lambda: subprocess_wall(fast_code)) for _ in range(30)]
            slow_wall = [measured(lambda: subprocess_wall(slow_code)) for _ in range(30)]
            median3 = [measured(lambda: sb.run(loop(n), ONE, repeats=3).time_s) for _ in range(20)]
            paired = [measured(lambda: statistics.median(
                sb.run_paired(fast_code, [slow_code], ONE, rounds=3).ratios[0]["time_s"]))
                for _ in range(20)]
    print(f"  loop size {n:,}: median time_s {statistics.median(single) * 1000:.1f} ms")
    print(f"  CV of time_s, rewardkit single measurement   {cv(single):6.2%}")
    print(f"  CV of time_s, rewardkit repeats=3 median     {cv(median3):6.2%}")
    print(f"  CV, single-shot wall clock of a subprocess   {cv(wall):6.2%}   (reference)")
    print(f"  10% apart, single measurements ordered right: rewardkit "
          f"{ordered_fraction(fast, slow):6.1%}  vs subprocess wall clock "
          f"{ordered_fraction(fast_wall, slow_wall):6.1%}")
    print(f"  10% apart, paired (3 interleaved rounds, median ratio) ordered right: "
          f"{sum(r > 1 for r in paired) / len(paired):6.1%} of {len(paired)}; median ratio "
          f"{statistics.median(paired):.3f} (work ratio 1.1)")
    print(f"  drift reference (a fixed in-process loop, timed before each measurement): median "
          f"{median_ms(drift):.1f} ms, min {min(drift) * 1000:.1f}, max {max(drift) * 1000:.1f} "
          f"({max(drift) / min(drift):.2f}x)")


def section_instructions() -> None:
    """Print section 3: repeatability, resolution and slowdown of the instruction meter."""
    print("\n[3] deterministic meter (valgrind instruction count)")
    n = 200_000
    with Sandbox(workers=1) as timer:
        timer.run(loop(n), ONE)
        time_wall = timed(lambda: timer.run(loop(n), ONE), 5)
    with Sandbox(workers=1, meter="instructions") as counter:
        counter.run(loop(n), ONE)  # start-up cost is measured on first use
        start = time.perf_counter()
        repeated = [counter.run(loop(n), ONE).instructions for _ in range(5)]
        count_wall = (time.perf_counter() - start) / 5
        right = 0
        for _ in range(5):
            base = counter.run(loop(n), ONE).instructions
            more = counter.run(loop(int(n * 1.01)), ONE).instructions
            right += int(base is not None and more is not None and more > base)
    counts = {c for c in repeated}
    print(f"  5 repeated runs: {len(counts)} distinct count(s): {sorted(c or 0 for c in counts)}")
    print(f"  programs 1% apart ordered right: {right}/5")
    slowdown = count_wall / statistics.median(time_wall)
    print(f"  per-run wall time: instructions meter {count_wall * 1000:.0f} ms vs time meter "
          f"{median_ms(time_wall):.0f} ms  (slowdown {slowdown:.0f}x)")


CALLS = 20_000
TYPED = "from typing import List\ndef f(xs: List[int], k: int) -> List[int]:\n    return xs\n"
UNTYPED = "def f(xs, k):\n    return xs\n"


def section_calls() -> None:
    """Microseconds per call of a call suite, typed and untyped (best of 3 runs each)."""
    print(f"\n[4] one call in a call suite ({CALLS:,} calls of f(xs, k), batched)")
    suite = TestSuite.from_dict({"mode": "call", "entry_point": "f", "cases": [
        {"args": [[1, 2, 3], i], "expected": [1, 2, 3]} for i in range(CALLS)]})
    with Sandbox(workers=1) as sb:
        per_call = {name: min(timed(functools.partial(sb.run, code, suite), 3)) / CALLS * 1e6
                    for name, code in (("typed", TYPED), ("untyped", UNTYPED))}
    print(f"  typed (List[int] hints)   {per_call['typed']:6.1f} us per call")
    print(f"  untyped                   {per_call['untyped']:6.1f} us per call   "
          f"(typed / untyped = {per_call['typed'] / per_call['untyped']:.2f})")


def main() -> None:
    """Run the four sections and print the figures."""
    print(f"sandbox benchmark, {datetime.datetime.now().isoformat(timespec='seconds')}, "
          f"{os.cpu_count()} cores, python {sys.version.split()[0]}")
    section_overhead()
    section_stability()
    section_instructions()
    section_calls()


if __name__ == "__main__":
    main()
