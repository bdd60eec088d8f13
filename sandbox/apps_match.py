"""APPS's verdict on a value returned in a call-based problem (a call suite's ``compare: "apps"``)."""

from __future__ import annotations

from typing import Any


def apps_matches(expected: Any, actual: Any) -> bool:
    """APPS's verdict on a value returned in a call-based problem (``compare: "apps"``).

    As ``run_test`` in APPS's ``eval/testing_util.py`` judges it: a returned
    tuple counts as a list; the value passes when it equals (Python ``==``:
    exact floats, ``True == 1``) the stored output or, when that is a
    non-empty list, its first element (APPS stores most outputs wrapped in a
    one-element list), or when it is a sequence of tuples that equals that
    element as lists.  A dict output (or one wrapped in a list) has its keys
    turned back into ints where they all are ("JSON forces dictionaries to
    have string keys"), as APPS does.
    """
    expected = _apps_int_keys(expected)
    if isinstance(actual, tuple):
        actual = list(actual)
    try:
        if actual == expected:
            return True
        if not isinstance(expected, list) or not expected:
            return False
        if actual == expected[0]:
            return True
        return isinstance(actual, list) and bool(actual) and isinstance(actual[0], tuple) \
            and [list(item) for item in actual] == expected[0]
    except Exception:  # a comparison that raises (a RecursionError, say) is a failed case
        return False


def _apps_int_keys(expected: Any) -> Any:
    """APPS's ``{int(k): v ...}`` for a dict output or a one-element list holding one."""
    inner = expected[0] if isinstance(expected, list) and expected else expected
    if not isinstance(inner, dict):
        return expected
    try:
        return [{int(key): value for key, value in inner.items()}]
    except (TypeError, ValueError):
        return expected
