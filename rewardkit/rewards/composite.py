"""Weighted sums of components, callable the way TRL's GRPOTrainer calls rewards.

``reward(completions=[...], tests=[...], **columns) -> list[float | None]``;
``reward.score(samples) -> list[RewardResult]`` for the full account;
``reward.functions()`` and ``reward.weights`` to hand each component to TRL
as its own function (logged as ``rewards/<name>/mean``) with
``reward_weights``; ``reward.as_async()`` for TRL's async reward path.

A sample is scored whole or left out: when any component has no value (an
infrastructure fault in its run or analysis, ``sandbox_error`` or a tool
error), every component of that sample is None, and so is its reward, so that
TRL drops the row rather than train on part of it.  A bad completion is no
fault: it gets each component's lowest value.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..sandbox.formats import FORMATS
from .components import Component
from .engine import ConfigError, Engine, View
from .shared_batch import SharedBatch, batch_key

log = logging.getLogger("rewardkit.rewards")

# Keyword arguments TRL passes that are not dataset columns.
TRAINER_KEYS = {"prompts", "completion_ids", "trainer_state", "log_extra", "log_metric",
                "environments"}
# Of those, the ones with one entry per completion that components read like a column
# (``completion_ids``: the token ids that length shaping counts, :mod:`.shaping`).
PER_COMPLETION_KEYS = {"completion_ids"}

RewardFunction = Callable[..., list[float | None]]


@dataclass
class RewardResult:
    """One sample's reward: the weighted ``value``, each component, and why."""

    value: float | None
    components: dict[str, float | None]
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {"value": self.value, "components": self.components, "info": self.info}


class Reward:
    """A weighted sum ``R = Σ β_k R_k`` of components sharing one :class:`Engine`.

    ``format`` names the test format of every row (:data:`rewardkit.sandbox.formats.FORMATS`);
    by default each row's is found from its columns.
    """

    def __init__(self, components: Sequence[tuple[Component, float]], engine: Engine | None = None,
                 strict: bool = False, name: str = "rewardkit", format: str | None = None) -> None:
        if not components:
            raise ConfigError("a reward needs at least one component")
        names = [component.name for component, _ in components]
        if len(set(names)) != len(names):
            raise ConfigError(f"component names must be unique, got {names}")
        if format is not None and format not in FORMATS:
            raise ConfigError(f"unknown test format {format!r}; known: {', '.join(FORMATS)}")
        self.components = list(components)
        self.format = format
        self.engine = engine or Engine()
        self.strict = strict
        self.__name__ = name

    def with_components(self, *components: tuple[Component, float]) -> Reward:
        """A new reward: these ``(component, weight)`` pairs after this one's, on the same engine.

        >>> from rewardkit.rewards import cisq_grpo, shaping
        >>> reward = cisq_grpo().with_components((shaping.soft_overlong_punishment(512, 128), 1.0))
        >>> [c.name for c, _ in reward.components], reward.weights
        (['code_block_format', 'pass_rate', 'quality', 'soft_overlong_punishment'], [0.2, 0.3, 0.5, 1.0])
        """
        return Reward([*self.components, *components], self.engine, self.strict, self.__name__,
                      self.format)

    @property
    def weights(self) -> list[float]:
        """The components' weights in order, for TRL's ``reward_weights``."""
        return [weight for _, weight in self.components]

    # -- TRL-style call ---------------------------------------------------------------
    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float | None]:
        """The weighted reward of each completion, as TRL calls a reward function."""
        results = self.evaluate(completions, kwargs)
        log_to_trainer(kwargs, results, [c.name for c, _ in self.components])
        return [r.value for r in results]

    def score(self, samples: Sequence[dict[str, Any]]) -> list[RewardResult]:
        """Score records ``{"completion": ..., "tests": ..., <other columns>}``."""
        if not samples:
            return []
        return self.evaluate(*split_samples(samples))

    def evaluate(self, completions: list[Any], kwargs: dict[str, Any]) -> list[RewardResult]:
        """Results for ``completions`` with dataset ``kwargs`` columns."""
        columns = _columns(completions, kwargs)
        needs = set().union(*(c.needs for c, _ in self.components))
        views = self.engine.views(list(completions), columns, needs, self.format)
        return [self._result(view) for view in views]

    def _result(self, view: View) -> RewardResult:
        if self.strict and view.problem:
            raise ValueError(f"bad completion: {view.problem}")
        values: dict[str, float | None] = {}
        info: dict[str, Any] = {"reason": view.problem} if view.problem else {}
        for component, _ in self.components:
            values[component.name], info[component.name] = self._value(component, view)
        if any(v is None for v in values.values()):
            log.warning("reward left out (None) for one sample: %s",
                        {k: info[k] for k, v in values.items() if v is None})
            return RewardResult(None, dict.fromkeys(values), info)  # scored whole or left out
        weights = {c.name: w for c, w in self.components}
        return RewardResult(sum(weights[k] * v for k, v in values.items() if v is not None), values, info)

    def _value(self, component: Component, view: View) -> tuple[float | None, Any]:
        """One component's value and detail; a component that fails has none (strict: raises)."""
        try:
            value, detail = component.compute(view)
        except ConfigError:
            raise
        except Exception as exc:  # a bug or a fault must not take the trainer down
            if self.strict:
                raise
            log.warning("reward component %s failed: %r", component.name, exc)
            value, detail = None, {"error": repr(exc)}
        if value is None and self.strict:
            raise RuntimeError(f"{component.name} has no value: {detail}")
        return value, detail

    # -- handing components to a trainer ------------------------------------------------------
    def functions(self, weighted: bool = False) -> list[RewardFunction]:
        """One function per component, named after it, for ``reward_funcs``.

        Pass ``reward_weights=reward.weights`` alongside.  A trainer that sums its reward
        functions unweighted (TRL's async GRPO, whose config has no ``reward_weights``) takes
        ``weighted=True``: each function then gives its component's value times its weight, so
        the sum is the reward's total and each component is still logged on its own.  The
        functions share one evaluation of each batch (:mod:`.shared_batch`): a completion runs
        once for all of them, and a sample left out is left out by all.
        """
        components = [c for c, _ in self.components]
        shared: SharedBatch[list[RewardResult | None]] = SharedBatch([c.name for c in components])
        # statuses are logged once, by a component that runs the code (else the first)
        logger = next((c for c in components if "run" in c.needs), components[0])
        return [ComponentFunction(self.evaluate, c.name, shared, logs=c is logger,
                                  weight=weight if weighted else 1.0)
                for c, weight in self.components]

    def as_async(self) -> Callable[..., Coroutine[Any, Any, list[float | None]]]:
        """An async reward for TRL's async path: execution runs in a thread."""
        return AsyncReward(self)


# What trainers are handed are instances of these classes, named (``__name__``) as the reward or
# component they score: they pickle (TRL's async trainer and Ray ship them to other processes),
# where closures would not, and trainers that name a partial after the function it wraps name
# these after their ``__name__``.
class ComponentFunction:
    """One component of a reward as a reward function of its own; the functions of one reward
    share each batch's evaluation (:class:`~.shared_batch.SharedBatch`).  ``evaluate(completions,
    columns)`` gives the batch's results, or None when there are none to give (a service that
    did not answer): every function then gives None for that batch.  Values are multiplied by
    ``weight``."""

    def __init__(self, evaluate: Callable[[list[Any], dict[str, Any]], Sequence[RewardResult] | None],
                 name: str, shared: SharedBatch[list[RewardResult | None]], logs: bool,
                 weight: float = 1.0) -> None:
        self.evaluate, self.shared, self.logs, self.weight = evaluate, shared, logs, weight
        self.__name__ = self.__qualname__ = name

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float | None]:
        def batch() -> list[RewardResult | None]:
            results = self.evaluate(completions, kwargs)
            return [None] * len(completions) if results is None else list(results)

        key = batch_key(completions, {k: v for k, v in kwargs.items() if k not in TRAINER_KEYS})
        results = self.shared.get(self.__name__, key, batch)
        scored = [r for r in results if r is not None]
        if self.logs and len(scored) == len(results):
            log_to_trainer(kwargs, scored, [])
        values = [None if r is None else r.components.get(self.__name__) for r in results]
        return [None if v is None else v * self.weight for v in values]


class AsyncReward:
    """A reward awaited as a coroutine function, its evaluation run in a thread."""

    def __init__(self, reward: Reward) -> None:
        self.reward = reward
        self.__name__ = self.__qualname__ = reward.__name__

    async def __call__(self, completions: list[Any], **kwargs: Any) -> list[float | None]:
        return await asyncio.to_thread(self.reward, completions, **kwargs)


def split_samples(samples: Sequence[dict[str, Any]]) -> tuple[list[Any], dict[str, list[Any]]]:
    """The completions and the dataset columns of records ``{"completion": ..., <columns>}``."""
    keys = sorted({k for s in samples for k in s if k != "completion"})
    return [s.get("completion") for s in samples], {k: [s.get(k) for s in samples] for k in keys}


def _columns(completions: list[Any], kwargs: dict[str, Any]) -> dict[str, list[Any]]:
    columns = {}
    for key, value in kwargs.items():
        if key in TRAINER_KEYS and (key not in PER_COMPLETION_KEYS or value is None):
            continue
        if not isinstance(value, (list, tuple)) or len(value) != len(completions):
            raise ConfigError(f"column {key!r} must be a list with one entry per completion "
                              f"({len(completions)}), as TRL passes dataset columns")
        columns[key] = list(value)
    prompts = kwargs.get("prompts")  # TRL passes the dataset's ``prompt`` column as ``prompts``
    if "prompt" not in columns and isinstance(prompts, (list, tuple)) and len(prompts) == len(completions):
        columns["prompt"] = list(prompts)  # what a HumanEval-schema row's completion continues
    return columns


def log_to_trainer(kwargs: dict[str, Any], results: list[RewardResult], names: list[str]) -> None:
    """Use TRL's ``log_metric``/``log_extra`` when the trainer passes them."""
    log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
    statuses = [_status_of(r) for r in results]
    if callable(log_metric) and results:
        for name in names:
            values = [r.components[name] for r in results if r.components.get(name) is not None]
            if values:
                log_metric(f"rewardkit/{name}", statistics.fmean(v for v in values if v is not None))
        for status, count in sorted(Counter(statuses).items()):
            log_metric(f"rewardkit/status/{status}", count / len(statuses))
    if callable(log_extra):
        log_extra("rewardkit_status", statuses)


def _status_of(result: RewardResult) -> str:
    for detail in result.info.values():
        if isinstance(detail, dict) and detail.get("status"):
            return str(detail["status"])
    return "not_run" if "reason" not in result.info else "invalid"
