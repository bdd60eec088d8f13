"""What a trainer gets for a sample whose reward an infrastructure fault took away.

A sandbox that died or a service that did not answer leaves a sample without a reward
(``RewardResult.value is None``); a bad completion is never a fault (it scores lowest).
Trainers differ in what they can do with a sample that has no number, so one policy,
``fault=``, says what each adapter hands on:

* ``"skip"``: the sample is dropped (TRL: ``None``; verifiers: the ``@reward`` raises
  :class:`RewardFault`, which verifiers records on the trace as a ``TaskError``, the
  rollout ``ok=False`` and unscored, so it is re-run or left out rather than trained on).
* ``"raise"``: :class:`RewardFault` is raised in the trainer's process (the step fails).
* a number: that reward is given, stated in the config, with the flag
  :data:`FAULT_KEY` = 1.0 beside the sample's components (``0.0`` for a scored sample)
  and a warning in the log; never a silent number.

What each framework can do (read in its source) and the default here:

=========== ========= ===================================================================
framework   default   why
=========== ========= ===================================================================
TRL         skip      drops a row whose reward functions all give ``None``
verifiers   skip      a ``@reward`` that raises leaves the rollout ``ok=False``, unscored;
                      ``None`` is a TypeError in ``Trace.record_reward``
verl 0.9.1  0.0       no manager drops a sample: ``None`` fails the reward tensor
                      (``torch.tensor(scores)``) or leaves ``rm_scores`` out, NaN makes
                      the GRPO group's advantages NaN; ``rate_limited`` turns an exception
                      into 0.0 with an ``error`` key
OpenRLHF    0.0       a ``None`` reward leaves the experience without one, NaN reaches the
                      advantages; dynamic filtering alone would drop a NaN-scored group
CodeEnv     0.0       ``get_reward`` returns a float to TRL's environment loop
=========== ========= ===================================================================
"""

from __future__ import annotations

import logging
import math
from typing import Any, Literal

from .engine import ConfigError

log = logging.getLogger("rewardkit.rewards")

FAULT_KEY = "rewardkit_fault"
SKIP: Literal["skip"] = "skip"
RAISE: Literal["raise"] = "raise"
Policy = Literal["skip", "raise"] | float

DEFAULTS: dict[str, Policy] = {"trl": SKIP, "verifiers": SKIP, "verl": 0.0, "openrlhf": 0.0, "env": 0.0}
# Frameworks that can drop a sample without a reward.
CAN_SKIP = frozenset({"trl", "verifiers"})


class RewardFault(RuntimeError):
    """A sample has no reward because of an infrastructure fault (not the completion's doing)."""


def fault_policy(value: Any, framework: str) -> Policy:
    """The policy ``value`` names for ``framework`` (``None``: the framework's default).

    Accepts ``"skip"``, ``"raise"``, a finite number, or a number as text (from a URL or
    YAML); ``"skip"`` only where the framework can drop a sample.
    """
    if framework not in DEFAULTS:
        raise ConfigError(f"unknown framework {framework!r}; known: {', '.join(DEFAULTS)}")
    if value is None:
        return DEFAULTS[framework]
    if isinstance(value, str) and value.strip().lower() in (SKIP, RAISE):
        policy = value.strip().lower()
        if policy == SKIP and framework not in CAN_SKIP:
            raise ConfigError(f"fault='skip': {framework} cannot drop a sample; use 'raise' or a "
                              f"number, such as {DEFAULTS[framework]!r}, flagged {FAULT_KEY}=1.0")
        return SKIP if policy == SKIP else RAISE
    try:
        number = float(value) if not isinstance(value, bool) else math.nan
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number):
        raise ConfigError(f"fault must be 'skip', 'raise' or a finite number, got {value!r}")
    return number


def apply(value: float | None, policy: Policy, detail: Any = None, who: str = "the trainer") -> float | None:
    """``value``, or for a fault (``None``) what ``policy`` gives: ``None`` (skip), the
    policy's number (logged), or :class:`RewardFault` (raise)."""
    if value is not None:
        return value
    if policy == RAISE:
        raise RewardFault(f"no reward: infrastructure fault ({detail})")
    if policy == SKIP:
        return None
    log.warning("a sample has no reward (infrastructure fault); %s gets %s for it, flagged %s: %s",
                who, float(policy), FAULT_KEY, detail)
    return float(policy)
