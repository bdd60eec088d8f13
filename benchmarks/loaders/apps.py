"""APPS (``codeparrot/apps``) as :class:`Problem` objects.

An APPS record: ``problem_id`` (int), ``question``, ``solutions`` (JSON text
of a list of code strings, ``""`` when none), ``input_output`` (JSON text of
``{"inputs": [...], "outputs": [...], "fn_name"?: str}``), ``difficulty``
(``introductory``/``interview``/``competition``), ``url`` and ``starter_code``.

Problems are judged as APPS's own harness judges them (``run_test`` in
``eval/testing_util.py`` of ``hendrycks/apps``, read at commit 362aedc):

* Without ``fn_name`` a problem is a stdin/stdout program: a ``stdio`` suite,
  one case per input (an input or output given as a list of lines is joined
  with newlines, as ``run_test`` does).  The suite's ``program: "apps"`` runs
  the program as APPS does, as the body of a function after APPS's imports,
  so a top-level ``return`` ends it and ``SystemExit`` keeps its output
  (:func:`rewardkit.sandbox.runtime.apps.apps_program`); its evaluator,
  :data:`EVALUATOR`, is APPS's cascade of comparisons.
* With ``fn_name`` it is a ``call`` suite: the entry point is
  ``Solution.<fn_name>`` when the starter code defines ``class Solution``
  (LeetCode-style problems), else the function itself; each input is the
  argument list (a leading dict argument gets its keys back as ints where
  they all are, as APPS does; APPS then drops the other arguments, we keep
  them).  The stored output is kept as it is and ``compare: "apps"`` judges
  the returned value as APPS does (equal to it or to its first element:
  :func:`rewardkit.sandbox.apps_match.apps_matches`).

Deliberate differences from APPS's harness: the program's top-level names
stay module globals (APPS makes them locals of its function, so a ``global``
statement in a helper fails there), ``__name__`` is ``"__main__"`` (APPS's
module is ``tmp_sol``: a program guarded by ``if __name__ == "__main__"``
prints nothing there), star and ``__future__`` imports anywhere at module
level are legal, ``exit``/``quit`` work (APPS sets them to None), and stdin is
a real stream (APPS's ``sys.stdin.readline`` returns lines without their
newline).

Difficulty maps introductory/interview/competition to easy/medium/hard; the
original label is kept in ``extra["apps_difficulty"]``.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from ...sandbox import TestSuite
from ...sandbox.suite import SuiteError
from ..problem import Problem, Reference
from .common import LoaderError, difficulty, json_field, sequence, text

SOURCE = "apps"
KEYS = frozenset({"question", "input_output"})
_SOLUTION_CLASS = re.compile(r"^\s*class\s+Solution\b", re.MULTILINE)

EVALUATOR = '''def _floats(lines):
    return [float(line) for line in lines]


def _close(got, want):
    try:
        a, b = _floats(got), _floats(want)
    except (TypeError, ValueError):
        return False
    return len(a) == len(b) and all(x == y or abs(x - y) <= 1e-8 + 1e-5 * abs(y) for x, y in zip(a, b))


def _rounded(sets):
    return {frozenset(round(float(token), 3) for token in tokens) for tokens in sets}


def evaluate(expected, actual):
    """APPS's cascade (eval/testing_util.py run_test, stdin branch), in its order."""
    out = actual.splitlines()  # what APPS captures: the printed lines
    if "\\n".join(out).strip() == expected.strip():  # custom_compare_
        return True
    if "\\n".join(line.strip() for line in out).strip() == expected.strip():
        return True
    if out == [expected]:
        return True
    want = [line.strip() for line in expected.split("\\n") if line]
    if out == want:
        return True
    out = [line for line in out if line]
    if out == want or _close(out, want):  # each line one number, within numpy.allclose
        return True
    want_sets = [set(line.split()) for line in want]
    out_sets = [set(line.split()) for line in out if line.split()]
    if {frozenset(s) for s in out_sets} == {frozenset(s) for s in want_sets}:
        return True  # the same lines as sets of tokens, in any order
    try:
        return _rounded(out_sets) == _rounded(want_sets)  # the same, numbers rounded to 3 places
    except (TypeError, ValueError, OverflowError):
        return False
'''


def is_apps(record: dict[str, Any]) -> bool:
    """Whether a record has the APPS schema's distinguishing keys."""
    return record.keys() >= KEYS


def _joined(value: Any) -> str:
    return "\n".join(str(v) for v in value) if isinstance(value, list) else str(value)


def _arguments(value: Any) -> list[Any]:
    """A call's arguments; a leading dict's keys back to ints where they all are (as APPS does)."""
    args = list(value) if isinstance(value, list) else [value]
    if args and isinstance(args[0], dict):
        with contextlib.suppress(TypeError, ValueError):
            args[0] = {int(key): item for key, item in args[0].items()}
    return args


def _suite(io: dict[str, Any], starter_code: str) -> dict[str, Any]:
    inputs, outputs = sequence(io.get("inputs")), sequence(io.get("outputs"))
    if len(inputs) != len(outputs):
        raise LoaderError(f"{len(inputs)} inputs but {len(outputs)} outputs")
    fn_name = io.get("fn_name")
    if not fn_name:
        cases = [{"input": _joined(i), "output": _joined(o)} for i, o in zip(inputs, outputs, strict=True)]
        return {"mode": "stdio", "cases": cases, "evaluator": EVALUATOR, "program": "apps"}
    entry = f"Solution.{fn_name}" if _SOLUTION_CLASS.search(starter_code) else str(fn_name)
    calls = [{"args": _arguments(i), "expected": o} for i, o in zip(inputs, outputs, strict=True)]
    return {"mode": "call", "entry_point": entry, "cases": calls, "compare": "apps"}


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
