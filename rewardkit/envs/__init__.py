"""Environments for agentic RL on code: a problem, tools that run code in the sandbox, a reward.

>>> from functools import partial
>>> from rewardkit.envs import CodeEnv
>>> factory = partial(CodeEnv, preset="pass_rate", tools=["run_tests", "submit"], max_turns=4)

``GRPOTrainer(environment_factory=factory, ...)`` then offers the model the
tools, and scores each rollout with ``get_reward`` (see :mod:`.code_env`).
"""

from __future__ import annotations

from .code_env import ALL_TOOLS, CodeEnv, Environment, tool
from .feedback import feedback_text
from .problem import Problem, read_problem, split_tests

__all__ = ["ALL_TOOLS", "CodeEnv", "Environment", "Problem", "feedback_text", "read_problem", "split_tests",
           "tool"]
