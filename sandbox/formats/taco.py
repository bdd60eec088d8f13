"""TACO / APPS rows: the ``input_output`` column, JSON text of ``{inputs, outputs, fn_name?}``.

The APPS and TACO datasets hold each problem's tests there (``fn_name`` for
call-based problems); the same dict given as ``tests`` is read as verl's
(format ``verl``).  Both are read and judged as :mod:`.verl` says, whose
``prime_code`` harness is APPS's ``testing_util`` (a row whose tests are
empty, as some TACO rows are, is refused with a message).

One more difference, found by the agreement corpus (``tests/formats/test_agree_apps.py``):
``prime_code``'s ``reliability_guard`` sets ``builtins.exit`` and ``quit`` to None, so a
program that prints the right answer and then calls ``exit()`` fails there with a
TypeError; here ``exit()`` ends the program and the answer printed counts, as
``sys.exit()`` (which both accept) does.  How a program stops is not what the reward judges.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..suite import SuiteError, TestSuite
from . import verl

if TYPE_CHECKING:  # the package imports this module
    from . import RowTests

NAME = "apps"
COLUMNS = ("input_output",)


def found(row: Mapping[str, Any]) -> bool:
    """Whether the row has an ``input_output`` column."""
    return row.get("input_output") is not None


def read_row(row: Mapping[str, Any]) -> RowTests:
    """The row's ``input_output`` as a verl/APPS suite."""
    from . import RowTests

    value = row["input_output"]
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise SuiteError(f"input_output is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise SuiteError(f"input_output must be an object {{inputs, outputs, fn_name}}, got "
                         f"{type(value).__name__}")
    return RowTests(TestSuite.from_dict(verl.suite(value)), NAME)
