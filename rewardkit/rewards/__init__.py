"""Rewards for code completions (SPEC §3.3, §4.1-4.5), TRL-compatible.

>>> from rewardkit import rewards
>>> reward = rewards.cisq_grpo()
>>> values = reward(completions=["```python\\nprint(1)\\n```"],
...                 tests=[{"mode": "stdio", "cases": [{"input": "", "output": "1\\n"}]}])

Single components are rewards too: ``rewards.pass_rate()``,
``rewards.efficiency("memory")``, ``rewards.quality("security")`` ...
"""

from __future__ import annotations

from typing import Any

from . import components, formulas
from .composite import Reward, RewardResult
from .engine import ConfigError, Engine, Metrics
from .presets import PRESETS, WEIGHTS, afterburner, cisq_grpo, quality_efficiency


def _single(factory: Any, name: str) -> Any:
    def make(*args: Any, engine: Engine | None = None, strict: bool = False, **kw: Any) -> Reward:
        component = factory(*args, **kw)
        return Reward([(component, 1.0)], engine, strict, component.name)

    make.__name__ = name
    make.__doc__ = f"A reward of the single component {name!r} (see rewards.components)."
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

__all__ = [
    "PRESETS",
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
    "efficiency",
    "formulas",
    "pass_rate",
    "percentile",
    "quality",
    "quality_efficiency",
    "rlef",
    "transition",
]
