"""KodCode rows judged by KodCode's harness and by rewardkit, side by side.

KodCode's harness (``pipeline/run_test.sh`` in KodCode-AI/kodcode) writes ``solution.py`` and
``test_solution.py`` into a folder and runs ``pytest --rootdir=.`` there under a timeout; the
row passes when pytest exits with 0.  It is a shell script, so it is run here as it runs
(pytest's command line in a fresh folder, without ``--cov``: coverage is not part of its
verdict).  rewardkit reads each row through the format registry and runs its ``pytest``
suite; a row passes when every test passed.  Every completion of the corpus gets the same
verdict from both, except :data:`DELIBERATE`: the differences ``rewardkit.sandbox.formats.kodcode``
lists, where rewardkit fails what KodCode passes.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from rewardkit.sandbox import Limits, Sandbox, formats

TIMEOUT_S = 3.0
Verdicts = list[tuple[str, bool, float, bool]]  # what the completion tries, ours, our pass rate, KodCode's

ROWS: dict[str, dict[str, Any]] = {
    "sum": {"question": "Write a function sum_list(xs) that returns the sum of a list of numbers.",
            "solution": "def sum_list(xs):\n    return sum(xs)\n",
            "test_info": [{"function_name": "sum_list", "parameter_list": "(xs)"}],
            "test": "from solution import sum_list\n\n\ndef test_empty():\n    assert sum_list([]) == 0\n\n\n"
                    "def test_numbers():\n    assert sum_list([1, 2, 3]) == 6\n\n\n"
                    "def test_floats():\n    assert abs(sum_list([0.1, 0.2]) - 0.3) < 1e-9\n"},
    "stack": {"question": "Implement a class Stack with push, pop and is_empty; pop on an empty stack "
                          "raises IndexError.",
              "solution": "", "test_info": [{"function_name": "Stack", "parameter_list": "()"}],
              "test": "import pytest\nfrom solution import Stack\n\n\nclass TestStack:\n"
                      "    def test_push_pop(self):\n        s = Stack()\n"
                      "        s.push(1)\n        s.push(2)\n"
                      "        assert s.pop() == 2\n        assert s.pop() == 1\n\n"
                      "    def test_empty(self):\n        s = Stack()\n        assert s.is_empty()\n"
                      "        with pytest.raises(IndexError):\n            s.pop()\n"},
    "square": {"question": "Write square(n).", "solution": "def square(n):\n    return n * n\n",
               "test_info": [{"function_name": "square", "parameter_list": "(n)"}],
               "test": "import pytest\nfrom solution import square\n\n\n"
                       "@pytest.mark.parametrize('n, want', [(0, 0), (2, 4), (-3, 9)])\n"
                       "def test_square(n, want):\n    assert square(n) == want\n"},
}
STACK = ("class Stack:\n    def __init__(self):\n        self.items = []\n\n    def push(self, x):\n"
         "        self.items.append(x)\n\n    def pop(self):\n        return self.items.pop()\n\n"
         "    def is_empty(self):\n        return not self.items\n")
# (row, completion, what it tries)
CORPUS: list[tuple[str, str, str]] = [
    ("sum", "def sum_list(xs):\n    return sum(xs)\n", "right"),
    ("sum", "def sum_list(xs):\n    return len(xs)\n", "wrong"),
    ("sum", "def sum_list(xs):\n    raise RuntimeError('no')\n", "crash"),
    ("sum", "def sum_list(xs):\n    while True:\n        pass\n", "timeout"),
    ("sum", "def sum_list(xs):\n    return float(sum(xs))\n", "float for int"),
    ("sum", "\n\n\ndef sum_list(xs):\n\n    return sum(xs)\n\n\n", "whitespace"),
    ("sum", "def sum_list(xs):\n    return sum(xs)\n\nexit(0)\n", "exit(0) after the answer"),
    ("sum", "def sum_list(xs):\n    return 0\n\nimport os\nos._exit(0)\n", "os._exit(0) at import"),
    ("sum", "def sum_list(xs):\n    import sys\n    sys.exit(0)\n", "sys.exit(0) in a test"),
    ("sum", "def total(xs):\n    return sum(xs)\n", "the name is missing"),
    ("sum", "def sum_list(xs)\n    return sum(xs)\n", "syntax error"),
    ("sum", "def sum_list(xs):\n    print('3 passed')\n    return 0\n", "prints a fake summary"),
    ("sum", "def sum_list(xs):\n    return round(sum(xs))\n", "rounds floats"),
    ("sum", "import pytest\n\n\ndef sum_list(xs):\n    pytest.skip('later')\n", "skips its tests"),
    ("stack", STACK, "right class"),
    ("stack", STACK.replace("self.items.pop()", "self.items.pop(0)"), "wrong class"),
    ("stack", STACK.replace("        return self.items.pop()\n",
                            "        return self.items.pop() if self.items else None\n"),
     "no IndexError"),
    ("stack", "class Solution:\n    pass\n", "no class"),
    ("square", "def square(n):\n    return n * n\n", "right, parametrized"),
    ("square", "def square(n):\n    return n * abs(n)\n", "wrong on one parameter"),
    ("square", "def square(n):\n    return n ** 2\n", "right another way"),
    ("square", "def square(n):\n    class E:\n        def __eq__(self, other):\n"
               "            return True\n    return E()\n", "always-equal object"),
]
# rewardkit fails these where KodCode's harness passes them: rewardkit.sandbox.formats.kodcode
# says why (the verdict from the exit code; a skipped test taken for no failure).
DELIBERATE = {"os._exit(0) at import", "skips its tests"}


def _kodcode(row: dict[str, Any], completion: str) -> bool:
    """KodCode's verdict: pytest's exit code in a folder holding solution.py and test_solution.py."""
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "solution.py").write_text(completion, encoding="utf-8")
        Path(folder, "test_solution.py").write_text(row["test"], encoding="utf-8")
        try:
            command = [sys.executable, "-m", "pytest", "--rootdir=.", "-q", "-p", "no:cacheprovider"]
            done = subprocess.run(command, cwd=folder, capture_output=True, timeout=TIMEOUT_S, check=False,
                                  env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1",
                                       "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
        except subprocess.TimeoutExpired:
            return False
        return done.returncode == 0


@pytest.fixture(scope="module")
def verdicts(sandbox: Sandbox) -> Verdicts:
    runs = []
    for name, completion, _ in CORPUS:
        tests = formats.read(ROWS[name])
        assert tests.format == "kodcode" and tests.suite.mode == "pytest"
        runs.append((completion, tests.suite))
    ours = sandbox.run_many(runs, limits=Limits(time_s=TIMEOUT_S))
    with ThreadPoolExecutor(2) as pool:
        theirs = list(pool.map(lambda item: _kodcode(ROWS[item[0]], item[1]), CORPUS))
    return [(what, result.passed, result.pass_rate, their)
            for (_, _, what), result, their in zip(CORPUS, ours, theirs, strict=True)]


def test_the_corpus_is_judged_as_kodcode_judges_it(verdicts: Verdicts) -> None:
    assert len(verdicts) >= 20
    differ = [(what, ours, theirs) for what, ours, _, theirs in verdicts
              if ours != theirs and what not in DELIBERATE]
    assert not differ, differ
    assert sum(theirs for *_, theirs in verdicts) >= 8
    assert all(rate == 1.0 for _, ours, rate, _ in verdicts if ours)


def test_deliberate_differences_fail_here_and_pass_there(verdicts: Verdicts) -> None:
    deliberate = {what: (ours, rate < 1.0, theirs)
                  for what, ours, rate, theirs in verdicts if what in DELIBERATE}
    assert deliberate == dict.fromkeys(DELIBERATE, (False, True, True))


def test_pass_rate_is_passed_over_collected(verdicts: Verdicts) -> None:
    rates = {what: rate for what, _, rate, _ in verdicts}
    assert rates["wrong on one parameter"] == pytest.approx(2 / 3)
    assert rates["rounds floats"] == pytest.approx(2 / 3)
    assert rates["the name is missing"] == 0.0
