"""``make demo``: the main job on the embedded default data.

Bundled candidate solutions (``rewardkit/data/demo_solutions.jsonl``: for
five embedded problems, correct-and-fast, correct-but-slow, wrong,
messy-but-correct and hostile ones) go through the benchmark (references
measured on this machine, Pass@1, Beyond-T/M/I with bootstrap CIs, the
report with plots) and through the ``quality_efficiency`` reward, whose
baseline is each problem's slowest passing reference (the code to improve
on).  The table shows both side by side.
"""

from __future__ import annotations

import json
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

from .benchmarks.bench import run_benchmark
from .benchmarks.embedded import load_mini
from .benchmarks.problem import Problem
from .benchmarks.report import metrics_table
from .benchmarks.runner import SampleResult, Solution, read_solutions
from .rewards import Engine, quality_efficiency
from .sandbox import Limits

LIMITS = Limits(time_s=2, memory_mb=512)


def demo_solutions() -> list[Solution]:
    """The bundled candidates, in ``rewardkit bench --solutions`` format."""
    path = resources.files("rewardkit").joinpath("data/demo_solutions.jsonl")
    with resources.as_file(path) as file:
        return read_solutions(file)


def baseline_metrics(problem: Problem) -> dict[str, Any]:
    """The slowest passing reference's measurements: the original code the reward compares with."""
    slowest = max(problem.passing_references(), key=lambda r: (r.metrics or {})["time_s"])
    return dict(slowest.metrics or {})


def rewards_for(problems: dict[str, Problem], solutions: list[Solution]) -> list[dict[str, Any]]:
    """``quality_efficiency`` for every candidate, as an Afterburner-format completion."""
    reward = quality_efficiency("time", engine=Engine(limits=LIMITS, repeats=3))
    samples = [{"completion": f"<thinking>{s.label}</thinking>\n<solution>\n```python\n{s.code}```\n"
                              "</solution>",
                "tests": problems[s.problem_id].tests,
                "baseline_metrics": baseline_metrics(problems[s.problem_id])} for s in solutions]
    try:
        return [r.to_dict() for r in reward.score(samples)]
    finally:
        reward.engine.close()


def format_table(results: list[SampleResult], rewards: list[dict[str, Any]]) -> str:
    """One line per candidate: verdict, CPU time, Beyond-T, the reward and two of its components."""
    head = ("problem", "candidate", "status", "time ms", "beyond_t", "reward", "efficiency", "quality")
    rows = [head]
    for result, reward in zip(results, rewards, strict=True):
        parts = reward["components"]
        rows.append((result.problem_id.removeprefix("mini/"), result.label[:38], result.status,
                     f"{1000 * result.time_s:.1f}", _fmt(result.values.get("beyond_t")),
                     _fmt(reward["value"]), _fmt(parts.get("efficiency_time")), _fmt(parts.get("quality"))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
                     for row in rows)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:+.3f}"


def main(out: str | None = None) -> int:
    """Run the demo; write the report (and ``demo.json``) under ``out`` (default ``out/demo``)."""
    start = time.monotonic()
    folder = Path(out or "out/demo")
    solutions = demo_solutions()
    problems = {p.problem_id: p for p in load_mini()}
    run = run_benchmark(list(problems.values()), solutions, folder, dataset="mini (demo candidates)",
                        limits=LIMITS)
    rewards = rewards_for(problems, solutions)
    print(format_table(run.results, rewards))
    print()
    print(metrics_table(run.report))
    rows = [{"problem_id": r.problem_id, "label": r.label, "status": r.status, "time_s": r.time_s,
             "values": r.values, "reward": w} for r, w in zip(run.results, rewards, strict=True)]
    (folder / "demo.json").write_text(json.dumps(rows, indent=2, default=str) + "\n", encoding="utf-8")
    print(f"\nreport: {folder / 'report.md'} (and report.json, plots, demo.json); "
          f"{time.monotonic() - start:.0f} s", file=sys.stderr)
    return 0
