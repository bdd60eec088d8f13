"""Benchmark of ``rewardkit.analyzers``: batched in-process analysis vs per-file tool CLIs.

Run ``python benchmarks/perf/bench_analyzers.py``. It generates 128 seeded
snippets of 20-80 lines that look like model output (a mix of clean and faulty
code), then prints:

* ``analyze_many`` throughput with warm workers on uncached snippets (and the
  cold start that warms them);
* the naive baseline the CISQ paper's analyzer used: every tool's CLI run as a
  subprocess once per file, on the same number of cores; measured on a subset
  and extrapolated (said so in the output);
* their ratio, against the targets (>= 40 files/s, >= 30x);
* the number of (tool, rule, line) differences between batched and one-by-one
  findings (target 0).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess  # nosec B404 - the baseline is the tools' own CLIs
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from rewardkit.analyzers import QualityReport, analyze_many, clear_cache

BLOCKS = [
    "def {f}(items):\n    out = ''\n    for item in items:\n        out += str(item)\n"
    "    return out\n",
    'def {f}(a: int, b: int) -> int:\n    """Weighted sum."""\n    return a + b * {n}\n',
    "def {f}(x: int) -> str:\n    return x + {n}\n",
    "def {f}(path):\n    try:\n        fh = open(path)\n        data = fh.read()\n"
    "    except:\n        pass\n    return None\n",
    "def {f}(arg):\n    return subprocess.call('echo ' + arg, shell=True)\n",
    "def {f}(xs, ys):\n    seen = list(ys)\n    hits = []\n    for x in xs:\n"
    "        if x in seen:\n            hits.append(x)\n    return hits\n",
    "def {f}(n):\n    i = 0\n    total = 0\n    while i < n:\n        total += i\n"
    "        i += 1\n    return total\n",
    "def {f}():\n    while True:\n        poll_{n}()\n",
    "def {f}(s):\n    return hashlib.md5(s.encode()).hexdigest()\n",
    "class Worker{n}:\n    \"\"\"Holds state.\"\"\"\n\n    def __init__(self, size):\n"
    "        self.size = size\n        self.items = []\n\n    def push(self, item):\n"
    "        self.items.append(item)\n        return len(self.items) <= self.size\n",
    "def {f}(rows):\n    result = []\n    for row in rows:\n        for cell in row:\n"
    "            if cell is None:\n                continue\n            result = result + [cell]\n"
    "    return result\n",
    "def {f}(a, b, c, d, e, g):\n    return (a + b) * (c - d) / (e or g or 1)\n",
    "def {f}(text):\n    try:\n        return json.loads(text)\n    except Exception:\n"
    "        return None\n",
]


def branches(name: str, rng: random.Random) -> str:
    """A function with a random number of elif branches (complexity 6-15)."""
    arms = "".join(
        f"    elif code == {i}:\n        return 'v{i}'\n" for i in range(1, rng.randint(5, 14))
    )
    return f"def {name}(code):\n    if code == 0:\n        return 'zero'\n{arms}    return 'other'\n"


def snippet(rng: random.Random, index: int) -> str:
    """One generated-looking module of 20-80 lines."""
    target = rng.randint(20, 80)
    header = "import hashlib\nimport json\nimport os\nimport subprocess\n\n"
    parts, lines, k = [header], header.count("\n"), 0
    while lines < target:
        name = f"task_{index}_{k}"
        if rng.random() < 0.15:
            block = branches(name, rng)
        else:
            block = rng.choice(BLOCKS).format(f=name, n=rng.randint(1, 99))
        if lines + block.count("\n") + 1 > 80:
            break
        parts.append(block + "\n")
        lines += block.count("\n") + 1
        k += 1
    return "".join(parts)


def snippets(count: int, seed: int) -> list[str]:
    """``count`` seeded snippets, each between 20 and 80 lines."""
    rng = random.Random(seed)  # nosec B311 - seeded synthetic snippets, not security
    out: list[str] = []
    while len(out) < count:
        code = snippet(rng, len(out))
        if 20 <= code.count("\n") <= 80:
            out.append(code)
    return out


def keys(report: QualityReport) -> Counter[tuple[str, str, int]]:
    """The (tool, rule, line) multiset of a report."""
    return Counter((f.tool, f.rule, f.line) for f in report.findings)


def cli_commands(path: str, cache: str) -> list[list[str]]:
    """Each tool's own command line for one file, as a per-file analyzer would run them."""
    py = sys.executable
    return [
        [py, "-m", "pylint", "--score=n", path],
        [py, "-m", "radon", "cc", "-s", path],
        [py, "-m", "radon", "mi", "-s", path],
        [py, "-m", "vulture", path],
        [py, "-m", "bandit", "-q", path],
        [py, "-m", "mypy", "--ignore-missing-imports", f"--cache-dir={cache}", path],
    ]


def cli_seconds_per_file(codes: list[str], workers: int) -> float:
    """Wall seconds per file running every tool's CLI per file, ``workers`` files at a time."""
    with tempfile.TemporaryDirectory() as tmp:
        cache = str(Path(tmp) / "mypy-cache")
        paths = []
        for i, code in enumerate(codes):
            path = Path(tmp) / f"snippet_{i}.py"
            path.write_text(code)
            paths.append(str(path))

        def one(path: str) -> None:
            for cmd in cli_commands(path, cache):
                subprocess.run(cmd, capture_output=True, check=False, cwd=tmp)  # nosec B603 - fixed argv

        one(paths[0])  # warm mypy's cache and the OS file cache: the baseline's best case
        start = time.perf_counter()
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(one, paths))
        return (time.perf_counter() - start) / len(paths)


def batch_differences(codes: list[str], batched: list[QualityReport]) -> int:
    """(tool, rule, line) findings that differ between batched reports and one-by-one analysis."""
    clear_cache()
    diffs = 0
    for code, report in zip(codes, batched, strict=True):
        clear_cache()
        alone = analyze_many([code], workers=1)[0]
        diffs += sum(((keys(report) - keys(alone)) + (keys(alone) - keys(report))).values())
    return diffs


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=128)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cli-sample", type=int, default=8, help="files timed for the CLI baseline")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3, help="timed sets of --files snippets")
    args = parser.parse_args()
    codes = snippets(args.files, args.seed)
    sizes = [c.count("\n") for c in codes]
    print(f"rewardkit.analyzers benchmark: {len(codes)} snippets of {min(sizes)}-{max(sizes)} "
          f"lines (seed {args.seed}), all tools on, {args.workers} workers, "
          f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}")

    start = time.perf_counter()
    analyze_many(snippets(16, args.seed + 1), workers=args.workers)
    print(f"cold start (start workers, warm pylint/mypy, 16 other snippets): "
          f"{time.perf_counter() - start:.2f} s")

    rates: list[float] = []
    batched: list[QualityReport] = []
    for k in range(args.rounds):  # fresh seeded sets: nothing cached in any process
        clear_cache()
        batch = codes if k == 0 else snippets(args.files, args.seed + 100 + k)
        start = time.perf_counter()
        reports = analyze_many(batch, workers=args.workers)
        batch_s = time.perf_counter() - start
        rates.append(len(batch) / batch_s)
        batched = batched or reports
        print(f"analyze_many, warm workers, uncached, set {k}: {len(batch)} files in "
              f"{batch_s:.2f} s = {rates[-1]:.1f} files/s "
              f"({sum(len(r.errors) for r in reports)} tool errors, "
              f"{sum(len(r.findings) for r in reports)} findings)")
    ours = statistics.median(rates)
    print(f"analyze_many throughput: median {ours:.1f} files/s, best {max(rates):.1f} "
          f"over {len(rates)} sets (load average now {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs)")

    start = time.perf_counter()
    analyze_many(batch, workers=args.workers)
    print(f"analyze_many, cached re-run of the last set: {time.perf_counter() - start:.3f} s")

    sample = random.Random(args.seed).sample(  # nosec B311 - a reproducible subset, not security
        codes, min(args.cli_sample, len(codes)))
    per_file = cli_seconds_per_file(sample, args.workers)
    naive = 1.0 / per_file
    print(f"per-file CLI baseline (pylint, radon cc, radon mi, vulture, bandit, mypy as one "
          f"subprocess each per file, {args.workers} files at a time): measured on "
          f"{len(sample)} files, extrapolated to {len(codes)}: {per_file * len(codes):.1f} s "
          f"= {naive:.2f} files/s")
    ratio = ours / naive
    print(f"throughput: {ours:.1f} files/s vs {naive:.2f} files/s -> {ratio:.0f}x "
          f"[targets: >= 40 files/s {'PASS' if ours >= 40 else 'FAIL'}, "
          f">= 30x {'PASS' if ratio >= 30 else 'FAIL'}]")

    diffs = batch_differences(codes, batched)
    print(f"batched vs per-file findings (tool, rule, line): {diffs} differences over "
          f"{len(codes)} snippets [target 0: {'PASS' if diffs == 0 else 'FAIL'}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
