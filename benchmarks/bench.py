"""``rewardkit bench``: load a dataset, measure references and solutions here in shared rounds, report."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sandbox import Limits, Sandbox, protocol
from .problem import Problem
from .references import machine_id, measure_references
from .report import write_report
from .runner import BenchError, SampleResult, Solution, evaluate
from .summary import summarise

DEFAULT_REPEATS = 3  # median of 3 under rewardkit's protocol


@dataclass
class BenchRun:
    """What a benchmark run produced: the report and the files written."""

    report: dict[str, Any]
    results: list[SampleResult]
    files: list[Path]


def run_benchmark(problems: Sequence[Problem], solutions: Sequence[Solution], out: Path | None,
                  dataset: str = "", samples: int | None = None, workers: int | None = None,
                  repeats: int | None = None, limits: Limits | None = None, progress: bool = True,
                  evaluations: int = 1, measurement: str = "rewardkit") -> BenchRun:
    """Measure the references of the problems that have solutions, evaluate, write the report.

    The references' cached measurements (:func:`.references.measure_references`)
    give their verdicts; every evaluation then measures each problem's passing
    references again in the same rounds as its samples (:func:`.runner.evaluate`),
    and Beyond-T/M/I, Beyond@K and DPS_norm rank the samples among those values.

    ``samples`` keeps the first N samples of each problem (by ``sample``
    number); ``repeats`` applies to references and candidates alike (default:
    3 under rewardkit's protocol, the protocol's own under a paper's).
    ``measurement`` names the measurement protocol (:data:`rewardkit.sandbox.PROTOCOLS`:
    ``rewardkit``, ``monolith``, ``mercury``): its limits, repeats,
    statistic and clock apply to references and candidates, and "time"
    (Beyond-T, Beyond@K, B/M/W/F of time) is its time.
    ``evaluations`` runs every solution that many times (fresh runs, each
    judged again): Afterburner appendix G.1 uses 16 and bootstraps the CIs
    over them; with 1 (the default, 16 times faster) the CIs are over each
    problem's samples and the report says so (:mod:`.summary`).
    """
    solutions = _kept(solutions, samples, evaluations)
    wanted = {s.problem_id for s in solutions}
    chosen = [p for p in problems if p.problem_id in wanted]
    start = time.monotonic()
    chosen_protocol = protocol(measurement)
    if repeats is None:
        repeats = DEFAULT_REPEATS if chosen_protocol.name == "rewardkit" else chosen_protocol.repeats
    with Sandbox(workers=workers, repeats=repeats, protocol=chosen_protocol) as sandbox:
        measured = measure_references(chosen, sandbox, limits, progress)
        results = evaluate(problems, solutions, sandbox, limits, progress, evaluations)
    report = {"dataset": dataset, "machine": machine_id(), "repeats": repeats, "evaluations": evaluations,
              "protocol": {"name": chosen_protocol.name, "description": chosen_protocol.description,
                           "clock": chosen_protocol.clock, "statistic": chosen_protocol.statistic},
              "references_measured": measured, **summarise(chosen, results),
              "seconds": round(time.monotonic() - start, 1)}
    files = write_report(report, out) if out is not None else []
    return BenchRun(report, results, files)


def _kept(solutions: Sequence[Solution], samples: int | None, evaluations: int) -> list[Solution]:
    """The first ``samples`` samples of each problem; BenchError for bad counts or nothing to evaluate."""
    if samples is not None and samples < 1:
        raise BenchError(f"--samples must be at least 1, got {samples}")
    if evaluations < 1:
        raise BenchError(f"--evaluations must be at least 1, got {evaluations}")
    kept = [s for s in solutions if samples is None or s.sample < samples]
    if not kept:
        raise BenchError("no solutions to evaluate")
    return kept
