"""Reward components: a formula fed from a :class:`View`, with a name and what it needs.

Every component returns ``(value, info)``.  A bad completion gets the
component's documented lowest value (``Component.lowest``) and a reason in ``info``: code
that defeats the analysis (does not parse, hides itself, makes a tool overrun)
scores quality 0.  An infrastructure fault (``sandbox_error``, an analysis tool
error) gives ``None``, never a made-up score, and then the whole sample is
left out (:mod:`.composite`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ParamSpec

from ..sandbox import Status
from ..sandbox.runtime.languages import resolve_language
from . import formulas
from .engine import METRIC_OF, OBJECTIVES, ConfigError, Metrics, Paired, View

Scored = tuple[float | None, dict[str, Any]]
P = ParamSpec("P")

# The noise floor's bounds (see noise_floor_for for the measurements behind them). The
# lower bound is the meter's own noise between processes, which a few back-to-back repeats
# understate; it is also the floor when nothing was repeated (repeats=1).
DEFAULT_NOISE_FLOOR = {"time": 0.10, "memory": 0.01, "integral": 0.15, "instructions": 0.0}
MEMORY_NOISE_KB = 512.0  # peak memory varies by a few hundred KiB whatever the program holds
NOISE_FLOOR_CAP = 0.25  # a gain of 25% (1.33x) always counts, however noisy the measurement
# The meters' absolute resolution per language: time (s) and integral (KiB·s) differences
# below these count as none, whatever their share of the baseline.  A program of a few
# milliseconds reports a time the worker has taken its language's start-up cost off (a cost
# each worker measures once), and that figure moves by as much as the program costs.  Each
# value is the largest difference between two measurements of one trivial program (echo a
# word, 3 cases, repeats=3, comment-only copies each compiled afresh; 4 fresh sandboxes of 2
# workers x 10 copies, 780 pairs per language and session), over two sessions, rounded up.
# Measured 2026-11-28 on the development machine (2 shared cores, CPU speed swinging ~2x) with
#     python benchmarks/perf/bench_time_resolution.py 4 10
# The largest differences, first / second session, time in ms and integral in KiB·s:
#   python 1.4 / 4.8 and 6.2 / 4.0      c 0.5 / 0.9 and 0.8 / 1.5      cpp 2.1 / 1.6 and 3.1 / 1.7
#   java 29.7 / 15.7 and 3101 / 1107    javascript 19.6 / 16.6 and 441 / 512
#   go 2.0 / 1.0 and 8.6 / 4.2          rust 0.9 / 0.7 and 2.0 / 0.9
RESOLUTION: dict[str, dict[str, float]] = {
    "python": {"time": 0.005, "integral": 8.0},
    "c": {"time": 0.001, "integral": 2.0},
    "cpp": {"time": 0.003, "integral": 4.0},
    "java": {"time": 0.030, "integral": 4000.0},
    "javascript": {"time": 0.020, "integral": 600.0},
    "go": {"time": 0.0025, "integral": 10.0},
    "rust": {"time": 0.001, "integral": 3.0},
}
# How many standard deviations of a paired gain (the median over rounds of a ratio to the
# neighbouring baseline runs) the paired noise floor spans: 3 keeps identical code at 0 in
# well over 95% of samples although each group's deviation is itself estimated from a few runs.
PAIRED_SIGMAS = 3.0
# every objective an efficiency reward takes: the sandbox's three meters and the instruction count
OBJECTIVE_CHOICES = (*OBJECTIVES, "instructions")
NO_COUNT = ("the 'instructions' objective needs instruction counts: give the reward no engine (the "
            "presets then count), or an engine or sandbox with meter='instructions'")


@dataclass(frozen=True)
class Component:
    """One named reward: ``compute(view) -> (value, info)``; ``needs`` ⊆ {run, outcome, baseline,
    analysis} (see :meth:`.Engine.views`).

    A component made by a factory of this package pickles as that call (``recipe``: the
    factory and its arguments), so it crosses process boundaries whatever ``compute`` closes
    over; one made by hand pickles when its ``compute`` does.
    """

    name: str
    compute: Callable[[View], Scored]
    needs: frozenset[str] = frozenset()
    lowest: float = 0.0
    recipe: tuple[Callable[..., Component], tuple[Any, ...], dict[str, Any]] | None = \
        field(default=None, compare=False, repr=False)

    def __reduce__(self) -> tuple[Any, ...]:
        if self.recipe is not None:
            factory, args, kwargs = self.recipe
            return _remade, (factory, args, kwargs)
        return Component, (self.name, self.compute, self.needs, self.lowest)


def _remade(factory: Callable[..., Component], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Component:
    return factory(*args, **kwargs)


def recipe(factory: Callable[P, Component]) -> Callable[P, Component]:
    """Make ``factory``'s components pickle as the call that made them (see :class:`Component`)."""
    @functools.wraps(factory)
    def make(*args: P.args, **kwargs: P.kwargs) -> Component:
        return replace(factory(*args, **kwargs), recipe=(make, tuple(args), dict(kwargs)))

    return make


def _fault(view: View) -> bool:
    return view.result is not None and view.result.status == Status.SANDBOX_ERROR


def _status(view: View) -> dict[str, Any]:
    if view.result is None:
        return {"status": None, "reason": view.problem}
    return {"status": view.result.status.value, "feedback": view.result.feedback[:500]}


# -- format ------------------------------------------------------------------------------
@recipe
def afterburner_format() -> Component:
    """+1 for one ``<thinking>`` then one ``<solution>`` block and nothing else, else -1."""
    def compute(view: View) -> Scored:
        if view.text.value is None:
            return -1.0, {"reason": view.text.problem}
        return formulas.afterburner_format(view.text.value), {}

    return Component("afterburner_format", compute, lowest=-1.0)


@recipe
def code_block_format(penalty: float = 0.0) -> Component:
    """1 for exactly one complete fenced block of the language, 0 for none, ``penalty`` otherwise."""
    def compute(view: View) -> Scored:
        if view.text.value is None:
            return min(0.0, penalty), {"reason": view.text.problem}
        return formulas.code_block_format(view.text.value, view.language, penalty), {}

    return Component("code_block_format", compute, lowest=min(0.0, penalty))


# -- correctness ---------------------------------------------------------------------------
def _with_run(name: str, lowest: float, value: Callable[[View], float]) -> Component:
    def compute(view: View) -> Scored:
        if _fault(view):
            return None, _status(view)
        if view.result is None:
            return lowest, _status(view)
        return value(view), _status(view)

    return Component(name, compute, frozenset({"run"}), lowest)


@recipe
def binary() -> Component:
    """1 when every test passes, else 0."""
    return _with_run("binary", 0.0, lambda v: 1.0 if v.result and v.result.passed else 0.0)


@recipe
def pass_rate() -> Component:
    """Fraction of the tests passed."""
    return _with_run("pass_rate", 0.0, lambda v: v.result.pass_rate if v.result else 0.0)


@recipe
def rlef() -> Component:
    """RLEF: +1 pass, -1 fail, -1.2 when there is no valid program (no code, does not compile)."""
    def compute(view: View) -> Scored:
        if _fault(view):
            return None, _status(view)
        result = view.result
        valid = result is not None and result.status != Status.COMPILE_ERROR
        return formulas.rlef(bool(result and result.passed), valid), _status(view)

    return Component("rlef", compute, frozenset({"run"}), formulas.RLEF_INVALID - 1.0)


@recipe
def transition() -> Component:
    """Afterburner fail/pass transition against the baseline: +1, +0.5, -0.5 or -1."""
    def compute(view: View) -> Scored:
        if view.tests_problem is not None:  # the row's fault: nothing to measure against
            return -1.0, _status(view)
        if _fault(view) or view.baseline is None:
            return None, {**_status(view), "baseline": "not measured (sandbox fault)"}
        passed = bool(view.result and view.result.passed)
        info = {**_status(view), "baseline_passed": view.baseline.passed}
        return formulas.transition(view.baseline.passed, passed), info

    return Component("transition", compute, frozenset({"run", "baseline"}), -1.0)


# -- efficiency ------------------------------------------------------------------------------
def check_objective(objective: str) -> str:
    """``objective`` itself, or a ConfigError naming the ones there are."""
    if objective not in OBJECTIVE_CHOICES:
        raise ConfigError(f"unknown objective {objective!r}; use one of "
                          f"{', '.join(OBJECTIVE_CHOICES)}")
    return objective


def _measure(metrics: Metrics, objective: str) -> float | None:
    if objective == "instructions":
        return metrics.instructions
    return metrics.value(objective)


def noise_floor_for(objective: str, baseline: Metrics, candidate: Metrics) -> float:
    """The relative gain below which ``objective`` counts as unchanged, for a candidate compared
    with a baseline measured apart from it (a ``baseline_metrics`` column; rows with a
    ``baseline_code`` are measured in pairs and use :func:`paired_floor`).

    Twice the combined relative spread of the two measurements, ``2·sqrt(s_in² + s_out²)``
    (each spread is the relative MAD of ``repeats`` runs), kept within bounds:

    * at least the meter's noise between processes, :data:`DEFAULT_NOISE_FLOOR`, because
      back-to-back repeats in one worker agree better than runs in different processes:
      time 10%, integral 15%, memory 1% or :data:`MEMORY_NOISE_KB` of the baseline's
      memory, whichever is larger, and 0 for an instruction count (exact).  Measured
      (8 fresh processes x 9 runs per program, each core busy or not): CPU time's
      between-process CV is 1-4% for a 3 ms and an 80 ms program and up to 7% for one
      that allocates 40 MB (2-4%); 2·sqrt(2)·3.5% ≈ 10% covers the 95th
      percentile of the gain between medians of 3 runs of identical code (3.8-5.5% at
      80 ms).  Memory differs by up to a few hundred KiB whatever the footprint: at 40 MB
      p95 0.5%, max 0.9% (360 KiB); at 800 KiB p95 3-4%, max 35% (273 KiB).
      The integral varies more (CV of process medians 3-12%, 32% for the allocating program).
    * at most :data:`NOISE_FLOOR_CAP`, 25%: three repeats of a 2 ms program can spread 20%,
      which uncapped gave floors over 0.5 and hid a 2x improvement; identical code of 3 ms
      still differs by less than 25% in 95% of cases (median of 3: p95 9-17.5%).  The
      memory's absolute noise is not capped: a program holding under 2 MiB reads a few
      pages more or less from run to run (a 3 ms program: 33% p95 between processes),
      which is noise whatever its share.

    ``benchmarks/perf/bench_noise_floor.py`` measures identical code in separate processes
    and counts how often the reward scores it other than 0, with and without the floor.

    ``efficiency(noise_floor=0.0)`` scores every difference, as the Afterburner paper does.
    """
    key = METRIC_OF.get(objective)
    spreads = [m.spread.get(key, 0.0) for m in (baseline, candidate) if key and m.spread]
    measured = 2.0 * (spreads[0] ** 2 + spreads[1] ** 2) ** 0.5 if len(spreads) == 2 else 0.0
    floor = min(max(measured, DEFAULT_NOISE_FLOOR[objective]), NOISE_FLOOR_CAP)
    if objective == "memory" and baseline.peak_memory_kb > 0:  # page-sized noise: no cap
        floor = max(floor, MEMORY_NOISE_KB / baseline.peak_memory_kb)
    return floor


def paired_floor(objective: str, paired: Paired) -> float:
    """The relative gain below which a paired measurement of ``objective`` counts as unchanged.

    ``PAIRED_SIGMAS·σ·sqrt(π/2)/sqrt(n)``: :data:`PAIRED_SIGMAS` standard deviations of the
    median of ``n`` rounds' ratios, each ratio's deviation ``σ`` being the spread measured in
    its group (:func:`rewardkit.sandbox.measurement.pair_noise`: differences between one
    candidate's rounds and between successive baseline runs, which are noise alone).  The
    floor follows the host: a quiet one gives a low floor, a drifting one a higher one.
    """
    rounds = paired.rounds(objective)
    if rounds == 0:
        return 0.0
    sigma = paired.noise.get(METRIC_OF[objective], 0.0)
    return PAIRED_SIGMAS * sigma * (math.pi / 2) ** 0.5 / rounds ** 0.5


def resolution_for(objective: str, language: str) -> float:
    """The smallest difference in ``objective`` that the meter resolves for ``language``, in the
    objective's unit (:data:`RESOLUTION`); a difference below it is no gain and no loss.

    Time and the integral have one per language.  Memory's absolute noise,
    :data:`MEMORY_NOISE_KB`, the same for every language, is in :func:`noise_floor_for` as
    a share of the baseline; an instruction count is exact.  A language the table lacks
    gets the coarsest resolution there is.
    """
    if objective not in ("time", "integral"):
        return 0.0
    try:
        return RESOLUTION[resolve_language(language).name][objective]
    except (KeyError, ValueError):
        return max(row[objective] for row in RESOLUTION.values())


# efficiency(objective=ROW): each row's ``objective`` column names its objective
ROW = "row"


@recipe
def efficiency(objective: str = "time", noise_floor: float | None = None,
               upper: float | None = None) -> Component:
    """Afterburner's tanh gain over the baseline on ``objective``; 0 unless both pass.

    Rows that give a ``baseline_code`` are measured in pairs: the rows of a batch sharing it
    run with it in interleaved rounds on one worker (:meth:`.Engine.views`), and the gain is
    the median over rounds of the candidate's ratio to the neighbouring baseline runs, so a
    host whose speed drifts moves both sides alike.  Rows that give ``baseline_metrics``
    compare with those figures, measured at another time and place: less robust on a
    drifting host.  A gain counts when it clears both the relative noise floor
    (:func:`paired_floor` from the spread of the pairs, or :func:`noise_floor_for`
    unpaired) and the absolute resolution (:func:`resolution_for` per language; memory's
    :data:`MEMORY_NOISE_KB`): comment-only copies of a sub-millisecond program differ by as
    much as they cost.  ``noise_floor`` replaces both (``noise_floor=0.0`` scores every
    difference, as the Afterburner paper does).

    ``objective="row"`` (:data:`ROW`) scores each row on its own ``objective``
    column, as the Afterburner seed's GRPO trains on a mix of its three
    instructions (DS_GRPO, equation 8: "the corresponding performance metric"
    of each prompt's instruction).  The component is then ``efficiency_row``;
    each objective keeps its default ``upper``, which is in its own unit.
    """
    if objective != ROW:
        check_objective(objective)

        def compute(view: View) -> Scored:
            return _efficiency(view, objective, noise_floor, upper)
    elif upper is not None:
        raise ConfigError("upper is in one objective's unit (s, KiB or KiB·s): with objective='row' "
                          "leave it out, and each row's objective keeps its own bound")
    else:
        def compute(view: View) -> Scored:
            chosen = row_objective(view)  # a bad row fails here, whatever its completion
            value, info = _efficiency(view, chosen, noise_floor, None)
            return value, {**info, "objective": chosen}

    # an instruction count does not follow the host's speed: no rounds with the baseline
    needs = {"run", "baseline"} if objective == "instructions" else {"run", "baseline", "paired"}
    return Component(f"efficiency_{objective}", compute, frozenset(needs), 0.0)


def row_objective(view: View) -> str:
    """The row's ``objective`` column: time, memory or integral, which one timed run measures together.

    ``instructions`` is refused: a count needs the instruction meter, a
    separate run about 50-100x slower, so it trains on its own.
    """
    value = view.columns.get("objective")
    if value is None:
        raise ConfigError(f"efficiency(objective={ROW!r}) reads each row's 'objective' column "
                          f"({', '.join(OBJECTIVES)}) and this row has none: add the column, or give "
                          "the reward one objective")
    if value == "instructions":
        raise ConfigError("a row's objective 'instructions' needs the instruction meter, which does not "
                          "time the run: a mix takes time, memory and integral; train instruction counts "
                          "on their own with objective='instructions'")
    if value not in OBJECTIVE_CHOICES:
        raise ConfigError(f"unknown objective {value!r} in the 'objective' column; a row takes one of "
                          f"{', '.join(OBJECTIVES)}")
    return str(value)


def _efficiency(view: View, objective: str, noise_floor: float | None, upper: float | None) -> Scored:
    if view.tests_problem is not None:  # the row's fault: nothing to measure against
        return 0.0, _status(view)
    if _fault(view) or view.baseline is None:
        return None, {**_status(view), "baseline": "not measured (sandbox fault)"}
    if view.result is None or not view.result.passed:
        return 0.0, {**_status(view), "why_zero": "the candidate does not pass"}
    if not view.baseline.passed:
        return 0.0, {**_status(view), "why_zero": "the baseline does not pass: no reference"}
    if view.paired is not None and objective in METRIC_OF:
        return _paired_efficiency(view, view.baseline, view.paired, objective, noise_floor, upper)
    candidate = Metrics.from_result(view.result)
    e_in, e_out = _measure(view.baseline, objective), _measure(candidate, objective)
    if objective == "instructions" and None in (e_in, e_out):
        raise ConfigError(NO_COUNT)
    if e_in is None or e_out is None:
        return None, {**_status(view), "error": f"no {objective} measurement"}
    if noise_floor is None:
        floor = noise_floor_for(objective, view.baseline, candidate)
        resolution = resolution_for(objective, view.language)
    else:  # a floor given is the only one: noise_floor=0.0 scores every difference
        floor, resolution = noise_floor, 0.0
    value = formulas.efficiency_gain(e_in, e_out, objective, upper, noise_floor=floor, resolution=resolution)
    return value, {**_status(view), "e_in": e_in, "e_out": e_out, "noise_floor": floor,
                   "resolution": resolution}


def _paired_efficiency(view: View, baseline: Metrics, paired: Paired, objective: str,
                       noise_floor: float | None, upper: float | None) -> Scored:
    """The gain of a candidate measured in rounds with its baseline: the baseline's value
    against that value times the candidate's median ratio to it, so the clip and the
    resolution apply in the objective's unit as they do unpaired."""
    ratio = paired.ratio(objective)
    if ratio is None:
        return None, {**_status(view), "error": f"no paired {objective} measurement"}
    e_in = baseline.value(objective)
    e_out = e_in * ratio
    if noise_floor is None:
        floor = paired_floor(objective, paired)
        resolution = MEMORY_NOISE_KB if objective == "memory" else resolution_for(objective, view.language)
    else:  # a floor given is the only one: noise_floor=0.0 scores every difference
        floor, resolution = noise_floor, 0.0
    value = formulas.efficiency_gain(e_in, e_out, objective, upper, noise_floor=floor, resolution=resolution)
    return value, {**_status(view), "e_in": e_in, "e_out": e_out, "ratio": ratio,
                   "rounds": paired.rounds(objective), "noise_floor": floor, "resolution": resolution}


@recipe
def percentile(objective: str = "time") -> Component:
    """Venus Beyond against the ``reference_metrics`` column (passing references' metrics)."""
    check_objective(objective)
    key = METRIC_OF.get(objective, objective)  # "instructions" is its own key

    def compute(view: View) -> Scored:
        references = view.columns.get("reference_metrics")
        if not references:
            raise ConfigError("percentile rewards need a 'reference_metrics' column: a list of "
                              f"the passing reference solutions' metrics (dicts with {key!r})")
        if _fault(view):
            return None, _status(view)
        if view.result is None or not view.result.passed:
            return 0.0, _status(view)
        values = [float(r[key]) if isinstance(r, dict) else float(r) for r in references]
        measured = _measure(Metrics.from_result(view.result), objective)
        if measured is None and objective == "instructions":
            raise ConfigError(NO_COUNT)
        if measured is None:
            return None, {**_status(view), "error": f"no {objective} measurement"}
        return formulas.percentile_rank(measured, values), _status(view)

    return Component(f"percentile_{objective}", compute, frozenset({"run"}), 0.0)


# -- quality ------------------------------------------------------------------------------------
CHARACTERISTICS = ("maintainability", "security", "performance", "reliability")
QUALITY_AGGREGATES = ("total", "mean")
# quality(gate=PASSED_ANY): no quality reward for a completion that passes none of its row's tests
PASSED_ANY = "passed_any"
QUALITY_GATES = (PASSED_ANY, None)


@recipe
def quality(characteristic: str | None = None, aggregate: str = "total",
            gate: str | None = PASSED_ANY) -> Component:
    """Static quality from the analyzers, in [0, 1].

    ``aggregate="total"``: ``1/(1+W)`` over all findings.  ``aggregate="mean"``: the mean of
    the four per-characteristic scores ``1/(1+W_c)``, the CISQ paper's "average score" of its
    analyzer (its validation figures, 0.77-0.89, are on this scale; ``cisq_grpo`` uses it).
    ``characteristic`` scores one characteristic's findings alone, ``1/(1+W_c)``.

    ``gate="passed_any"`` (:data:`PASSED_ANY`, the default): where the row has tests, a
    completion that passes none of them scores 0, so code that does nothing (a docstring, a
    ``pass``) earns no reward for having no findings.  The completion runs once, and that run
    is shared with the components that read it (pass rate, efficiency).  A row without tests
    (code scored for quality alone) is scored on its analysis.  ``gate=None`` is the CISQ
    paper's formula, which scores quality whatever the code does.
    """
    if characteristic is not None and characteristic not in CHARACTERISTICS:
        raise ConfigError(f"unknown characteristic {characteristic!r}; use one of {CHARACTERISTICS}")
    if aggregate not in QUALITY_AGGREGATES:
        raise ConfigError(f"unknown quality aggregate {aggregate!r}; use one of {QUALITY_AGGREGATES}")
    if characteristic is not None and aggregate != "total":
        raise ConfigError("give a characteristic or an aggregate, not both: a characteristic's "
                          "score is its own 1/(1+W_c)")
    if gate not in QUALITY_GATES:
        raise ConfigError(f"unknown quality gate {gate!r}; use {PASSED_ANY!r} (no quality for code "
                          "that passes no test) or None (the paper's, quality whatever the code does)")

    def compute(view: View) -> Scored:
        _python_only(view.language)
        if gate == PASSED_ANY and view.suite is not None:  # the row has tests
            if _fault(view):
                return None, _status(view)
            if view.result is None or view.result.tests_passed == 0:
                return 0.0, {**_status(view), "why_zero": "the completion passes no test"}
        if view.report is None:
            return 0.0, {"reason": view.problem}
        report = view.report
        if report.errors:  # a tool that did not run leaves the score unknown: a fault, not a value
            return None, {"tool_errors": [str(e) for e in report.errors]}
        if characteristic is not None:
            score = report.by_characteristic[characteristic]
        elif aggregate == "mean":
            score = formulas.quality_mean(report.by_characteristic)
        else:
            score = report.score
        return float(score), {"weighted_count": report.weighted_count, "findings": len(report.findings),
                              "by_characteristic": dict(report.by_characteristic)}

    name = "quality" if characteristic is None else f"quality_{characteristic}"
    needs = {"analysis", "outcome"} if gate == PASSED_ANY else {"analysis"}
    return Component(name, compute, frozenset(needs), 0.0)


def _python_only(language: str) -> None:
    """Refuse a row whose language the analyzers cannot judge: their tools read Python only, and
    judging another language's code as Python scores what it is not."""
    try:
        python = resolve_language(language).name == "python"
    except ValueError:
        python = False
    if not python:
        raise ConfigError(f"the quality component judges Python only; a row's language is "
                          f"{language!r} (drop quality from the reward for that data, or score "
                          f"Python rows alone)")
