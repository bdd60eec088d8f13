"""Competitive-programming throughput: rewardkit against verl's ``prime_code`` on real APPS problems.

The workload is ``apps_train_coderl5.jsonl`` (5 APPS training problems, their 101 reference
solutions and all their tests; ``../shared/data/README.md``), plus variants written here:
wrong ones (an off-by-one, a wrong word, a crash) and slow ones (a cubic algorithm where
the reference is quadratic, trial division up to n where the references stop at its square
root).  Two problems get one large test each, within the problem's constraints, appended
after their own tests: the slow variants run past the time limit on it and the references
do not (its expected output comes from the problem's own reference solution, or from a
direct computation here).  Another problem's references (2404, LeetCode's constraints of
at most 1000) include quadratic ones, so a large test beyond its constraints would fail
correct solutions: it gets none.

Both judges get the same completions (a fenced block, as a policy writes them) and the
ground truth as verl's datasets hold it: the APPS ``input_output`` JSON, a call-based
case's arguments as JSON lines and its output as JSON text (:func:`verl_form`).

verl's default reward for ``apps``/``codecontests``/``taco`` rows
(``verl/utils/reward_score/__init__.py``, ``default_compute_score``) is
``prime_code.compute_score(solution, ground_truth, continuous=True)``: one process (and
a ``multiprocessing`` manager) runs every test, 5 s each and 6 s for the whole suite,
stopping at the first failure; when one fails, each of the first ten tests runs again in a
process of its own (10 s each), and the score is the fraction of those that pass.  That
second pass drops ``fn_name``, so it runs a call-based problem's tests as stdin programs:
a call-based solution that fails one test scores 0.  It is loaded from the verl wheel
unpacked in ``.cache/verl`` (``make .cache/verl/.stamp``; ``--verl-path``) without
verl's own ``__init__`` (which imports torch and Ray): ``prime_code`` needs only the
standard library and numpy.  LiveCodeBench's harness is not on PyPI (it is a GitHub
repository), so it is not run here.

Timed, interleaved round by round (the order alternates), each side over the same samples:

* per-sample calls as verl makes them: verl's reward loop calls the function once per
  sample, a chunk's samples at once from its event loop's thread pool (min(32, CPUs + 4)
  threads; :mod:`.verl_calls`), and awaits a coroutine function's calls, all of the chunk's
  at once.  rewardkit's are ``rewardkit.rewards.verl.compute_score`` (threads) and
  ``compute_score_async`` (awaited), each with ``cisq_grpo`` (its default preset: code block,
  pass rate, static quality) and ``pass_rate`` (what ``prime_code`` computes), with a per-case
  limit of :data:`TIME_S`; verl's is ``prime_code`` as above;
* the batched path: ``Sandbox.run_many`` on every sample, as tasks per second per core.

Each round's completions carry a fresh marker, so no cache of rewardkit's has seen them.
A fixed calibration loop is timed before every measurement: its spread is the host's drift
over the run.  The verdicts compared are the pass rates (``prime_code``'s score; rewardkit's
``pass_rate`` component), and whether everything passed.  Neither pass-rate reward stops a
suite at a wrong answer; both stop at a case that runs out of time (the cases after it count
as failed).  ``prime_code`` rates only the first ten tests (no problem here has more).

Run: ``python benchmarks/perf/bench_throughput.py [--rounds N] [--limit N] [--profile]``.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime
import importlib.util
import json
import os
import pstats
import random
import statistics
import subprocess  # nosec B404 - runs the dataset's own reference solution to make an expected output
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil

from rewardkit.benchmarks.perf.verl_calls import verl_manager, verl_wrap
from rewardkit.rewards import verl
from rewardkit.sandbox import Limits, Sandbox, TestSuite

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT.parent / "shared" / "data" / "apps_train_coderl5.jsonl"
VERL_PATH = ROOT / ".cache" / "verl"
PRIME_CODE = Path("verl", "utils", "reward_score", "prime_code")
TIME_S = 5.0  # prime_code's limit per test in its all-tests pass; rewardkit's per case
THREADS = min(32, (os.cpu_count() or 1) + 4)  # verl's reward loop: its event loop's default pool
TARGET = 3.0  # rewardkit per sample against prime_code per sample
LARGE_PRIME = 999_999_937  # the references take 2 s at most, trial division to n a minute


@dataclass(frozen=True)
class Sample:
    """A completion for one problem: a reference solution, or a variant of one written here."""

    problem: int
    kind: str  # "reference", "wrong" or "slow"
    label: str
    code: str
    tests: str  # the ground truth as verl has it: the APPS ``input_output`` JSON


# -- the workload -------------------------------------------------------------------------------
def _prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


def _reference_output(code: str, stdin: str) -> str:
    """The output of a reference solution of the dataset's, run in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, text=True,
                          timeout=120, check=True)  # nosec B603 - the dataset's reference, our own argv
    return done.stdout


def _image(rng: random.Random, n: int, m: int) -> str:
    return f"{n} {m}\n" + "".join("".join(rng.choice("0011") for _ in range(m)) + "\n" for _ in range(n))


def _large_case(problem: int, references: list[str]) -> tuple[Any, Any] | None:
    """The large test appended to a problem's tests (input, output as APPS writes them), or None."""
    rng = random.Random(problem)  # nosec B311 - seeded test data, not security
    if problem == 111:
        stdin = _image(rng, 400, 400)
        return stdin, _reference_output(references[0], stdin)
    if problem == 4184:
        return [LARGE_PRIME], [_prime(LARGE_PRIME)]
    return None


def verl_form(truth: dict[str, Any]) -> dict[str, Any]:
    """APPS ground truth as verl's datasets hold it: a call-based case's arguments one JSON value
    per line, its output JSON text (``prime_code`` splits an input into lines and decodes the
    output; it fails every case of APPS's raw lists)."""
    if truth.get("fn_name") is None:
        return truth
    return {**truth, "inputs": ["\n".join(json.dumps(arg) for arg in args) for args in truth["inputs"]],
            "outputs": [json.dumps(output) for output in truth["outputs"]]}


def _variant(code: str, old: str, new: str) -> str:
    if old not in code:
        raise ValueError(f"the reference has no {old!r} to replace")
    return code.replace(old, new, 1)


# (problem, label, which reference, text replaced, replacement)
WRONG = [
    (1, "off-by-one comparison", 0, "if(x>k):", "if(x>=k):"),
    (1, "crash on the last query", 0, "print(k)", "print(k if e < q - 1 else [][0])"),
    (111, "off-by-one range of k", 0, "in range(2, max(n, m) + 1):", "in range(3, max(n, m) + 1):"),
    (2287, "wrong verdict word", 0, 'print("No")', 'print("NO")'),
    (2404, "off-by-one answer", 0, "return k + lo + 1", "return k + lo"),
    (2404, "off-by-one count", 1, "counter += 1", "counter += 2"),
    (4184, "off-by-one lower bound", 0, "if n < 2:", "if n < 1:"),
]

SLOW_IMAGE = '''n, m = map(int, input().split())
rows = [input() for _ in range(n)]
best = None
for k in range(2, max(n, m) + 1):
    cost = 0
    for bi in range(0, n, k):
        for bj in range(0, m, k):
            ones = sum(rows[i][j] == "1" for i in range(bi, min(bi + k, n))
                       for j in range(bj, min(bj + k, m)))
            cost += min(ones, k * k - ones)
    best = cost if best is None else min(best, cost)
print(best)
'''
SLOW_PRIME = [("slow: trial division to n", '''def is_prime(n):
    return n > 1 and all(n % d for d in range(2, n))
'''), ("slow: every divisor counted", '''def is_prime(n):
    return n > 1 and sum(1 for d in range(1, n + 1) if n % d == 0) == 2
''')]


def workload(path: Path = DATA) -> list[Sample]:
    """Every reference solution, then the wrong variants, then the slow ones (see the module doc)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    references = {row["problem_id"]: json.loads(row["solutions"]) for row in rows}
    tests: dict[int, str] = {}
    for row in rows:
        truth = json.loads(row["input_output"])
        large = _large_case(row["problem_id"], references[row["problem_id"]])
        if large is not None:
            truth["inputs"].append(large[0])
            truth["outputs"].append(large[1])
        tests[row["problem_id"]] = json.dumps(verl_form(truth))
    samples = [Sample(p, "reference", f"reference {i + 1}", code, tests[p])
               for p, codes in references.items() for i, code in enumerate(codes)]
    samples += [Sample(p, "wrong", label, _variant(references[p][which], old, new), tests[p])
                for p, label, which, old, new in WRONG]
    samples += [Sample(111, "slow", "slow: cubic", SLOW_IMAGE, tests[111])]
    samples += [Sample(4184, "slow", label, code, tests[4184]) for label, code in SLOW_PRIME]
    return samples


def completion(sample: Sample, marker: str) -> str:
    """The sample as a policy writes it: one fenced block (both judges take the code from it)."""
    return f"```python\n# {marker}\n{sample.code}\n```"


# -- the judges -----------------------------------------------------------------------------------
def load_prime_code(root: Path) -> ModuleType:
    """verl's ``prime_code`` package from an unpacked verl wheel, without verl's ``__init__``."""
    folder = root / PRIME_CODE
    spec = importlib.util.spec_from_file_location("prime_code", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    if spec is None or spec.loader is None:
        raise ImportError(f"no prime_code package in {folder}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["prime_code"] = module
    spec.loader.exec_module(module)
    return module


def verl_version(root: Path) -> str:
    """The version of the verl wheel unpacked in ``root``."""
    found = [p.name.removesuffix(".dist-info").split("-")[1] for p in root.glob("verl-*.dist-info")]
    return found[0] if found else "unknown"


def prime_score_fn(prime_code: ModuleType) -> Callable[..., dict[str, float]]:
    """verl's ``default_compute_score`` for an ``apps`` row: ``prime_code`` with partial credit."""
    def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                      extra_info: Any = None) -> dict[str, float]:
        del data_source, extra_info  # verl's arguments, which prime_code does not read
        success, _ = prime_code.compute_score(solution_str, ground_truth, continuous=True)
        return {"score": float(success)}
    return compute_score


Judge = Callable[[list[Sample], str], list[float]]
PRIME = "verl prime_code per sample"


def per_sample(function: Callable[..., dict[str, float]], key: str) -> Judge:
    """A judge calling ``function`` once per sample, all at once, as verl's reward loop does."""
    def judge(samples: list[Sample], marker: str) -> list[float]:
        calls: list[tuple[str, Any, dict[str, Any]]] = [(completion(s, marker), s.tests, {})
                                                        for s in samples]
        return [float(r[key]) for r in verl_manager(function, calls, threads=THREADS)]
    return judge


def batched(sandbox: Sandbox) -> Judge:
    """``Sandbox.run_many`` on every sample: the pass rates."""
    def judge(samples: list[Sample], marker: str) -> list[float]:
        jobs = [(f"# {marker}\n{s.code}", TestSuite.from_dict(s.tests)) for s in samples]
        return [r.pass_rate for r in sandbox.run_many(jobs)]
    return judge


# -- timing ---------------------------------------------------------------------------------------
def calibration() -> float:
    """Seconds a fixed pure-Python loop takes now (about 50 ms on a quiet core)."""
    start, total = time.perf_counter(), 0
    for i in range(1_000_000):
        total += i * i
    return time.perf_counter() - start


CPU_PARTS = ("this process", "helpers", "runs")


def cpu_parts() -> list[float]:
    """CPU seconds so far of this process (the judge side), of the processes below it still
    alive (rewardkit's workers, fork servers and analyzers), and of the processes reaped
    (rewardkit's runs, by a fork server; prime_code's manager and run processes, by this one)."""
    me = psutil.Process()
    times = me.cpu_times()
    parts = [times.user + times.system, 0.0, times.children_user + times.children_system]
    for child in me.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            times = child.cpu_times()
            parts[1] += times.user + times.system
            parts[2] += times.children_user + times.children_system
    return parts


@dataclass
class Timings:
    """Per judge: each round's wall seconds and CPU seconds by part; the drift reference's
    timings; the last round's verdicts."""

    walls: dict[str, list[float]]
    cpu: dict[str, list[list[float]]]  # per round, :data:`CPU_PARTS`
    drift: list[float]
    verdicts: dict[str, list[float]]


def interleaved(judges: dict[str, Judge], samples: list[Sample], rounds: int) -> Timings:
    """Each judge on ``samples`` once per round, the order reversed every other round, code new
    to every cache each time; the calibration loop timed before each."""
    t = Timings({n: [] for n in judges}, {n: [] for n in judges}, [], {})
    order = list(judges)
    for index in range(rounds):
        for name in order if index % 2 == 0 else order[::-1]:
            t.drift.append(calibration())
            cpu, start = cpu_parts(), time.perf_counter()
            t.verdicts[name] = judges[name](samples, uuid.uuid4().hex)
            t.walls[name].append(time.perf_counter() - start)
            t.cpu[name].append([b - a for a, b in zip(cpu, cpu_parts(), strict=True)])
    return t


# -- report ---------------------------------------------------------------------------------------
def verdict_lines(samples: list[Sample], verdicts: dict[str, list[float]], theirs: str) -> list[str]:
    """Agreement of every judge with ``theirs``: pass rates and all-passed, every difference."""
    lines = []
    base = verdicts[theirs]
    for name, ours in verdicts.items():
        if name == theirs:
            continue
        same_rate = sum(abs(a - b) < 1e-9 for a, b in zip(base, ours, strict=True))
        same_pass = sum((a == 1.0) == (b == 1.0) for a, b in zip(base, ours, strict=True))
        lines.append(f"  {name} vs {theirs}: all-passed verdict identical on {same_pass}/{len(samples)}, "
                     f"pass rate identical on {same_rate}/{len(samples)}")
        for s, a, b in zip(samples, base, ours, strict=True):
            if abs(a - b) >= 1e-9:
                lines.append(f"    differs: problem {s.problem} {s.label} ({s.kind}): "
                             f"{theirs} {a:.3f}, {name} {b:.3f}")
    return lines


def rate_lines(n: int, t: Timings, baseline: str | None) -> list[str]:
    """Each judge's rate over ``n`` samples, per core, its ratio to ``baseline`` and its CPU."""
    cores = os.cpu_count() or 1
    lines = []
    for name, walls in t.walls.items():
        median = statistics.median(walls)
        parts = [1000 * statistics.median(r[i] for r in t.cpu[name]) / n for i in range(len(CPU_PARTS))]
        ratio = ""
        if baseline is not None and name != baseline:
            ratios = [b / w for b, w in zip(t.walls[baseline], walls, strict=True)]
            ratio = (f"  {statistics.median(ratios):.2f}x {baseline} (rounds: "
                     f"{', '.join(f'{r:.2f}' for r in ratios)})")
        lines.append(f"  {name:40s} {n / median:7.2f} samples/s, {n / median / cores:6.2f} per core{ratio}")
        lines.append(f"  {'':40s} CPU per sample {sum(parts):.1f} ms ("
                     + ", ".join(f"{part} {ms:.1f}" for part, ms in zip(CPU_PARTS, parts, strict=True)) + ")")
    return lines


def drift_line(drift: list[float]) -> str:
    """The drift reference's spread over a set's measurements."""
    ms = [1000 * d for d in drift]
    return (f"  drift reference (fixed loop, timed before each measurement): median "
            f"{statistics.median(ms):.0f} ms, min {min(ms):.0f}, max {max(ms):.0f} "
            f"({max(ms) / min(ms):.2f}x)")


def profile_judge(sandbox: Sandbox, samples: list[Sample], top: int) -> None:
    """cProfile of the judge side (this process) judging ``samples`` one after another with
    ``Sandbox.run``, so that its work is in the profiled thread (the workers' is not)."""
    jobs = [(s.code, TestSuite.from_dict(s.tests)) for s in samples]
    profiler = cProfile.Profile()
    profiler.enable()
    for code, suite in jobs:
        sandbox.run(code, suite)
    profiler.disable()
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(top)


@contextlib.contextmanager
def sandbox_for(limits: Limits) -> Iterator[Sandbox]:
    """A local sandbox with a worker per core."""
    with Sandbox(workers=os.cpu_count(), limits=limits) as sandbox:
        yield sandbox


def arguments() -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds per set (default 3)")
    parser.add_argument("--limit", type=int, default=None, help="judge only the first N samples")
    parser.add_argument("--data", type=Path, default=DATA, help="the APPS JSONL file")
    parser.add_argument("--verl-path", type=Path, default=Path(os.environ.get("VERL_PATH", VERL_PATH)),
                        help="an unpacked verl wheel (default .cache/verl, $VERL_PATH)")
    parser.add_argument("--profile", action="store_true", help="cProfile the judge side")
    args = parser.parse_args()
    if not args.data.exists():
        raise SystemExit(f"no APPS data at {args.data}")
    return args


def per_sample_judges(verl_path: Path) -> dict[str, Judge]:
    """verl's ``prime_code`` (when its wheel is there) and rewardkit's verl functions."""
    judges: dict[str, Judge] = {}
    if (verl_path / PRIME_CODE).is_dir():
        judges[PRIME] = per_sample(prime_score_fn(load_prime_code(verl_path)), "score")
        print(f"verl {verl_version(verl_path)} prime_code from {verl_path}")
    else:
        print(f"verl prime_code: skipped, no verl wheel at {verl_path} (make .cache/verl/.stamp)")
    for preset in ("cisq_grpo", "pass_rate"):
        for name, function in (("compute_score", verl.compute_score),
                               ("compute_score_async", verl.compute_score_async)):
            judges[f"rewardkit {name} {preset}"] = per_sample(
                verl_wrap(function, preset=preset, limits={"time_s": TIME_S}), "pass_rate")
    return judges


def whole_workload_lines(spent: dict[str, list[float]], count: int) -> list[str]:
    """Each judge's throughput over every set against ``prime_code``'s, round by round."""
    lines = [f"\n[whole workload] {count} samples: per-sample throughput against {PRIME}, "
             f"round by round (target >= {TARGET:g}x)"]
    for name, walls in spent.items():
        if name != PRIME:
            ratios = [b / w for b, w in zip(spent[PRIME], walls, strict=True)]
            lines.append(f"  {name:40s} {statistics.median(ratios):5.2f}x (rounds: "
                         f"{', '.join(f'{r:.2f}' for r in ratios)})")
    return lines


def ceiling_lines(own_ms: float, theirs: Timings | None, count: int) -> list[str]:
    """The runs' own CPU time (the solutions' work, with the fork and exit of each run), and the
    ratio a CPU-bound host allows rewardkit at best: ``prime_code``'s CPU per sample over it."""
    lines = [f"\nthe runs' own CPU time (rewardkit's time_s: the solutions' work, and each run's fork "
             f"and exit) on the set without slow samples: {own_ms:.1f} ms per sample"]
    if theirs is not None and own_ms > 0:
        prime_ms = 1000 * statistics.median(sum(parts) for parts in theirs.cpu[PRIME]) / count
        lines.append(f"{PRIME}: {prime_ms:.1f} ms of CPU per sample; where every core is busy, rewardkit "
                     f"cannot be faster than {prime_ms / own_ms:.2f}x it per sample")
    return lines


def main() -> None:
    """Build the workload, time every judge on both sets, print rates, drift and verdicts."""
    args = arguments()
    samples = workload(args.data)[:args.limit]
    limits = Limits(time_s=TIME_S)
    kinds = {k: sum(s.kind == k for s in samples) for k in ("reference", "wrong", "slow")}
    print(f"throughput benchmark, {datetime.datetime.now().isoformat(timespec='seconds')}, "
          f"{os.cpu_count()} cores, python {sys.version.split()[0]}, {THREADS} threads per verl chunk")
    print(f"workload: {len(samples)} samples of {len({s.problem for s in samples})} APPS problems "
          f"({', '.join(f'{n} {k}' for k, n in kinds.items())}), {TIME_S:g} s per test")
    judges = per_sample_judges(args.verl_path)
    with sandbox_for(limits) as sandbox:
        judges["rewardkit Sandbox.run_many"] = batched(sandbox)
        for judge in judges.values():  # start workers and pools, as a trainer's first step does
            judge(samples[:2], "warm-up")
        baseline = PRIME if PRIME in judges else None
        sets = {"passing or failing fast": [s for s in samples if s.kind != "slow"],
                "slow (past the time limit)": [s for s in samples if s.kind == "slow"]}
        verdicts: dict[str, list[float]] = {name: [] for name in judges}
        judged: list[Sample] = []
        spent = {name: [0.0] * args.rounds for name in judges}
        measured: dict[str, Timings] = {}
        for title, chosen in ((t, c) for t, c in sets.items() if c):
            measured[title] = timings = interleaved(judges, chosen, args.rounds)
            print(f"\n[{title}] {len(chosen)} samples, median of {args.rounds} rounds, interleaved")
            print("\n".join([*rate_lines(len(chosen), timings, baseline), drift_line(timings.drift)]))
            judged += chosen
            for name in judges:
                verdicts[name] += timings.verdicts[name]
                spent[name] = [a + b for a, b in zip(spent[name], timings.walls[name], strict=True)]
        if baseline is not None:
            print("\n".join(whole_workload_lines(spent, len(judged))))
        fast = sets["passing or failing fast"]
        if fast:
            own = sum(r.time_s for r in sandbox.run_many([(s.code, TestSuite.from_dict(s.tests))
                                                           for s in fast]))
            theirs = measured.get("passing or failing fast") if baseline is not None else None
            print("\n".join(ceiling_lines(1000 * own / len(fast), theirs, len(fast))))
        print(f"\nverdicts on {len(judged)} samples")
        print("\n".join(verdict_lines(judged, verdicts, baseline or "rewardkit Sandbox.run_many")))
        if args.profile and fast:
            print(f"\ncProfile of the judge side, {len(fast)} samples judged one by one (top by own time)")
            profile_judge(sandbox, fast, 15)


if __name__ == "__main__":
    main()
