"""PrimeIntellect / open-r1 ``verification_info``, read into a rewardkit suite.

``{"language": ..., "test_cases": [{"type", "input", "output", "fn_name"?}]}``
(PrimeIntellect's verifiable-coding-problems and SYNTHETIC-1, judged by
``genesys/verifiers/code_test_verifier.py``; open-r1 ``src/open_r1/rewards.py``
``code_reward``).  ``language`` travels in the suite's ``extra`` for the
engine and the scorer to use when no ``language`` column is given.

* ``type`` ``"stdin_stdout"`` (or none): a ``stdio`` suite.
* ``type`` ``"function_call"``: a ``call`` suite whose entry point is the
  cases' ``fn_name`` (a method of a class of the code when one defines it,
  else a top-level function, as genesys resolves it), ``input`` the argument
  list and ``output`` the expected value, a one-element list unwrapped (the
  APPS convention these rows keep: ``"output": [3]`` for a function returning
  3).  A row mixing the two types, or naming several functions, is refused.

Where the judging differs:

* stdio: genesys strips the output and each of its lines, then compares;
  open-r1 compares only the lines that ``zip`` pairs (a missing last line
  passes); a non-zero exit fails in both.  Here outputs compare modulo
  trailing whitespace on each line and at the end
  (:func:`~rewardkit.sandbox.judge.normalize_output`): leading spaces and
  missing lines count.
* function_call: genesys prints the result and compares that text with
  ``str(output)``, so a list-wrapped ``output`` (``[3]``) fails every right
  answer (``3``); rLLM's ``primeintellect_check_correctness`` takes the
  result equal to ``output`` or to ``output[0]``.  Here the values are
  compared (:func:`~rewardkit.sandbox.judge.values_equal`: a float within
  1e-6) with the one-element list unwrapped, so a function whose true answer
  is a one-element list must return it wrapped twice in the data.  genesys
  calls a method of whichever class defines it; here only ``Solution`` and
  top-level functions are looked up.
"""

from __future__ import annotations

from typing import Any

from ..suite import SuiteError

TYPES = ("stdin_stdout", "function_call")


def suite(data: dict[str, Any]) -> dict[str, Any]:
    """The rewardkit suite dict of a ``verification_info`` value."""
    raw = data.get("test_cases")
    if not isinstance(raw, list) or not raw:
        raise SuiteError("verification_info needs 'test_cases', a non-empty list")
    kinds = set()
    for index, case in enumerate(raw):
        if not isinstance(case, dict) or "input" not in case or "output" not in case:
            raise SuiteError(f"verification_info test case {index} needs 'input' and 'output'")
        kinds.add(case.get("type") or "stdin_stdout")
        if not kinds <= set(TYPES):
            raise SuiteError(f"verification_info test case {index} has type {case.get('type')!r}; "
                             f"known: {', '.join(TYPES)}")
    if len(kinds) > 1:
        raise SuiteError("verification_info mixes stdin_stdout and function_call test cases")
    out: dict[str, Any] = _calls(raw) if kinds == {"function_call"} else \
        {"mode": "stdio", "cases": [{"input": str(c["input"]), "output": str(c["output"])} for c in raw]}
    if data.get("language"):
        out["language"] = str(data["language"])
    return out


def _calls(raw: list[dict[str, Any]]) -> dict[str, Any]:
    names = {case.get("fn_name") for case in raw}
    name = names.pop() if len(names) == 1 else None
    if not isinstance(name, str) or not name.isidentifier():
        raise SuiteError("verification_info 'function_call' cases need one 'fn_name', a function's "
                         f"name, got {sorted(map(repr, names | {name}))}")
    cases = [{"args": c["input"] if isinstance(c["input"], list) else [c["input"]],
              "expected": c["output"][0] if isinstance(c["output"], list) and len(c["output"]) == 1
              else c["output"]} for c in raw]
    return {"mode": "call", "entry_point": name, "cases": cases}
