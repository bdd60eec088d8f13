"""Evaluate solutions on a benchmark: run them, compare with the references, summarise.

Every metric is the mean over problems of the mean over a problem's samples
of one per-sample value: passed (Pass@1), the Venus percentile rank on time,
memory and integral with failures at 0 (Beyond-T/M/I), the B/M/W/F
indicators, Mercury's runtime score (Beyond@K with K = the samples given) and
EvalPerf's DPS_norm.  That shape is what the bootstrap resamples for the
confidence intervals.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..rewards.extract import completion_text, extract_code
from ..sandbox import Limits, Sandbox
from . import metrics
from .loaders import runnable_code
from .problem import Problem

OBJECTIVE_KEYS = {"t": "time_s", "m": "peak_memory_kb", "i": "integral_kb_s"}
HEADLINE = ("pass@1", "beyond_t", "beyond_m", "beyond_i")


class BenchError(ValueError):
    """Solutions or options that cannot be evaluated; the message says what to fix."""


@dataclass
class Solution:
    """One candidate for one problem: JSONL ``{"problem_id", "code", "sample"}``."""

    problem_id: str
    code: str
    sample: int = 0
    label: str = ""


@dataclass
class SampleResult:
    """A solution's measured run and its per-sample metric values."""

    problem_id: str
    sample: int
    label: str
    status: str
    passed: bool
    time_s: float
    peak_memory_kb: float
    integral_kb_s: float
    feedback: str
    values: dict[str, float] = field(default_factory=dict)


def read_solutions(path: str | Path) -> list[Solution]:
    """Solutions from JSONL; ``code`` may be a model completion (fences, tags): code is extracted."""
    solutions = []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
            text = completion_text(record.get("code", record.get("completion"))).value or ""
            solutions.append(Solution(str(record["problem_id"]), extract_code(text) or text,
                                      int(record.get("sample", 0)), str(record.get("label", ""))))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BenchError(f"{path}:{number}: a solution needs 'problem_id' and 'code' ({exc})") from exc
    return solutions


def evaluate(problems: Sequence[Problem], solutions: Sequence[Solution], sandbox: Sandbox,
             limits: Limits | None = None, progress: bool = True) -> list[SampleResult]:
    """Run every solution against its problem's tests (references must be measured already)."""
    by_id = {p.problem_id: p for p in problems}
    unknown = sorted({s.problem_id for s in solutions} - set(by_id))
    if unknown:
        raise BenchError(f"solutions for problems the dataset does not have: {', '.join(unknown[:5])}"
                         + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""))
    results = []
    with tqdm(total=len(solutions), desc="evaluating", unit="solution", disable=not progress,
              file=sys.stderr) as bar:
        for start in range(0, len(solutions), 4 * sandbox.workers):
            chunk = solutions[start:start + 4 * sandbox.workers]
            jobs = [(runnable_code(by_id[s.problem_id], s.code), by_id[s.problem_id].tests,
                     by_id[s.problem_id].language) for s in chunk]
            for solution, run in zip(chunk, sandbox.run_many(jobs, limits=limits), strict=True):
                result = SampleResult(solution.problem_id, solution.sample, solution.label,
                                      run.status.value, run.passed, run.time_s, run.peak_memory_kb,
                                      run.integral_kb_s, run.feedback)
                result.values = sample_values(result, by_id[solution.problem_id])
                results.append(result)
            bar.update(len(chunk))
    return results


def sample_values(result: SampleResult, problem: Problem) -> dict[str, float]:
    """The per-sample values the metrics average (see the module docstring).

    Without a passing reference a problem has no efficiency values at all (it
    is left out of those metrics rather than scored 0 or 1); DPS_norm is
    EvalPerf's, over passing samples only.
    """
    values = {"pass@1": float(result.passed)}
    for letter, key in OBJECTIVE_KEYS.items():
        refs = problem.reference_values(key)
        if refs:
            rank = metrics.percentile_rank(getattr(result, key), refs) if result.passed else 0.0
            values[f"beyond_{letter}"] = rank
            if letter == "t":
                values.update(metrics.bmwf_indicators(result.passed, rank))
    times = problem.reference_values("time_s")
    if times:
        values["beyond_at_k"] = (metrics.runtime_score(result.time_s, min(times), max(times))
                                 if result.passed else 0.0)
        if result.passed:
            values["dps_norm"] = metrics.dps_norm(result.time_s, times)
    return values


def summarise(problems: Sequence[Problem], results: Sequence[SampleResult], seed: int = 0
              ) -> dict[str, Any]:
    """``report.json``: top-level metrics with bootstrap CIs, then one row per problem.

    A metric's value is the mean over the problems that have it of the mean
    over their samples; its CI comes from :func:`metrics.bootstrap`.
    """
    grouped: dict[str, list[SampleResult]] = {}
    for result in results:
        grouped.setdefault(result.problem_id, []).append(result)
    evaluated = [p for p in problems if p.problem_id in grouped]
    names = [*HEADLINE, "B", "M", "W", "F", "beyond_at_k", "dps_norm"]
    top: dict[str, Any] = {}
    for name in names:
        per_problem = [values for p in evaluated
                       if (values := [r.values[name] for r in grouped[p.problem_id] if name in r.values])]
        if not per_problem:
            continue
        _, low, high = metrics.bootstrap(per_problem, seed=seed)
        value = statistics.fmean(statistics.fmean(v) for v in per_problem)
        top[name] = {"value": value, "ci95": [low, high], "problems": len(per_problem)}
    rows = [_problem_row(p, grouped[p.problem_id]) for p in evaluated]
    samples = [len(grouped[p.problem_id]) for p in evaluated]
    return {"metrics": top, "problems": rows,
            "counts": {"problems": len(evaluated), "samples": sum(samples),
                       "samples_per_problem": sorted(set(samples))}}


def _problem_row(problem: Problem, results: list[SampleResult]) -> dict[str, Any]:
    passed = sum(r.passed for r in results)
    row: dict[str, Any] = {"problem_id": problem.problem_id, "difficulty": problem.difficulty,
                           "samples": len(results), "passed": passed,
                           "pass@1": metrics.pass_at_k(len(results), passed, 1)}
    for name in ("beyond_t", "beyond_m", "beyond_i", "beyond_at_k", "dps_norm"):
        values = [r.values[name] for r in results if name in r.values]
        row[name] = statistics.fmean(values) if values else None
    row["references"] = {key: sorted(problem.reference_values(key)) for key in OBJECTIVE_KEYS.values()}
    row["samples_detail"] = [asdict(r) for r in results]
    return row
