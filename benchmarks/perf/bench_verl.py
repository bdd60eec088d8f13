"""verl's per-sample reward calls: gathered into one engine batch vs the batch path vs one by one.

verl's reward loop (``verl/experimental/reward_loop/reward_manager/naive.py``,
``run_single``) calls the custom reward once per sample, a chunk's samples all at once:
in the event loop's thread pool for a plain function, awaited for a coroutine function.
For one GRPO-shaped step (2 prompts x 8 completions, duplicates in each group, stdio
tests), with ``cisq_grpo`` on one warm sandbox, this prints the wall time of:

* ``per-sample, gathered (threads)``: ``rewardkit.rewards.verl.compute_score`` as verl
  calls it from 32 threads;
* ``per-sample, gathered (async)``: ``compute_score_async`` as verl awaits it;
* ``batch``: ``compute_score_batch`` on the whole step (verl's ``batch`` manager);
* ``per-sample, not gathered``: every call its own engine batch, from 32 threads (what
  ``compute_score`` did before it gathered calls).

Every measurement scores code new to the caches (a fresh marker), and each figure is the
median of ``--rounds`` rounds.  Run: ``python benchmarks/perf/bench_verl.py``.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from rewardkit.benchmarks.perf.verl_calls import verl_manager
from rewardkit.rewards import verl

TESTS = json.dumps({"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{n * (n + 1) // 2}\n"}
                                               for n in (3, 100, 1000, 5000)]})
CODES = ["n = int(input())\nprint(n * (n + 1) // 2)\n",
         "n = int(input())\ntotal = 0\nfor i in range(n + 1):\n    total += i\nprint(total)\n",
         "n = int(input())\nprint(n)\n"]
GROUP = [0, 0, 0, 1, 1, 2, 0, 1]  # one prompt's 8 completions: duplicates, as sampling gives them


def step() -> list[tuple[str, str, dict[str, Any]]]:
    """16 samples (solution, ground truth, extra info), their code new to every cache."""
    marker = uuid.uuid4().hex
    return [(f"```python\n# {marker} {prompt}\n{CODES[k]}```", TESTS, {"index": prompt})
            for prompt in range(2) for k in GROUP]


def uncoalesced(data_source: Any, solution_str: str, ground_truth: Any, extra_info: dict[str, Any]) -> Any:
    """One sample, its own engine batch (the reward is the same one the gathered calls use)."""
    [sample] = verl.verl_samples([data_source], [solution_str], [ground_truth], [extra_info])
    return verl.verl_result(verl.reward_for().score([sample])[0])


def batch(samples: list[tuple[str, str, dict[str, Any]]]) -> list[Any]:
    return verl.compute_score_batch(["bench"] * len(samples), *map(list, zip(*samples, strict=True)))


MODES: dict[str, Callable[[list[tuple[str, str, dict[str, Any]]]], list[Any]]] = {
    "per-sample, gathered (threads)": functools.partial(verl_manager, verl.compute_score),
    "per-sample, gathered (async)": functools.partial(verl_manager, verl.compute_score_async),
    "batch": batch,
    "per-sample, not gathered": functools.partial(verl_manager, uncoalesced),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    engine, coalescer = verl.reward_for().engine, verl.scorer().coalescer
    verl_manager(verl.compute_score, step())  # warm the sandbox's workers and the analyzers
    times: dict[str, list[float]] = {mode: [] for mode in MODES}
    runs: dict[str, int] = {}
    batches: dict[str, list[int]] = {mode: [] for mode in MODES}
    for _ in range(args.rounds):
        for mode, run in MODES.items():
            samples = step()
            before, gathered, started = engine.executions, coalescer.batches, time.perf_counter()
            results = run(samples)
            times[mode].append(time.perf_counter() - started)
            runs[mode] = engine.executions - before
            batches[mode].append(coalescer.batches - gathered)
            assert len(results) == len(samples) and all("score" in r for r in results)
    print(f"16 samples (2 prompts x 8, {len({s for s, _, _ in step()})} distinct), cisq_grpo, "
          f"median of {args.rounds}:")
    for mode, seconds in times.items():
        made = f", engine batches gathered per round {batches[mode]}" if any(batches[mode]) else ""
        print(f"  {mode:32s} {statistics.median(seconds):6.2f} s   {runs[mode]:2d} sandbox runs{made}")


if __name__ == "__main__":
    main()
