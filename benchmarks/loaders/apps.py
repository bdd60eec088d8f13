"""APPS (``codeparrot/apps``) as :class:`Problem` objects.

An APPS record: ``problem_id`` (int), ``question``, ``solutions`` (JSON text
of a list of code strings, ``""`` when none), ``input_output`` (JSON text of
``{"inputs": [...], "outputs": [...], "fn_name"?: str}``), ``difficulty``
(``introductory``/``interview``/``competition``), ``url`` and ``starter_code``.

* Without ``fn_name`` a problem is a stdin/stdout program: a ``stdio`` suite,
  one case per input (an input or output given as a list of lines is joined
  with newlines).  APPS's own checker accepts an output that matches token by
  token or as numbers within a small tolerance, not only line by line, so the
  suite carries :data:`EVALUATOR`, which does the same.
* With ``fn_name`` it is a ``call`` suite: the entry point is
  ``Solution.<fn_name>`` when the starter code defines ``class Solution``
  (LeetCode-style problems), else the function itself; each input is the
  argument list.  APPS stores most expected values wrapped in a one-element
  list (its checker accepts ``output == expected`` or ``output ==
  expected[0]``); a call suite has one expected value, so a one-element list
  is unwrapped.  A function whose true answer is a one-element list is the
  case this reads wrongly.

Difficulty maps introductory/interview/competition to easy/medium/hard; the
original label is kept in ``extra["apps_difficulty"]``.
"""

from __future__ import annotations

import re
from typing import Any

from ...sandbox import TestSuite
from ...sandbox.suite import SuiteError
from ..problem import Problem, Reference
from .common import LoaderError, difficulty, json_field, sequence, text

SOURCE = "apps"
KEYS = frozenset({"question", "input_output"})
_SOLUTION_CLASS = re.compile(r"^\s*class\s+Solution\b", re.MULTILINE)

EVALUATOR = '''import math


def _lines(text):
    return [line.rstrip() for line in text.strip().splitlines()]


def _number(token):
    try:
        return float(token)
    except ValueError:
        return None


def evaluate(expected, actual):
    """APPS's leniency: equal lines, equal tokens, or numbers within 1e-6 (relative or absolute)."""
    if _lines(expected) == _lines(actual):
        return True
    want, got = expected.split(), actual.split()
    if want == got:
        return True
    if len(want) != len(got):
        return False
    for a, b in zip(want, got):
        if a == b:
            continue
        x, y = _number(a), _number(b)
        if x is None or y is None or not math.isclose(x, y, rel_tol=1e-6, abs_tol=1e-6):
            return False
    return True
'''


def is_apps(record: dict[str, Any]) -> bool:
    """Whether a record has the APPS schema's distinguishing keys."""
    return record.keys() >= KEYS


def _joined(value: Any) -> str:
    return "\n".join(str(v) for v in value) if isinstance(value, list) else str(value)


def _unwrapped(value: Any) -> Any:
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def _suite(io: dict[str, Any], starter_code: str) -> dict[str, Any]:
    inputs, outputs = sequence(io.get("inputs")), sequence(io.get("outputs"))
    if len(inputs) != len(outputs):
        raise LoaderError(f"{len(inputs)} inputs but {len(outputs)} outputs")
    fn_name = io.get("fn_name")
    if not fn_name:
        cases = [{"input": _joined(i), "output": _joined(o)} for i, o in zip(inputs, outputs, strict=True)]
        return {"mode": "stdio", "cases": cases, "evaluator": EVALUATOR}
    entry = f"Solution.{fn_name}" if _SOLUTION_CLASS.search(starter_code) else str(fn_name)
    calls = [{"args": i if isinstance(i, list) else [i], "expected": _unwrapped(o)}
             for i, o in zip(inputs, outputs, strict=True)]
    return {"mode": "call", "entry_point": entry, "cases": calls}


def apps_problem(record: dict[str, Any], source: str = SOURCE, where: str = "") -> Problem:
    """One APPS record as a :class:`Problem` (see the module docstring for the mapping)."""
    problem_id = str(record.get("problem_id", "")).strip()
    where = where or f"apps problem {problem_id or '?'}"
    if not problem_id:
        raise LoaderError(f"{where}: no problem_id")
    io = json_field(record.get("input_output"), "input_output", where)
    if not isinstance(io, dict):
        raise LoaderError(f"{where}: input_output has no tests (it must be a JSON object with "
                          "'inputs' and 'outputs')")
    starter_code = text(record.get("starter_code"))
    try:
        tests = TestSuite.from_dict(_suite(io, starter_code))
    except (SuiteError, LoaderError) as exc:
        raise LoaderError(f"{where}: its tests cannot be used: {exc}") from exc
    solutions = sequence(json_field(record.get("solutions"), "solutions", where))
    references = [Reference(str(code), f"apps #{index}")
                  for index, code in enumerate(solutions) if str(code).strip()]
    return Problem(
        problem_id=problem_id, statement=text(record.get("question")), tests=tests, language="python",
        title="", starter_code=starter_code, difficulty=difficulty(record.get("difficulty")),
        references=references, source=source,
        extra={"url": text(record.get("url")), "apps_difficulty": text(record.get("difficulty")),
               "fn_name": io.get("fn_name")})
