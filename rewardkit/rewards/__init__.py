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

from . import components, formulas, shaping
from .composite import Reward, RewardResult
from .engine import ConfigError, Engine, Metrics
from .presets import (
    PRESETS,
    SHAPING_WEIGHTS,
    SINGLES,
    WEIGHTS,
    afterburner,
    cisq_grpo,
    quality_efficiency,
)

afterburner_format = SINGLES["afterburner_format"]
code_block_format = SINGLES["code_block_format"]
binary = SINGLES["binary"]
pass_rate = SINGLES["pass_rate"]
transition = SINGLES["transition"]
rlef = SINGLES["rlef"]
efficiency = SINGLES["efficiency"]
percentile = SINGLES["percentile"]
quality = SINGLES["quality"]
soft_overlong_punishment = SINGLES["soft_overlong_punishment"]
repetition_penalty = SINGLES["repetition_penalty"]
cosine_scaled = SINGLES["cosine_scaled"]

__all__ = [
    "PRESETS",
    "SHAPING_WEIGHTS",
    "SINGLES",
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
