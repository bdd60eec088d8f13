"""Reward components: a formula fed from a :class:`View`, with a name and what it needs.

Every component returns ``(value, info)``.  A bad completion gets the
component's documented lowest value (``Component.lowest``) and a reason in ``info``: code
that defeats the analysis (does not parse, hides itself, makes a tool overrun)
scores quality 0.  An infrastructure fault (``sandbox_error``, an analysis tool
error) gives ``None``, never a made-up score, and then the whole sample is
left out (:mod:`.composite`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..sandbox import Status
from . import formulas
from .engine import METRIC_OF, OBJECTIVES, ConfigError, Metrics, View

Scored = tuple[float | None, dict[str, Any]]

# Measured timing noise between processes on these machines is 2-4% (SPEC §4.6);
# memory figures repeat far better. Used when no spread was measured (repeats=1).
DEFAULT_NOISE_FLOOR = {"time": 0.05, "memory": 0.01, "integral": 0.05, "instructions": 0.0}
# every objective an efficiency reward takes: the sandbox's three meters and the instruction count
OBJECTIVE_CHOICES = (*OBJECTIVES, "instructions")
NO_COUNT = ("the 'instructions' objective needs instruction counts: give the reward no engine (the "
            "presets then count), or an engine or sandbox with meter='instructions'")


@dataclass(frozen=True)
class Component:
    """One named reward: ``compute(view) -> (value, info)``; ``needs`` ⊆ {run, baseline, analysis}."""

    name: str
    compute: Callable[[View], Scored]
    needs: frozenset[str] = frozenset()
    lowest: float = 0.0


def _fault(view: View) -> bool:
    return view.result is not None and view.result.status == Status.SANDBOX_ERROR


def _status(view: View) -> dict[str, Any]:
    if view.result is None:
        return {"status": None, "reason": view.problem}
    return {"status": view.result.status.value, "feedback": view.result.feedback[:500]}


# -- format ------------------------------------------------------------------------------
def afterburner_format() -> Component:
    """+1 for one ``<thinking>`` then one ``<solution>`` block and nothing else, else -1."""
    def compute(view: View) -> Scored:
        if view.text.value is None:
            return -1.0, {"reason": view.text.problem}
        return formulas.afterburner_format(view.text.value), {}

    return Component("afterburner_format", compute, lowest=-1.0)


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


def binary() -> Component:
    """1 when every test passes, else 0."""
    return _with_run("binary", 0.0, lambda v: 1.0 if v.result and v.result.passed else 0.0)


def pass_rate() -> Component:
    """Fraction of the tests passed."""
    return _with_run("pass_rate", 0.0, lambda v: v.result.pass_rate if v.result else 0.0)


def rlef() -> Component:
    """RLEF: +1 pass, -1 fail, -0.2 when there is no valid program (no code, does not compile)."""
    def compute(view: View) -> Scored:
        if _fault(view):
            return None, _status(view)
        result = view.result
        valid = result is not None and result.status != Status.COMPILE_ERROR
        return formulas.rlef(bool(result and result.passed), valid), _status(view)

    return Component("rlef", compute, frozenset({"run"}), -1.0)


def transition() -> Component:
    """Afterburner fail/pass transition against the baseline: +1, +0.5, -0.5 or -1."""
    def compute(view: View) -> Scored:
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
    """Twice the combined relative spread of both measurements, when repeats measured one."""
    key = METRIC_OF.get(objective)
    spreads = [m.spread.get(key, 0.0) for m in (baseline, candidate) if key and m.spread]
    if len(spreads) == 2:
        return 2.0 * (spreads[0] ** 2 + spreads[1] ** 2) ** 0.5
    return DEFAULT_NOISE_FLOOR[objective]


def efficiency(objective: str = "time", noise_floor: float | None = None,
               upper: float | None = None) -> Component:
    """Afterburner's tanh gain over the baseline on ``objective``; 0 unless both pass."""
    check_objective(objective)

    def compute(view: View) -> Scored:
        if _fault(view) or view.baseline is None:
            return None, {**_status(view), "baseline": "not measured (sandbox fault)"}
        if view.result is None or not view.result.passed:
            return 0.0, {**_status(view), "why_zero": "the candidate does not pass"}
        if not view.baseline.passed:
            return 0.0, {**_status(view), "why_zero": "the baseline does not pass: no reference"}
        candidate = Metrics.from_result(view.result)
        e_in, e_out = _measure(view.baseline, objective), _measure(candidate, objective)
        if objective == "instructions" and None in (e_in, e_out):
            raise ConfigError(NO_COUNT)
        if e_in is None or e_out is None:
            return None, {**_status(view), "error": f"no {objective} measurement"}
        floor = noise_floor if noise_floor is not None else noise_floor_for(objective, view.baseline,
                                                                            candidate)
        value = formulas.efficiency_gain(e_in, e_out, objective, upper, noise_floor=floor)
        return value, {**_status(view), "e_in": e_in, "e_out": e_out, "noise_floor": floor}

    return Component(f"efficiency_{objective}", compute, frozenset({"run", "baseline"}), 0.0)


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


def quality(characteristic: str | None = None) -> Component:
    """``1/(1+W)`` from the analyzers, over all findings or one characteristic's."""
    if characteristic is not None and characteristic not in CHARACTERISTICS:
        raise ConfigError(f"unknown characteristic {characteristic!r}; use one of {CHARACTERISTICS}")

    def compute(view: View) -> Scored:
        if view.report is None:
            return 0.0, {"reason": view.problem}
        report = view.report
        if report.errors:  # a tool that did not run leaves the score unknown: a fault, not a value
            return None, {"tool_errors": [str(e) for e in report.errors]}
        score = report.score if characteristic is None else report.by_characteristic[characteristic]
        return float(score), {"weighted_count": report.weighted_count, "findings": len(report.findings)}

    name = "quality" if characteristic is None else f"quality_{characteristic}"
    return Component(name, compute, frozenset({"analysis"}), 0.0)
