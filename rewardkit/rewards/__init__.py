"""Rewards for code completions, TRL-compatible.

>>> from rewardkit import rewards
>>> reward = rewards.cisq_grpo()
>>> values = reward(completions=["```python\\nprint(1)\\n```"],
...                 tests=[{"mode": "stdio", "cases": [{"input": "", "output": "1\\n"}]}])

Single components are rewards too: ``rewards.pass_rate()``,
``rewards.efficiency("memory")``, ``rewards.quality("security")`` ...

Length and repetition shaping (:mod:`.shaping`) joins a preset with its weight:
``rewards.cisq_grpo(shaping={"soft_overlong_punishment": {"max_completion_len": 512,
"soft_punish_cache": 128}})``, or ``reward.with_components((component, weight))``.
"""

from __future__ import annotations

from typing import Any

from . import components, formulas, shaping
from .composite import Reward, RewardResult
from .engine import ConfigError, Engine, Metrics
from .presets import (
    PRESETS,
    SHAPING_WEIGHTS,
    WEIGHTS,
    afterburner,
    cisq_grpo,
    quality_efficiency,
)


def _single(factory: Any, name: str) -> Any:
    def make(*args: Any, engine: Engine | None = None, strict: bool = False,
             format: str | None = None, **kw: Any) -> Reward:
        component = factory(*args, **kw)
        return Reward([(component, 1.0)], engine, strict, component.name, format)

    make.__name__ = name
    make.__doc__ = f"A reward of the single component {name!r} (see {factory.__module__})."
    return make


afterburner_format = _single(components.afterburner_format, "afterburner_format")
code_block_format = _single(components.code_block_format, "code_block_format")
binary = _single(components.binary, "binary")
pass_rate = _single(components.pass_rate, "pass_rate")
transition = _single(components.transition, "transition")
rlef = _single(components.rlef, "rlef")
efficiency = _single(components.efficiency, "efficiency")
percentile = _single(components.percentile, "percentile")
quality = _single(components.quality, "quality")
soft_overlong_punishment = _single(shaping.soft_overlong_punishment, "soft_overlong_punishment")
repetition_penalty = _single(shaping.repetition_penalty, "repetition_penalty")
cosine_scaled = _single(shaping.cosine_scaled, "cosine_scaled")

__all__ = [
    "PRESETS",
    "SHAPING_WEIGHTS",
    "WEIGHTS",
    "ConfigError",
    "Engine",
    "Metrics",
    "Reward",
    "RewardResult",
    "afterburner",
    "afterburner_format",
    "binary",
    "cisq_grpo",
    "code_block_format",
    "components",
    "cosine_scaled",
    "efficiency",
    "formulas",
    "pass_rate",
    "percentile",
    "quality",
    "quality_efficiency",
    "repetition_penalty",
    "rlef",
    "shaping",
    "soft_overlong_punishment",
    "transition",
]
