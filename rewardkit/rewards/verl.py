"""verl's custom reward function, computed in the trainer's process.

Point verl's ``custom_reward_function.path`` at this module (``pkg://rewardkit.rewards.verl``,
which verl imports by name, or the file's path) and ``name`` at the function its reward
manager calls (read in verl's source, 2026-01):

* reward loop (``reward_model.use_reward_loop``, the default), managers ``naive``,
  ``dapo``, ``rate_limited`` (``verl/experimental/reward_loop/reward_manager/``,
  ``run_single``): one sample per call, a chunk's samples all at once; a coroutine
  function is awaited, a plain one runs in the event loop's default thread pool
  (at most min(32, CPUs + 4) at once).  Use ``compute_score_async`` (no thread cap),
  or ``compute_score``.
* reward loop ``remote``: one sample per call in Ray actors, coroutine functions
  refused.  Use ``compute_score``.
* legacy ``naive`` and ``dapo`` (``verl/workers/reward_manager/``, ``__call__``): one
  sample per call, one after another, so nothing to gather.  Use ``compute_score``,
  or better the ``batch`` manager.
* legacy ``batch`` (``BatchRewardManager.verify``): the whole batch, plural argument
  names.  Use ``compute_score_batch``.
* legacy ``prime``: one sample per call in a process pool, and it wants a number
  (a dict scores the whole batch 0).  Use ``compute_score_float``.

Per-sample calls made at the same time (threads or coroutines) are gathered into
one engine batch (:mod:`.coalesce`), so a GRPO group is run and analysed once,
de-duplicated and in parallel, as the batch path does.

Arguments: ``ground_truth`` is the ``tests`` column, passed through as verl has it;
``extra_info``'s keys are further columns (``baseline_code``, ``baseline_metrics``,
``language``, ``reference_metrics``).  verl's ``custom_reward_function.reward_kwargs``
arrive as keywords (``verl/trainer/ppo/reward.py``, ``get_custom_reward_fn``): ``preset``
(else ``$REWARDKIT_PRESET``, else ``cisq_grpo``) and the preset's options (``objective``,
``format_penalty``, ``limits``, ``strict``), and ``fault``.  One reward per distinct (preset,
options) is built at its first call and kept; an unknown preset or option raises :class:`ConfigError`.

The result is verl's dict form, ``{"score": <reward>, <component>: <value>, ...,
"rewardkit_fault": 0.0}``: every manager but ``prime`` takes ``"score"`` as the reward
and logs the other keys as ``reward_extra_info``, which must hold numbers and the same
keys for every sample (the reward loop reads the keys of the first sample).  verl needs
a number (no manager drops a sample: see :mod:`.faults`), so a sample left without a reward
by an infrastructure fault (the sandbox's) gets ``reward_kwargs.fault`` (default 0.0) for the
score, 0.0 for every component, ``rewardkit_fault`` 1.0, and a warning; ``fault: raise``
raises :class:`~.faults.RewardFault` instead (the step fails); ``skip`` is refused.

In a verl config::

    custom_reward_function:
      path: pkg://rewardkit.rewards.verl
      name: compute_score_async
      reward_kwargs:
        preset: quality_efficiency
        objective: time
        fault: 0.0
"""

from __future__ import annotations

import inspect
import json
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

# absolute imports: verl loads this file by its path, outside the package
from rewardkit.rewards.coalesce import Coalescer
from rewardkit.rewards.composite import Reward, RewardResult
from rewardkit.rewards.engine import ConfigError
from rewardkit.rewards.faults import FAULT_KEY, Policy, apply, fault_policy
from rewardkit.rewards.presets import PRESETS
from rewardkit.sandbox import Limits

PRESET_ENV, DEFAULT_PRESET = "REWARDKIT_PRESET", "cisq_grpo"
# keywords verl's reward loop adds when a reward model is on, not options of ours
VERL_KEYWORDS = frozenset({"reward_router_address", "reward_model_tokenizer"})
# preset parameters that are objects, not settings a YAML file can give
NOT_OPTIONS = frozenset({"engine", "sandbox"})


class _Scorer:
    """A reward and the coalescer that batches its per-sample calls.  (No dataclass: verl may load
    this file as a module missing from ``sys.modules``, where dataclasses cannot read annotations.)"""

    def __init__(self, reward: Reward) -> None:
        self.reward = reward
        self.coalescer: Coalescer[dict[str, Any], RewardResult] = Coalescer(
            reward.score, isolate=(Exception,), name=f"rewardkit-verl-{reward.__name__}")


_scorers: dict[str, _Scorer] = {}
_lock = threading.Lock()


def scorer(**reward_kwargs: Any) -> _Scorer:
    """The reward for verl's ``reward_kwargs`` (built once per distinct preset and options)."""
    options = {k: _plain(v) for k, v in reward_kwargs.items() if k not in VERL_KEYWORDS and k != "fault"}
    preset = options.pop("preset", None) or os.environ.get(PRESET_ENV) or DEFAULT_PRESET
    key = json.dumps([preset, options], sort_keys=True, default=repr)
    with _lock:
        if key not in _scorers:
            _scorers[key] = _Scorer(_build(str(preset), options))
        return _scorers[key]


def reward_for(**reward_kwargs: Any) -> Reward:
    """The reward that verl's ``reward_kwargs`` name (see :func:`scorer`)."""
    return scorer(**reward_kwargs).reward


def _build(preset: str, options: dict[str, Any]) -> Reward:
    if preset not in PRESETS:
        raise ConfigError(f"unknown preset {preset!r} (verl: custom_reward_function.reward_kwargs.preset, "
                          f"or ${PRESET_ENV}); use one of {', '.join(sorted(PRESETS))}")
    accepted = [name for name in inspect.signature(PRESETS[preset]).parameters if name not in NOT_OPTIONS]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ConfigError(f"preset {preset!r} has no option {', '.join(map(repr, unknown))} "
                          f"(verl: custom_reward_function.reward_kwargs); its options: {', '.join(accepted)}")
    if isinstance(options.get("limits"), Mapping):
        try:
            options = {**options, "limits": Limits(**options["limits"])}
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"reward_kwargs.limits: {exc}") from exc
    try:
        return PRESETS[preset](**options)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"preset {preset!r} with options {options}: {exc}") from exc


def _plain(value: Any) -> Any:
    """A mapping from verl's config (an omegaconf ``DictConfig``) as a dict, for the cache key."""
    return {str(k): _plain(v) for k, v in value.items()} if isinstance(value, Mapping) else value


# -- results in verl's form ----------------------------------------------------------------------
def policy_of(reward_kwargs: Mapping[str, Any]) -> Policy:
    """The fault policy that verl's ``reward_kwargs.fault`` names (default 0.0; no ``skip``)."""
    return fault_policy(reward_kwargs.get("fault"), "verl")


def verl_result(result: RewardResult, fault_value: Policy = 0.0) -> dict[str, float]:
    """verl's dict form of a result: ``score``, each component, ``rewardkit_fault``; numbers only,
    the same keys for every sample (for a fault: the policy's score, 0.0 for each component and
    ``rewardkit_fault`` 1.0, or :class:`~.faults.RewardFault` raised)."""
    fault = result.value is None
    score = apply(result.value, fault_value, result.info, who="verl")
    if score is None:
        raise ConfigError("verl cannot drop a sample: fault must be 'raise' or a number")
    out = {"score": float(score)}
    out.update({name: 0.0 if fault or value is None else float(value)
                for name, value in result.components.items()})
    out[FAULT_KEY] = float(fault)
    return out


def verl_samples(data_sources: Sequence[Any], solution_strs: Sequence[str], ground_truths: Sequence[Any],
                 extra_infos: Sequence[dict[str, Any] | None] | None = None) -> list[dict[str, Any]]:
    """verl's arguments as records for ``Reward.score``: the solution is the completion, the ground
    truth the tests (as given), and an extra info's keys are further columns."""
    infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    return [{**(info or {}), "completion": solution, "tests": truth, "data_source": source}
            for source, solution, truth, info in zip(data_sources, solution_strs, ground_truths,
                                                     infos, strict=True)]


# -- the functions verl calls ------------------------------------------------------------------------
def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                  extra_info: dict[str, Any] | None = None, **reward_kwargs: Any) -> dict[str, float]:
    """One sample's reward in verl's dict form; concurrent calls (verl's thread pool) are scored
    as one batch."""
    policy, run = policy_of(reward_kwargs), scorer(**reward_kwargs)
    [sample] = verl_samples([data_source], [solution_str], [ground_truth], [extra_info])
    return verl_result(run.coalescer(sample), policy)


async def compute_score_async(data_source: Any, solution_str: str, ground_truth: Any,
                              extra_info: dict[str, Any] | None = None,
                              **reward_kwargs: Any) -> dict[str, float]:
    """:func:`compute_score` for verl's reward loop, which awaits coroutine functions: the calls
    of a chunk, all awaited at once, are scored as one batch in a thread of their own."""
    policy, run = policy_of(reward_kwargs), scorer(**reward_kwargs)
    [sample] = verl_samples([data_source], [solution_str], [ground_truth], [extra_info])
    return verl_result(await run.coalescer.score_async(sample), policy)


def compute_score_float(data_source: Any, solution_str: str, ground_truth: Any,
                        extra_info: dict[str, Any] | None = None, **reward_kwargs: Any) -> float:
    """The reward alone, for a manager that wants a number (verl's ``prime``)."""
    return compute_score(data_source, solution_str, ground_truth, extra_info, **reward_kwargs)["score"]


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str],
                        ground_truths: Sequence[Any],
                        extra_infos: Sequence[dict[str, Any] | None] | None = None,
                        **reward_kwargs: Any) -> list[dict[str, float]]:
    """A batch's rewards in verl's dict form, for verl's ``batch`` manager (keywords as above)."""
    policy, run = policy_of(reward_kwargs), scorer(**reward_kwargs)
    samples = verl_samples(data_sources, solution_strs, ground_truths, extra_infos)
    return [verl_result(r, policy) for r in run.reward.score(samples)]
