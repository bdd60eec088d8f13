"""Test modes, one class each: how a suite is read, what it runs, how it is judged.

* ``stdio`` (:class:`~.stdio.Stdio`): a program per case on stdin, any language;
* ``call`` (:class:`~.call.Call`): a function or method called with each case's arguments;
* ``script`` (:class:`~.script.Script`): a HumanEval-style ``check(candidate)``;
* ``unittest`` (:class:`~.unittest.Unittest`): the language's own test runner (Rust);
* ``pytest`` (:class:`~.pytest.Pytest`): a pytest module run against the solution's module.
"""

from __future__ import annotations

from ..suite import Case, SuiteError
from .base import Mode, Run, SuiteCode, Tally
from .call import Call
from .pytest import Pytest
from .script import Script
from .stdio import Stdio
from .unittest import Unittest

MODES: dict[str, Mode] = {mode.name: mode for mode in (Stdio(), Call(), Script(), Unittest(), Pytest())}


def mode_named(name: str) -> Mode:
    """The mode of that name; SuiteError lists the modes."""
    if name not in MODES:
        raise SuiteError(f"unknown test mode {name!r}; use one of {', '.join(MODES)}")
    return MODES[name]


__all__ = ["MODES", "Case", "Mode", "Run", "SuiteCode", "SuiteError", "Tally", "mode_named"]
