"""``rewardkit bench``: load a dataset, measure its references here, evaluate solutions, report."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sandbox import Limits, Sandbox
from .problem import Problem
from .references import machine_id, measure_references
from .report import write_report
from .runner import BenchError, SampleResult, Solution, evaluate, summarise


@dataclass
class BenchRun:
    """What a benchmark run produced: the report and the files written."""

    report: dict[str, Any]
    results: list[SampleResult]
    files: list[Path]


def run_benchmark(problems: Sequence[Problem], solutions: Sequence[Solution], out: Path | None,
                  dataset: str = "", samples: int | None = None, workers: int | None = None,
                  repeats: int = 3, limits: Limits | None = None, progress: bool = True) -> BenchRun:
    """Measure the references of the problems that have solutions, evaluate, write the report.

    ``samples`` keeps the first N samples of each problem (by ``sample``
    number); ``repeats`` applies to references and candidates alike.
    """
    if samples is not None:
        if samples < 1:
            raise BenchError(f"--samples must be at least 1, got {samples}")
        solutions = [s for s in solutions if s.sample < samples]
    if not solutions:
        raise BenchError("no solutions to evaluate")
    wanted = {s.problem_id for s in solutions}
    chosen = [p for p in problems if p.problem_id in wanted]
    start = time.monotonic()
    with Sandbox(workers=workers, repeats=repeats) as sandbox:
        measured = measure_references(chosen, sandbox, limits, progress)
        results = evaluate(problems, solutions, sandbox, limits, progress)
    report = {"dataset": dataset, "machine": machine_id(), "repeats": repeats,
              "references_measured": measured, **summarise(chosen, results),
              "seconds": round(time.monotonic() - start, 1)}
    files = write_report(report, out) if out is not None else []
    return BenchRun(report, results, files)
