"""The embedded benchmark ``mini``: problems written for rewardkit, shipped in the package."""

from __future__ import annotations

from functools import cache

from ..problem import Problem
from . import easy, hard, medium
from .spec import Spec, build

SPECS: list[Spec] = [*easy.SPECS, *medium.SPECS, *hard.SPECS]


@cache
def _problems() -> tuple[Problem, ...]:
    return tuple(problem for spec in SPECS for problem in build(spec))


def load_mini() -> list[Problem]:
    """Every embedded problem (call forms, and stdio forms where written), fresh copies."""
    import copy

    return copy.deepcopy(list(_problems()))
