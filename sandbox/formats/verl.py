"""verl / APPS / TACO ground truth, read into a rewardkit suite.

``{"inputs": [...], "outputs": [...]}``
and, for call-based problems, ``"fn_name"`` (verl
``verl/utils/reward_score/prime_code/testing_util.py`` ``run_test`` and
``sandbox_fusion/utils.py`` ``check_correctness``; the APPS dataset's
``input_output``).  Without ``fn_name`` it is a ``stdio`` suite: an input or
output given as a list of lines is joined with newlines, as ``run_test``
does, and a Python program runs as ``run_test`` runs it, as the body of a
function (``program: "apps"``: a top-level ``return`` ends it, ``exit()``
after the answer is no failure).  With it, a ``call`` suite whose entry point is ``fn_name``: an input
given as a string holds one JSON value per line, the arguments (verl's
``[json.loads(line) for line in inputs.split("\\n")]``); an input given as a
list is the argument list (APPS's raw data); an output given as a string
is JSON-decoded (kept as the string when it is not JSON, where verl's
``json.loads`` would fail the case), and a one-element list is unwrapped.

Where the judging differs from theirs:

* verl stdio (``run_test``): compares line by line after stripping each line,
  ignores blank lines, and accepts outputs whose lines are all numbers equal
  within ``numpy.allclose`` (rtol 1e-5, atol 1e-8) unless every pair is two
  digit strings.  The converted suite carries :data:`VERL_EVALUATOR`, which
  does the same for expected lines that are floats; an expected integer line
  (digits, with a sign or not) is met by the same text only, where verl would
  take ``123.0``, ``123.0004`` or ``-5.00001`` for it (a policy prints a float
  near the answer).  verl's last fallback (token sets) never takes effect in
  its code, so it is not reproduced.
  verl's Sandbox Fusion path is stricter (equal after removing trailing
  newlines); we follow the default path (``prime_code``).
* verl call-based: verl accepts ``output == expected`` *or* ``output ==
  expected[0]``; a call case has one expected value, so a one-element list is
  unwrapped (a function whose true answer is a one-element list, given
  unwrapped, is read wrongly), as :mod:`rewardkit.benchmarks.loaders.apps`
  does.  ``fn_name`` names a method of the code's ``Solution`` class when it
  defines one, else a top-level function; verl takes ``Solution`` whenever the
  text ``class Solution`` appears, so a program holding both fails there.
  verl turns dict keys back into ints ("JSON forces string keys"); we do not.
  A float expectation is met within 1e-6 here (:func:`~.judge.values_equal`), exactly in
  verl; an int expectation by an equal int only (verl's ``==`` takes ``3.0`` for ``3``).
* Sandbox Fusion's ``assert_case`` (asserts appended to the program) is not read.
"""

from __future__ import annotations

import json
from typing import Any

from ..suite import SuiteError

# verl prime_code's stdio leniency (see the module docstring), as a suite evaluator.
VERL_EVALUATOR = '''def _lines(text):
    return [line.strip() for line in text.splitlines() if line.strip()]


def _number(line):
    try:
        return float(line)
    except ValueError:
        return None


def _integer(line):
    return line.lstrip("+-").isdigit()


def _close(want, got):
    """A line of the expected output against the printed one: an integer is met by the same text
    only; a float by any number within numpy.allclose of it."""
    if _integer(want):
        return got == want
    a, b = _number(got), _number(want)
    return abs(a - b) <= 1e-8 + 1e-5 * abs(b)


def evaluate(expected, actual):
    """verl prime_code: stripped non-blank lines equal, or all lines numbers, each float within
    allclose of the expected one and each integer the expected one."""
    want, got = _lines(expected), _lines(actual)
    if want == got:
        return True
    if len(want) != len(got) or any(_number(line) is None for line in want + got):
        return False
    return all(_close(w, g) for w, g in zip(want, got))
'''


# -- verl / APPS ---------------------------------------------------------------------------
def suite(data: dict[str, Any]) -> dict[str, Any]:
    if "assert_case" in data:
        raise SuiteError("Sandbox Fusion 'assert_case' tests are not supported; give 'inputs' and "
                         "'outputs' (or a rewardkit suite)")
    inputs, outputs = data.get("inputs"), data.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise SuiteError("verl-style tests need 'inputs' and 'outputs', both lists")
    if len(inputs) != len(outputs):
        raise SuiteError(f"verl-style tests have {len(inputs)} inputs but {len(outputs)} outputs")
    if not inputs:
        raise SuiteError("verl-style tests need at least one input/output pair")
    fn_name = data.get("fn_name")
    if fn_name is None:
        cases = [{"input": _joined(i), "output": _joined(o)} for i, o in zip(inputs, outputs, strict=True)]
        return {"mode": "stdio", "cases": cases, "evaluator": VERL_EVALUATOR, "program": "apps"}
    if not isinstance(fn_name, str) or not fn_name.isidentifier():
        raise SuiteError(f"verl-style 'fn_name' must name a function, got {fn_name!r}")
    calls = [{"args": _arguments(index, i), "expected": _expected(o)}
             for index, (i, o) in enumerate(zip(inputs, outputs, strict=True))]
    return {"mode": "call", "entry_point": fn_name, "cases": calls}


def _joined(value: Any) -> str:
    return "\n".join(str(line) for line in value) if isinstance(value, list) else str(value)


def _arguments(index: int, value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        return [value]
    try:
        return [json.loads(line) for line in value.split("\n")]
    except json.JSONDecodeError as exc:
        raise SuiteError(f"verl-style input {index} is not one JSON value per line: {exc}") from exc


def _expected(value: Any) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return value
    return value[0] if isinstance(value, list) and len(value) == 1 else value
