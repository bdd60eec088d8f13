"""Named rewards and their weights, in one place.

| preset | components and weights |
| --- | --- |
| ``afterburner(objective)`` | 0.2 afterburner_format + 0.5 transition + 0.3 efficiency |
| ``cisq_grpo()`` | 0.2 code_block_format + 0.3 pass_rate + 0.5 quality |
| ``quality_efficiency(objective)`` | 0.1 afterburner_format + 0.35 transition |
| | + 0.3 efficiency + 0.25 quality |

``quality_efficiency`` is the product's own recipe: correctness (the
transition) carries the most weight, because efficiency and quality of wrong
code are worth nothing; efficiency is next, as the objective being optimised;
quality keeps the optimised code maintainable (tricks that win milliseconds
with unreadable or unsafe code lose here); format is small because a model
learns it within a few steps and it then no longer separates completions.
Quality is paid only to code that passes at least one of its row's tests
(``quality_gate="passed_any"``; ``None`` for the CISQ paper's unconditional
formula), or else code that does nothing would earn it for having no findings.
Efficiency rewards measure with ``repeats=3`` so each comparison has a
measured spread behind its noise floor.

Every preset takes ``format=``, the name of the rows' test format
(:data:`rewardkit.sandbox.formats.FORMATS`; by default found from each row's
columns), and ``shaping={name: {parameters}}`` to add :mod:`.shaping`
components, each with the weight in :data:`SHAPING_WEIGHTS` unless its
parameters give a ``"weight"``::

    cisq_grpo(shaping={"soft_overlong_punishment": {"max_completion_len": 512,
                                                    "soft_punish_cache": 128},
                       "repetition_penalty": {"weight": 0.5}})
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ..sandbox import Limits, Sandbox
from . import components as c
from .components import Component
from .composite import Reward
from .engine import ConfigError, Engine
from .shaping import FACTORIES

WEIGHTS = {
    "afterburner": {"afterburner_format": 0.2, "transition": 0.5, "efficiency": 0.3},
    "cisq_grpo": {"code_block_format": 0.2, "pass_rate": 0.3, "quality": 0.5},  # nosec B105 - "pass_rate" is no password
    "quality_efficiency": {"afterburner_format": 0.1, "transition": 0.35, "efficiency": 0.3,
                           "quality": 0.25},
}
# A shaping component's weight when its parameters give none: 1, as TRL weighs a reward
# function given no weight and as DAPO adds its length penalty to the rule-based reward.
SHAPING_WEIGHTS = dict.fromkeys(FACTORIES, 1.0)
Shaping = Mapping[str, Mapping[str, Any]]
EFFICIENCY_REPEATS = 3
# sandbox runs per measurement of each preset (an engine passed in brings its own)
REPEATS = {"afterburner": EFFICIENCY_REPEATS, "cisq_grpo": 1, "quality_efficiency": EFFICIENCY_REPEATS,
           "transition": EFFICIENCY_REPEATS, "efficiency": EFFICIENCY_REPEATS}


def shaping_components(shaping: Shaping | None) -> list[tuple[Component, float]]:
    """``(component, weight)`` pairs for ``{name: {parameters, optional "weight"}}``."""
    pairs = []
    for name, given in (shaping or {}).items():
        if name not in FACTORIES:
            raise ConfigError(f"unknown shaping component {name!r}; use one of {', '.join(FACTORIES)}")
        parameters = dict(given)
        try:
            weight = float(parameters.pop("weight", SHAPING_WEIGHTS[name]))
            pairs.append((FACTORIES[name](**parameters), weight))
        except (TypeError, ValueError) as exc:  # a missing, unknown or ill-typed parameter
            raise ConfigError(f"shaping {name!r}: {exc}") from None
    return pairs


def own_engine(limits: Limits | None, repeats: int, objective: str = "time") -> Engine:
    """An engine of a reward's own for ``objective``: the ``instructions`` objective counts with
    the instruction meter, one run per job (a count does not vary from run to run); the others
    time ``repeats`` runs."""
    if objective == "instructions":
        return Engine(limits=limits, meter="instructions")
    return Engine(limits=limits, repeats=repeats)


def _engine(engine: Engine | None, sandbox: Sandbox | None, limits: Limits | None,
            repeats: int, objective: str = "time") -> Engine:
    """The engine given, else one on the sandbox given, else one of its own (:func:`own_engine`)."""
    if engine is not None:
        return engine
    if sandbox is not None:
        return Engine(sandbox=sandbox, limits=limits, repeats=repeats)
    return own_engine(limits, repeats, objective)


def afterburner(objective: str = "time", *, engine: Engine | None = None,
                sandbox: Sandbox | None = None, limits: Limits | None = None,
                strict: bool = False, shaping: Shaping | None = None,
                format: str | None = None) -> Reward:
    """Afterburner GRPO reward: format, fail/pass transition against the baseline, efficiency gain.

    ``objective="row"`` scores each row on its own ``objective`` column (time,
    memory or integral), for a dataset that mixes the seed's instructions.
    """
    w = WEIGHTS["afterburner"]
    return Reward([(c.afterburner_format(), w["afterburner_format"]),
                   (c.transition(), w["transition"]),
                   (c.efficiency(objective), w["efficiency"])],
                  _engine(engine, sandbox, limits, REPEATS["afterburner"], objective), strict,
                  "afterburner", format).with_components(*shaping_components(shaping))


def cisq_grpo(*, engine: Engine | None = None, sandbox: Sandbox | None = None,
              limits: Limits | None = None, strict: bool = False,
              format_penalty: float = 0.0, quality_aggregate: str = "mean",
              quality_gate: str | None = c.PASSED_ANY, shaping: Shaping | None = None,
              format: str | None = None) -> Reward:
    """CISQ code-quality GRPO reward: one code block, test pass rate, static quality.

    Quality is the paper's "average score", the mean of the four per-characteristic
    ``1/(1+W_c)``; ``quality_aggregate="total"`` scores ``1/(1+W)`` over all findings instead.

    ``quality_gate="passed_any"`` (the default) pays quality only to a completion that passes
    at least one test.  The paper's formula (``quality_gate=None``) pays it to any code, and
    code that does nothing has nothing to find fault with: a lone docstring scores
    0.2 + 0.5·1.0 = 0.70 and outscores a correct answer with one finding in each of three
    characteristics (0.2 + 0.3 + 0.5·0.31 = 0.655), so a policy learns to stop solving.
    Gated, the docstring scores 0.2; quality still ranks the answers that work, and partial
    credit (one test passed) keeps it from vanishing on hard rows.  The gate reads the run
    that pass rate makes: no extra sandbox run.
    """
    w = WEIGHTS["cisq_grpo"]
    return Reward([(c.code_block_format(format_penalty), w["code_block_format"]),
                   (c.pass_rate(), w["pass_rate"]),
                   (c.quality(aggregate=quality_aggregate, gate=quality_gate), w["quality"])],
                  _engine(engine, sandbox, limits, REPEATS["cisq_grpo"]), strict,
                  "cisq_grpo", format).with_components(*shaping_components(shaping))


def quality_efficiency(objective: str = "time", *, engine: Engine | None = None,
                       sandbox: Sandbox | None = None, limits: Limits | None = None,
                       strict: bool = False, quality_aggregate: str = "total",
                       quality_gate: str | None = c.PASSED_ANY,
                       shaping: Shaping | None = None, format: str | None = None) -> Reward:
    """rewardkit's recipe: Afterburner's signals plus CISQ quality (weights above).

    ``objective="row"`` scores each row on its own ``objective`` column, as in :func:`afterburner`.
    Quality is ``1/(1+W)`` over all findings, so one serious finding weighs the same in
    whichever characteristic it falls; ``quality_aggregate="mean"`` takes the CISQ paper's average.
    ``quality_gate="passed_any"`` (the default) pays quality only to code that passes a test,
    as in :func:`cisq_grpo`: code that does nothing would otherwise collect the full 0.25 for
    having nothing to find fault with and, where the baseline passes, score 0.1 - 0.35 + 0.25 =
    0.0, above an honest attempt that passes two tests of three with quality 0.3 (-0.175);
    gated, it scores -0.25.  ``quality_gate=None`` pays quality to any code.
    """
    w = WEIGHTS["quality_efficiency"]
    return Reward([(c.afterburner_format(), w["afterburner_format"]),
                   (c.transition(), w["transition"]),
                   (c.efficiency(objective), w["efficiency"]),
                   (c.quality(aggregate=quality_aggregate, gate=quality_gate), w["quality"])],
                  _engine(engine, sandbox, limits, REPEATS["quality_efficiency"], objective), strict,
                  "quality_efficiency", format).with_components(*shaping_components(shaping))


class Single:
    """A reward of one component, selectable by name wherever a preset is: ``Single(factory)(...)``
    takes the component factory's options and a preset's (``engine``, ``sandbox``, ``limits``,
    ``strict``, ``format``); it measures with :data:`REPEATS` runs (3 for a baseline's comparison)."""

    def __init__(self, factory: Callable[..., Component]) -> None:
        self.factory, self.__name__ = factory, factory.__name__
        self.__doc__ = f"A reward of the single component {factory.__name__!r} ({factory.__doc__})"
        shared = inspect.signature(_single_options).parameters.values()
        own = inspect.signature(factory).parameters.values()
        self.__signature__ = inspect.Signature([*own, *shared], return_annotation=Reward)

    def __call__(self, *args: Any, engine: Engine | None = None, sandbox: Sandbox | None = None,
                 limits: Limits | None = None, strict: bool = False, format: str | None = None,
                 **options: Any) -> Reward:
        component = self.factory(*args, **options)
        repeats = REPEATS.get(self.__name__, 1)
        objective = str(options.get("objective", args[0] if args and isinstance(args[0], str) else "time"))
        return Reward([(component, 1.0)], _engine(engine, sandbox, limits, repeats, objective), strict,
                      component.name, format)


def _single_options(*, engine: Engine | None = None, sandbox: Sandbox | None = None,
                    limits: Limits | None = None, strict: bool = False, format: str | None = None) -> None:
    """The options every single-component reward takes, as a preset does (for its signature)."""


SINGLES = {factory.__name__: Single(factory) for factory in (
    c.binary, c.pass_rate, c.rlef, c.code_block_format, c.afterburner_format, c.transition,
    c.efficiency, c.percentile, c.quality, *FACTORIES.values())}
PRESETS: dict[str, Callable[..., Reward]] = {
    "afterburner": afterburner, "cisq_grpo": cisq_grpo, "quality_efficiency": quality_efficiency,
    **SINGLES,
}
