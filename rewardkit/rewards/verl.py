"""Plain functions for verl-style trainers (custom reward function).

verl calls ``compute_score(data_source, solution_str, ground_truth, extra_info)``
per sample, or a batch function with the plural names.  ``ground_truth`` is the
test suite (dict or JSON string); ``extra_info`` may carry any other column
(``baseline_code``, ``baseline_metrics``, ``language``, ``reference_metrics``).
The preset is ``cisq_grpo`` unless ``REWARDKIT_PRESET`` names another one.

In a verl config::

    custom_reward_function:
      path: /path/to/site-packages/rewardkit/rewards/verl.py
      name: compute_score_batch
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

# absolute imports: verl loads this file by its path, outside the package
from rewardkit.rewards.composite import Reward
from rewardkit.rewards.presets import PRESETS

_rewards: dict[str, Reward] = {}
_lock = threading.Lock()


def default_reward() -> Reward:
    """The process-wide reward for verl calls (built once, so its caches persist)."""
    name = os.environ.get("REWARDKIT_PRESET", "cisq_grpo")
    if name not in PRESETS:
        raise ValueError(f"REWARDKIT_PRESET={name!r} is not one of {sorted(PRESETS)}")
    with _lock:
        if name not in _rewards:
            _rewards[name] = PRESETS[name]()
        return _rewards[name]


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str],
                        ground_truths: Sequence[Any],
                        extra_infos: Sequence[dict[str, Any] | None] | None = None,
                        **_: Any) -> list[float]:
    """Scores for a batch; a sample whose execution failed for infrastructure reasons scores 0.0
    (verl needs a number; the warning is logged)."""
    samples = verl_samples(data_sources, solution_strs, ground_truths, extra_infos)
    return [r.value if r.value is not None else 0.0 for r in default_reward().score(samples)]


def verl_samples(data_sources: Sequence[Any], solution_strs: Sequence[str], ground_truths: Sequence[Any],
                 extra_infos: Sequence[dict[str, Any] | None] | None = None) -> list[dict[str, Any]]:
    """verl's arguments as records for ``Reward.score``: the solution is the completion, the ground
    truth the tests, and an extra info's keys are further columns."""
    infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    return [{**(info or {}), "completion": solution, "tests": truth, "data_source": source}
            for source, solution, truth, info in zip(data_sources, solution_strs, ground_truths,
                                                     infos, strict=True)]


def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                  extra_info: dict[str, Any] | None = None, **_: Any) -> float:
    """The score of one sample (see :func:`compute_score_batch`)."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info])[0]
