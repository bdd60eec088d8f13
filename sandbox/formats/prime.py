"""open-r1 / PrimeIntellect ``verification_info``, read into a rewardkit suite.

``{"language": ..., "test_cases": [{"input", "output", "type"}]}`` (open-r1
``src/open_r1/rewards.py`` ``code_reward``; the schema of its README, from
PrimeIntellect's SYNTHETIC-1): a ``stdio`` suite; ``language`` travels in the
suite's ``extra`` for the engine and the scorer to use when no ``language``
column is given.  Only ``type`` ``"stdin_stdout"`` (or none) is accepted:
open-r1 runs every case as a program on stdin.

Where the judging differs: open-r1 strips the whole output, then compares the
lines that ``zip`` pairs (a missing last line passes) after stripping each; a
non-zero exit fails.  Here outputs compare modulo trailing whitespace on each
line and at the end (:func:`~rewardkit.sandbox.judge.normalize_output`):
leading spaces and missing lines count.
"""

from __future__ import annotations

from typing import Any

from ..suite import SuiteError

OPEN_R1_TYPES = ("stdin_stdout",)


def suite(data: dict[str, Any]) -> dict[str, Any]:
    """The rewardkit suite dict of a ``verification_info`` value."""
    raw = data.get("test_cases")
    if not isinstance(raw, list) or not raw:
        raise SuiteError("verification_info needs 'test_cases', a non-empty list")
    cases = []
    for index, case in enumerate(raw):
        if not isinstance(case, dict) or "input" not in case or "output" not in case:
            raise SuiteError(f"verification_info test case {index} needs 'input' and 'output'")
        kind = case.get("type", "stdin_stdout")
        if kind not in OPEN_R1_TYPES:
            raise SuiteError(f"verification_info test case {index} has type {kind!r}; only "
                             f"{', '.join(OPEN_R1_TYPES)} is supported")
        cases.append({"input": str(case["input"]), "output": str(case["output"])})
    out: dict[str, Any] = {"mode": "stdio", "cases": cases}
    if data.get("language"):
        out["language"] = str(data["language"])
    return out
