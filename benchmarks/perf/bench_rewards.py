"""Reward benchmark: one GRPO-shaped batch through ``quality_efficiency``.

The batch is what a trainer hands the reward at one step: 8 problems × 8
completions (duplicates inside each group, 10 stdio tests per problem, half
the completions passing), each problem with a slower baseline to beat.
rewardkit's latency for the batch is printed next to a reference: the same
batch computed naively, each component on its own for each completion, with
no shared runs and no caches (every component runs or analyses the code
again, the baseline is measured again per completion).
Both sides use the same warm worker pool, so the difference is the sharing,
de-duplication and caching, not process start-up.

Last, the sandbox time of one group of 8 measured in paired rounds against the same
group measured run by run (``python benchmarks/perf/bench_rewards.py cost`` prints it alone).

Run: ``python benchmarks/perf/bench_rewards.py`` (``make bench`` runs it).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

from rewardkit.analyzers import analyze_many, clear_cache
from rewardkit.rewards.composite import Reward
from rewardkit.rewards.engine import Engine
from rewardkit.rewards.presets import quality_efficiency
from rewardkit.sandbox import Sandbox

TARGET_S = 10.0
GROUP = 8  # completions per problem (one GRPO group), see batch()


@dataclass
class Problem:
    """A stdio problem: a reference solution to make outputs, a baseline, and candidates."""

    name: str
    inputs: list[str]
    fast: str
    slow: str
    wrong: str
    crash: str

    def tests(self) -> dict[str, Any]:
        """Ten stdio cases whose outputs the fast solution writes."""
        cases = []
        for text in self.inputs:
            cases.append({"input": text, "output": _reference_output(self.fast, text)})
        return {"mode": "stdio", "cases": cases}


def _reference_output(code: str, stdin: str) -> str:
    """Run the reference (ours, trusted) in this process to write the expected output."""
    lines = iter(stdin.splitlines())
    out: list[str] = []
    names = {"input": lambda: next(lines), "print": lambda *a: out.append(" ".join(map(str, a)))}
    exec(code, names)  # nosec B102
    return "\n".join(out) + "\n"


def _lists(rng: random.Random, size: int, count: int = 10, top: int = 50) -> list[str]:
    rows = []
    for _ in range(count):
        values = [rng.randint(0, top) for _ in range(rng.randint(size // 2, size))]
        rows.append(f"{len(values)}\n{' '.join(map(str, values))}\n")
    return rows


READ = "n = int(input())\nvalues = list(map(int, input().split()))\n"


def problems() -> list[Problem]:
    """Eight small problems; each has a fast and a slow correct solution, a wrong one and a crash."""
    rng = random.Random(7)  # nosec B311 - seeded test data, not security
    numbers = [f"{rng.randint(50, 400)}\n" for _ in range(10)]
    words = [" ".join(rng.choice(["ab", "cd", "ef", "gh"]) for _ in range(rng.randint(3, 30))) + "\n"
             for _ in range(10)]
    return [
        Problem("sum", _lists(rng, 300), READ + "print(sum(values))",
                READ + "total = 0\nfor i in range(n):\n    total = sum(values[: i + 1])\nprint(total)",
                READ + "print(sum(values[1:]))", READ + "print(values[n])"),
        Problem("distinct", _lists(rng, 300), READ + "print(len(set(values)))",
                READ + "seen = []\nfor v in values:\n    if v not in seen:\n        seen.append(v)\n"
                "print(len(seen))",
                READ + "print(len(values))", READ + "print(len(set(values)) / 0)"),
        Problem("maximum", _lists(rng, 300), READ + "print(max(values))",
                READ + "print(sorted(values, key=lambda v: -v)[0])",
                READ + "print(values[0])", READ + "print(max(values[n:]))"),
        Problem("pairs", _lists(rng, 200), READ + "from collections import Counter\n"
                "c = Counter(values)\nprint(sum(k * (k - 1) // 2 for k in c.values()))",
                READ + "print(sum(values[i] == values[j] for i in range(n) for j in range(i + 1, n)))",
                READ + "print(n * (n - 1) // 2)", READ + "print(values.index(-1))"),
        Problem("fibonacci", numbers, "n = int(input())\na, b = 0, 1\nfor _ in range(n):\n"
                "    a, b = b, (a + b) % 1000000007\nprint(a)",
                "n = int(input())\nf = [0, 1]\nfor i in range(2, n + 1):\n"
                "    f = f + [(f[-1] + f[-2]) % 1000000007]\nprint(f[n])",
                "n = int(input())\na, b = 0, 1\nfor _ in range(n - 1):\n    a, b = b, a + b\nprint(a)",
                "import sys\nsys.setrecursionlimit(50)\ndef f(n):\n"
                "    return n if n < 2 else f(n - 1) + f(n - 2)\nprint(f(int(input())))"),
        Problem("primes", numbers, "n = int(input())\nsieve = [True] * (n + 1)\nsieve[:2] = [False, False]\n"
                "for i in range(2, int(n ** 0.5) + 1):\n    if sieve[i]:\n"
                "        sieve[i * i :: i] = [False] * len(sieve[i * i :: i])\nprint(sum(sieve))",
                "n = int(input())\nprint(sum(all(k % d for d in range(2, k)) for k in range(2, n + 1)))",
                "n = int(input())\nprint(sum(k % 2 for k in range(n)))",
                "n = int(input())\nprint(int('primes'))"),
        Problem("reverse", words, "print(' '.join(reversed(input().split())))",
                "out = ''\nfor w in input().split():\n    out = w + ' ' + out\nprint(out.strip())",
                "print(input()[::-1])", "print(input().split()[99])"),
        Problem("prefix", _lists(rng, 300), READ + "best = run = 0\nfor v in values:\n"
                "    run += v - 25\n    best = max(best, run)\nprint(best)",
                READ + "print(max([0] + [sum(v - 25 for v in values[: i + 1]) for i in range(n)]))",
                READ + "print(max(0, sum(v - 25 for v in values)))", READ + "print(undefined)"),
    ]


def answer(code: str) -> str:
    """``code`` as an Afterburner-format completion."""
    return f"<thinking>try this</thinking>\n<solution>\n```python\n{code}\n```\n</solution>"


def batch() -> list[dict[str, Any]]:
    """8 completions per problem: 2 fast, 2 slow (4 pass), 2 wrong, 1 crash, 1 without code."""
    samples = []
    for problem in problems():
        tests = problem.tests()
        group = [answer(problem.fast), answer(problem.fast), answer(problem.slow),
                 answer(problem.slow), answer(problem.wrong), answer(problem.wrong),
                 answer(problem.crash), "<thinking>no idea</thinking>\n<solution>\n</solution>"]
        baseline = "# the original solution\n" + problem.slow  # not one of the candidates
        samples += [{"completion": text, "tests": tests, "baseline_code": baseline} for text in group]
    return samples


def rewardkit_batch(sandbox: Sandbox, samples: list[dict[str, Any]]) -> tuple[float, Reward, list[Any]]:
    """One trainer step: a fresh engine (empty caches) on the warm pool."""
    clear_cache()
    reward = quality_efficiency("time", engine=Engine(sandbox=sandbox))
    start = time.perf_counter()
    results = reward.score(samples)
    return time.perf_counter() - start, reward, results


def naive_batch(sandbox: Sandbox, samples: list[dict[str, Any]],
                reward: Reward) -> tuple[float, int, list[dict[str, Any]]]:
    """Each component for each completion on its own: no sharing, no cache."""
    executions = 0
    values: list[dict[str, Any]] = [{} for _ in samples]
    start = time.perf_counter()
    for component, _ in reward.components:
        for i, sample in enumerate(samples):
            clear_cache()
            engine = Engine(sandbox=sandbox)
            (result,) = Reward([(component, 1.0)], engine).score([sample])
            executions += engine.executions
            values[i][component.name] = result.components[component.name]
    return time.perf_counter() - start, executions, values


def measure(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """rewardkit three times (fresh caches), once more with warm caches, then the naive way."""
    with Sandbox(workers=os.cpu_count(), repeats=3) as sandbox:
        sandbox.run("print(1)", {"mode": "stdio", "cases": [{"input": "", "output": "1\n"}]})
        analyze_many(["x = 1\n", "y = 2\n"])  # start the analysis pool, as after a trainer's first step
        timings = []
        for _ in range(3):
            seconds, reward, results = rewardkit_batch(sandbox, samples)
            timings.append(seconds)
        start = time.perf_counter()
        reward.score(samples)
        cached = time.perf_counter() - start
        naive_s, naive_runs, naive_values = naive_batch(sandbox, samples, reward)
    exact = [c.name for c, _ in reward.components if not c.name.startswith("efficiency")]
    pairs = zip(results, naive_values, strict=True)
    return {"timings": timings, "runs": reward.engine.executions, "cached": cached, "naive_s": naive_s,
            "naive_runs": naive_runs, "results": results,
            "agree": sum(all(r.components[k] == n[k] for k in exact) for r, n in pairs)}


def group_cost(trials: int = 3) -> dict[str, float]:
    """Worker time for one GRPO group of 8 distinct passing candidates and their baseline with
    ``repeats=3``, on one worker: each run on its own with its repeats (the unpaired scheme:
    27 runs), and the paired rounds (3 rounds: 28 runs).  The median of ``trials``, alternated."""
    problem = problems()[0]
    tests = problem.tests()
    baseline = "# the original solution\n" + problem.slow
    codes = [f"{code}\n# variant {i}" for i in range(4) for code in (problem.fast, problem.slow)]
    unpaired, paired = [], []
    with Sandbox(workers=1, repeats=3) as sandbox:
        sandbox.run(baseline, tests)  # warm-up
        for _ in range(trials):
            start = time.perf_counter()
            sandbox.run_many([(code, tests) for code in [baseline, *codes]])
            unpaired.append(time.perf_counter() - start)
            start = time.perf_counter()
            sandbox.run_paired(baseline, codes, tests, rounds=3)
            paired.append(time.perf_counter() - start)
    return {"unpaired": statistics.median(unpaired), "paired": statistics.median(paired)}


def print_group_cost() -> None:
    """Print :func:`group_cost` and the ratio against the bound it is held to (1.3x)."""
    cost = group_cost()
    ratio = cost["paired"] / cost["unpaired"]
    print(f"one group of 8 (repeats=3) on one worker: unpaired {cost['unpaired']:.2f} s (27 runs), "
          f"paired rounds {cost['paired']:.2f} s (28 runs): {ratio:.2f}x, bound 1.3x: "
          f"{'met' if ratio <= 1.3 else 'MISSED'}")


def main(argv: list[str]) -> None:
    """Print the batch, rewardkit's latency and the naive reference, then the paired cost
    (``cost``: the paired cost alone)."""
    if argv[:1] == ["cost"]:
        print_group_cost()
        return
    print(f"reward benchmark on {os.cpu_count()} cores, python {sys.version.split()[0]}")
    samples = batch()
    print(f"batch: {len(samples)} completions, {len({s['completion'] for s in samples})} distinct, "
          f"10 tests each, {len(samples) // GROUP} baselines")
    m = measure(samples)
    latency = statistics.median(m["timings"])
    passed = sum(1 for r in m["results"] if r.components["transition"] in (0.5, 1.0))
    print(f"passing candidates measured: {passed}/{len(samples)}")
    verdict = "met" if latency <= TARGET_S else "MISSED"
    print(f"rewardkit   {latency:7.2f} s  (median of 3: {', '.join(f'{t:.2f}' for t in m['timings'])}), "
          f"{m['runs']} sandbox runs, target <= {TARGET_S:.0f} s: {verdict}")
    print(f"same batch again (caches warm) {m['cached']:.3f} s")
    print(f"naive       {m['naive_s']:7.2f} s, {m['naive_runs']} sandbox runs")
    print(f"speed-up {m['naive_s'] / latency:.1f}x; components other than efficiency equal to the naive "
          f"ones on {m['agree']}/{len(samples)} completions")
    print_group_cost()


if __name__ == "__main__":
    main(sys.argv[1:])
