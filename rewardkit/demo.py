"""``make demo``: run the bundled example candidates through the sandbox.

The examples (``rewardkit/data/examples.json``) cover the three test modes and
the kinds of completion an RL run produces: correct and fast, correct but
slow, wrong, hostile, messy.  Each is run with ``repeats=3`` so the time
figures are medians, and the table shows the verdict and the measured cost.
"""

from __future__ import annotations

import json
import time
from importlib import resources
from pathlib import Path
from typing import Any

from .sandbox import Limits, Sandbox

LIMITS = Limits(time_s=5, memory_mb=512)


def load_examples() -> list[dict[str, Any]]:
    text = resources.files("rewardkit").joinpath("data/examples.json").read_text(encoding="utf-8")
    problems: list[dict[str, Any]] = json.loads(text)["problems"]
    return problems


def run_examples(sandbox: Sandbox) -> list[dict[str, Any]]:
    problems = load_examples()
    jobs = [(c["code"], p["tests"], c["language"]) for p in problems for c in p["candidates"]]
    results = sandbox.run_many(jobs, limits=LIMITS)
    rows = []
    pairs = [(p, c) for p in problems for c in p["candidates"]]
    for (problem, candidate), result in zip(pairs, results, strict=True):
        if result.passed:  # medians of three for the ones worth timing
            result = sandbox.run(candidate["code"], problem["tests"], candidate["language"],
                                 limits=LIMITS, repeats=3)
        rows.append({"problem": problem["id"], "candidate": candidate["label"],
                     "language": candidate["language"], **result.to_dict()})
    return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    header = ("problem", "candidate", "status", "tests", "CPU ms", "peak MiB", "MiB·s")
    lines = [[r["problem"], r["candidate"], r["status"], f"{r['tests_passed']}/{r['tests_total']}",
              f"{r['time_s'] * 1000:.1f}", f"{r['peak_memory_kb'] / 1024:.1f}",
              f"{r['integral_kb_s'] / 1024:.3f}"] for r in rows]
    widths = [max(len(str(x)) for x in column) for column in zip(header, *lines, strict=True)]
    out = ["  ".join(str(x).ljust(w) for x, w in zip(header, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(str(x).ljust(w) for x, w in zip(line, widths, strict=True)) for line in lines]
    return "\n".join(out)


def main(out: str | None = None) -> int:
    started = time.monotonic()
    with Sandbox() as sandbox:
        rows = run_examples(sandbox)
        isolation = sandbox.isolation
    print(format_table(rows))
    active = [k for k, v in isolation.items() if v and k != "notes"]
    print(f"\n{len(rows)} candidates in {time.monotonic() - started:.1f} s; "
          f"isolation: {', '.join(active) or 'rlimits only'}")
    for note in isolation.get("notes", []):
        print(f"note: {note}")
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps({"rows": rows, "isolation": isolation}, indent=2))
        print(f"results written to {out}")
    return 0
