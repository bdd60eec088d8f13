"""Efficiency scores of identical code, each copy against its own baseline measured just before it.

A VM whose host takes its CPUs for a second at a time, or a neighbour that
takes the memory bus, makes one of two identical programs measure slower than
the other now and then, which no noise floor covers.  Such a spell is as
likely to fall on the baseline as on the copy, so it scores as many pairs
above zero as below; a floor too low, or a measurement that treats the copy
apart from its baseline, moves the median away from zero.
"""

from __future__ import annotations

import itertools
from typing import Any

from rewardkit import rewards
from rewardkit.rewards import Engine
from rewardkit.trainers.datasets import answer_text

_PAIRS = itertools.count()  # labels, so that no run is shared with an earlier pair's


def wrap(code: str) -> str:
    """``code`` as a completion in the Afterburner answer format."""
    return answer_text(code, "plan")


def identical_scores(objective: str, engine: Engine, code: str, tests: dict[str, Any],
                     pairs: int = 9) -> list[float]:
    """The efficiency reward of ``pairs`` copies of ``code``, each scored in its own call against a
    baseline that is ``code`` too (both differ from ``code`` only in a comment, so neither is shared
    with another pair): the baseline is measured, then the copy, back to back."""
    reward = rewards.efficiency(objective, engine=engine)
    values = []
    for _ in range(pairs):
        n = next(_PAIRS)
        [value] = reward(completions=[wrap(f"{code}# copy {n}\n")], tests=[tests],
                         baseline_code=[f"{code}# baseline {n}\n"])
        assert value is not None
        values.append(value)
    return values
