"""Efficiency scores of identical code taken while the machine held its speed.

A VM whose host takes its CPUs for a second at a time makes the same program
run slower for several runs in a row, which no noise floor covers; a test that
expects identical code to score zero counts only measurements that show no
such spell.
"""

from __future__ import annotations

from typing import Any

from rewardkit import rewards
from rewardkit.rewards import Engine, Metrics
from rewardkit.sandbox import Sandbox


def wrap(code: str) -> str:
    """``code`` as a completion in the Afterburner answer format."""
    return f"<thinking>plan</thinking>\n<solution>\n```python\n{code}```\n</solution>"


def steady_scores(objective: str, sandbox: Sandbox, code: str, tests: dict[str, Any], label: str,
                  wanted: int = 5, attempts: int = 20) -> list[float]:
    """``wanted`` scores of fresh copies of ``code``, each against a fresh baseline, taken where
    the machine held its speed: the baseline and the copy, each measured once more right after
    the reward measured them, agree with their first measurements within the floor.  Fails
    when ``attempts`` give fewer.
    """
    kept: list[float] = []
    for n in range(attempts):
        copy = f"{code}# {label}, measured again ({n})\n"
        reward = rewards.efficiency(objective, engine=Engine(sandbox=sandbox))
        [result] = reward.score([{"completion": wrap(copy), "tests": tests, "baseline_code": code}])
        info = result.info[f"efficiency_{objective}"]
        tolerance = info["noise_floor"] * info["e_in"]
        firsts = (info["e_in"], info["e_out"])
        again = [Metrics.from_result(sandbox.run(f"{program}# and again\n", tests))
                 for program in (code, copy)]
        assert all(m.passed for m in again), again
        if all(abs(m.value(objective) - first) < tolerance for m, first in zip(again, firsts, strict=True)):
            kept.append(result.components[f"efficiency_{objective}"])
            if len(kept) == wanted:
                return kept
    raise AssertionError(f"{objective}: the baseline or the copy measured again disagreed with itself "
                         f"beyond the floor in {attempts - len(kept)} of {attempts} tries (the machine's "
                         f"speed kept changing, or the floor is below the meter's noise): {kept}")
