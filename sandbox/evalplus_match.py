"""EvalPlus's verdict on one returned value, with its special oracles.

Follows ``unsafe_execute`` in ``evalplus/eval/__init__.py`` and
``evalplus/eval/_special_oracle.py`` (github.com/evalplus/evalplus, 26d6d00).
An oracle is named by what it checks; the loader
(:mod:`rewardkit.benchmarks.loaders.evalplus`) picks it from the entry point.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

EVALPLUS_RTOL = 1e-7  # unsafe_execute: np.allclose(..., rtol=1e-07, atol=atol)


def _poly(coefficients: list[Any], x: float) -> float:
    return float(sum(c * math.pow(x, i) for i, c in enumerate(coefficients)))


def _pyramid_surface(base_edge: float, height: float) -> int:
    """Mbpp/581's oracle: the square pyramid's surface, ``height`` measured from base to apex, rounded."""
    slant = math.sqrt((base_edge / 2) ** 2 + height ** 2)
    return round(base_edge ** 2 + 4 * (base_edge * slant) / 2)  # EvalPlus's order of operations


def _digit_distance(first: int, second: int) -> int:
    """Mbpp/558's oracle: the sum of digit differences, the shorter number padded with leading zeros."""
    a, b = str(first), str(second)
    width = max(len(a), len(b))
    return sum(abs(int(x) - int(y)) for x, y in zip(a.zfill(width), b.zfill(width), strict=True))


# oracle -> whether it accepts (expected, actual, atol, args) before the allclose fallback
_EXACT: dict[str, Callable[[Any, Any, float, list[Any]], bool]] = {
    "set_equal": lambda expected, actual, atol, args: set(actual) == set(expected),
    "not_none": lambda expected, actual, atol, args: (
        actual == expected if isinstance(actual, bool) else expected == (actual is not None)),
    "any_value": lambda expected, actual, atol, args: True,  # Mbpp/164 are_equivalent
    "or_zero": lambda expected, actual, atol, args: actual == expected or actual == 0,  # Mbpp/295 sum_div
    "pyramid_surface": lambda expected, actual, atol, args: (
        actual == expected or abs(actual - _pyramid_surface(*args)) <= atol),
    "digit_distance": lambda expected, actual, atol, args: (
        actual == expected or actual == _digit_distance(*args)),
}
ORACLES = ("poly_root", *_EXACT)


def evalplus_matches(expected: Any, actual: Any, atol: float, args: list[Any] | None = None,
                     oracle: str | None = None) -> bool:
    """Whether ``actual`` passes where the reference returned ``expected``, as EvalPlus judges it.

    Exact Python equality first (or the oracle's own test); failing that, when
    ``atol`` is not 0, the same type (and length, for a list or tuple) and
    ``np.allclose`` with rtol 1e-7 and ``atol``.  The caller passes the
    ``atol`` EvalPlus would be using at this input (it becomes 1e-6 for good at
    the first float-valued expected output of a problem whose ``atol`` is 0).
    ``oracle`` is one of :data:`ORACLES`: ``poly_root`` (HumanEval/32
    ``find_zero``: the polynomial ``args[0]`` is within ``atol`` of 0 at the
    value, and nothing else is checked), ``set_equal`` (equal as sets),
    ``not_none`` (``expected`` says whether the reference returned something
    other than None), ``any_value`` (Mbpp/164: any returned value),
    ``or_zero`` (Mbpp/295: 0 is also right), ``pyramid_surface`` (Mbpp/581)
    and ``digit_distance`` (Mbpp/558): equal to what EvalPlus's own oracle
    function computes from the arguments.  ValueError for another oracle.
    """
    if oracle is not None and oracle not in ORACLES:
        raise ValueError(f"unknown EvalPlus oracle {oracle!r}; use one of {', '.join(ORACLES)}")
    arguments = list(args or [])
    try:
        if oracle == "poly_root":
            return bool(abs(_poly(arguments[0], actual)) <= atol)
        exact = _EXACT[oracle](expected, actual, atol, arguments) if oracle else actual == expected
        return bool(exact) or (atol != 0 and _close(expected, actual, atol))
    except Exception:  # EvalPlus counts anything raised while comparing as a failed input
        return False


def _close(expected: Any, actual: Any, atol: float) -> bool:
    """EvalPlus's fallback: the same type (and length) and ``np.allclose`` (may raise)."""
    if type(actual) is not type(expected):
        return False
    if isinstance(expected, (list, tuple)) and len(actual) != len(expected):
        return False
    import numpy as np  # a core dependency, needed only here

    return bool(np.allclose(actual, expected, rtol=EVALPLUS_RTOL, atol=atol))
