"""HumanEval+ side by side: EvalPlus's own evaluator and rewardkit, same file, same samples, one run.

Run ``python benchmarks/perf/bench_evalplus.py [--dataset HumanEvalPlus.jsonl.gz] [--workers 2]``.
EvalPlus runs from ``$EVALPLUS_PATH`` (default ``.cache/evalplus``, where
``make bench`` installs ``evalplus-requirements.txt`` without their declared
dependencies) or wherever the interpreter finds it; it reads the dataset
file given here through ``HUMANEVAL_OVERRIDE_PATH`` and downloads nothing.
Without EvalPlus, or without the dataset (default ``../shared/data/``), the
script says so and exits 0.  EvalPlus 0.3.1, the release on PyPI, fails
every ``find_zero`` (HumanEval/32) solution: its special oracle moves to the
next input before marking this one passed (fixed in EvalPlus's repository after the
release); the script names that difference as EvalPlus's.

The samples: every problem's canonical solution, a solution that returns
None for every fourth problem, and HumanEval/0 with ``<=`` for ``<`` (right on
HumanEval's inputs, wrong on a plus input).  Each side starts cold (its
expected outputs computed afresh, in throw-away cache folders) and runs with
``--workers`` processes.  EvalPlus runs as its ``evaluate()`` does
(``get_groundtruth``, then ``check_correctness`` per sample in a process
pool), without the CLI's watchdog thread, which keeps ``evalplus.evaluate``
alive up to 20 s after the last sample.  Printed: the per-sample verdicts that differ (a
sample passes HumanEval+ when EvalPlus says ``base_status == plus_status ==
"pass"``), and each side's wall time, cold and with its cache warm.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rewardkit.benchmarks.loaders import load_dataset
from rewardkit.benchmarks.loaders.common import read_records
from rewardkit.benchmarks.loaders.evalplus import LIMITS
from rewardkit.sandbox import Sandbox

DEFAULT = Path(__file__).resolve().parents[3] / "shared" / "data" / "HumanEvalPlus.jsonl.gz"
ROOT = Path(__file__).resolve().parents[2]
EVALPLUS_PATH = Path(os.environ.get("EVALPLUS_PATH", ROOT / ".cache" / "evalplus"))
# (EvalPlus version, task) -> why EvalPlus's verdict is its own bug, not a difference in protocol
KNOWN = {("0.3.1", "HumanEval/32"): "EvalPlus 0.3.1's find_zero oracle never marks an input passed"}
LESS_EQUAL_BUG = ("    s = sorted(numbers)\n"
                  "    return any(b - a <= threshold for a, b in zip(s, s[1:]))\n")


def samples(records: list[dict[str, Any]]) -> list[dict[str, str]]:
    """Canonical solutions of all problems, then the broken ones."""
    out = [{"task_id": r["task_id"], "solution": r["prompt"] + r["canonical_solution"]} for r in records]
    out += [{"task_id": r["task_id"], "solution": r["prompt"] + "    return None\n"} for r in records[::4]]
    out += [{"task_id": r["task_id"], "solution": r["prompt"] + LESS_EQUAL_BUG}
            for r in records if r["task_id"] == "HumanEval/0"]
    return out


# EvalPlus's evaluate() loop (get_groundtruth, then check_correctness per sample in a process pool),
# without its CLI's watchdog thread, which keeps the process up to 20 s after the last sample
EVALPLUS_DRIVER = """
import json, sys, time
from concurrent.futures import ProcessPoolExecutor
from evalplus.data import get_human_eval_plus, get_human_eval_plus_hash
from evalplus.evaluate import check_correctness, get_groundtruth
clock = time.perf_counter()
problems = get_human_eval_plus()
expected = get_groundtruth(problems, get_human_eval_plus_hash(), [])
todo = [json.loads(line) for line in open(sys.argv[1])]
with ProcessPoolExecutor(max_workers=int(sys.argv[2])) as pool:
    futures = [pool.submit(check_correctness, "humaneval", i, problems[s["task_id"]], s["solution"],
                           expected[s["task_id"]], False, True) for i, s in enumerate(todo)]
    verdicts = [f.result()["base"][0] == f.result()["plus"][0] == "pass" for f in futures]
import evalplus
print(json.dumps([verdicts, time.perf_counter() - clock, getattr(evalplus, "__version__", "?")]))
"""


def evalplus_env(**extra: str) -> dict[str, str]:
    """The environment EvalPlus runs in: ``EVALPLUS_PATH`` first on its path."""
    path = os.pathsep.join(filter(None, [str(EVALPLUS_PATH), os.environ.get("PYTHONPATH", "")]))
    return dict(os.environ, PYTHONPATH=path, **extra)


def run_evalplus(dataset: Path, sample_file: Path, workers: int,
                 cache: Path) -> tuple[list[bool], float, str]:
    """EvalPlus's verdict on each sample (in file order), its wall time and its version, in a
    fresh process."""
    env = evalplus_env(HUMANEVAL_OVERRIDE_PATH=str(dataset), XDG_CACHE_HOME=str(cache))
    done = subprocess.run([sys.executable, "-c", EVALPLUS_DRIVER, str(sample_file), str(workers)],
                          env=env, check=True, capture_output=True, text=True)
    verdicts, seconds, version = json.loads(done.stdout.strip().splitlines()[-1])
    return verdicts, seconds, version


def run_rewardkit(dataset: Path, todo: list[dict[str, str]],
                  workers: int) -> tuple[list[bool], float, float]:
    """rewardkit's verdict on each sample, its wall time (loading included) and the load's."""
    clock = time.perf_counter()
    problems = {p.problem_id: p for p in load_dataset(dataset)}
    loaded = time.perf_counter() - clock
    with Sandbox(workers=workers, limits=LIMITS) as sandbox:
        results = sandbox.run_many([(s["solution"], problems[s["task_id"]].tests) for s in todo])
    return [r.passed for r in results], time.perf_counter() - clock, loaded


def main() -> None:
    """Judge the same samples with both evaluators; print differences and wall times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=DEFAULT)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="the first N problems only")
    args = parser.parse_args()
    if not args.dataset.is_file():
        print(f"bench_evalplus: skipped, no dataset at {args.dataset}")
        return
    if subprocess.run([sys.executable, "-c", "import evalplus.evaluate"], env=evalplus_env(),
                      capture_output=True).returncode:
        print(f"bench_evalplus: skipped, EvalPlus is not importable (make bench installs it in "
              f"{EVALPLUS_PATH})")
        return
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        records = list(read_records(args.dataset))[: args.limit]
        dataset = work / "HumanEvalPlus.jsonl"
        dataset.write_text("".join(json.dumps(r) + "\n" for r in records))
        todo = samples(records)
        sample_file = work / "samples.jsonl"
        sample_file.write_text("".join(json.dumps(s) + "\n" for s in todo))
        os.environ["REWARDKIT_CACHE_DIR"] = str(work / "rewardkit-cache")
        their_cache = work / "evalplus-cache"
        theirs, their_cold, version = run_evalplus(dataset, sample_file, args.workers, their_cache)
        _, their_warm, _ = run_evalplus(dataset, sample_file, args.workers, their_cache)
        ours, our_cold, load_cold = run_rewardkit(dataset, todo, args.workers)
        _, our_warm, load_warm = run_rewardkit(dataset, todo, args.workers)
    differ = [(s["task_id"], t, o) for s, t, o in zip(todo, theirs, ours, strict=True) if t != o]
    print(f"HumanEval+ ({len(records)} problems, {sum(len(r['plus_input']) for r in records)} plus inputs), "
          f"{len(todo)} samples ({sum(theirs)} pass by EvalPlus, {sum(ours)} by rewardkit), "
          f"{args.workers} workers")
    print(f"  EvalPlus {version}; verdicts that differ: {len(differ)}" + "".join(
        f"\n    {task}: EvalPlus {'pass' if t else 'fail'}, rewardkit {'pass' if o else 'fail'}"
        + (f" ({KNOWN[version, task]})" if (version, task) in KNOWN else "")
        for task, t, o in differ))
    print(f"  EvalPlus:  {their_cold:.1f} s cold (expected outputs computed), "
          f"{their_warm:.1f} s warm")
    print(f"  rewardkit: {our_cold:.1f} s cold (expected outputs computed), {our_warm:.1f} s warm "
          f"(EvalPlus time / ours: {their_warm / our_warm:.2f} warm, {their_cold / our_cold:.2f} cold)")
    print(f"  rewardkit's load_dataset alone: {load_cold:.1f} s cold, {load_warm:.1f} s warm")


if __name__ == "__main__":
    main()
