"""LiveCodeBench and DeepCoder rows judged by LCB's ``testing_util`` and by rewardkit, side by side.

LCB's harness is not on PyPI itself: skyrl-gym's wheel ships ``lcb_runner/evaluation/
testing_util.py`` as rLLM adapted it for DeepCoder (``skyrl_gym/envs/lcb/livecodebench.py``),
which ``make .cache/lcb/.stamp`` installs alone (``LCB_PATH`` names another folder holding it).
It runs in a child process of its own, as LCB runs it (its ``reliability_guard`` disables much
of the process).  rLLM judges DeepCoder's test lists with this same file, so each corpus row is
read both as a LiveCodeBench row and as a DeepCoder ``tests`` list.  The verdicts (every case passed;
rewardkit's pass rate 1.0) agree on every completion but :data:`DELIBERATE`, the differences
``rewardkit.sandbox.formats.livecodebench`` lists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from rewardkit.rewards.extract import extract_code
from rewardkit.sandbox import Limits, Sandbox, formats

LCB = Path(os.environ.get("LCB_PATH", Path(__file__).resolve().parents[2] / ".cache" / "lcb"))
TIMEOUT_S = 2  # both harnesses; the corpus's endless loops spend it, the rest take milliseconds
LIMITS = Limits(time_s=TIMEOUT_S)

# The child: LCB's run_test on the JSON sample and program read from stdin; prints each verdict.
# numpy and pandas are loaded first: the harness's solutions import them after reliability_guard
# has disabled os.putenv, which works where rLLM runs it, in a process forked from a trainer
# that has them loaded already.
CHILD = '''import importlib.util, json, sys
import numpy, pandas
spec = importlib.util.spec_from_file_location("testing_util", sys.argv[1])
util = importlib.util.module_from_spec(spec)
spec.loader.exec_module(util)
given = json.load(sys.stdin)
results, _ = util.run_test(given["sample"], test=given["program"], timeout=int(sys.argv[2]))
print(json.dumps([result is True or type(result).__name__ == "bool_" and bool(result)
                  for result in results]))
'''

DOUBLE = [("2", "4"), ("5", "10")]
HALF = [("5", "2.5"), ("7", "3.5")]
CALL = [("2", "4"), ("5", "10")]  # functional: one JSON argument per line, a JSON value

# id -> (testtype, cases, program)
CORPUS: dict[str, tuple[str, list[tuple[str, str]], str]] = {
    "right": ("stdin", DOUBLE, "n = int(input())\nprint(n * 2)\n"),
    "wrong": ("stdin", DOUBLE, "n = int(input())\nprint(n * 3)\n"),
    "crash": ("stdin", DOUBLE, "raise ValueError('no')\n"),
    "timeout": ("stdin", DOUBLE, "while True:\n    pass\n"),
    "stdin read": ("stdin", DOUBLE, "import sys\nprint(int(sys.stdin.read()) * 2)\n"),
    "trailing spaces": ("stdin", DOUBLE, "n = int(input())\nprint(n * 2, end='   \\n\\n')\n"),
    "leading spaces": ("stdin", DOUBLE, "n = int(input())\nprint('  ', n * 2)\n"),
    "extra line": ("stdin", DOUBLE, "n = int(input())\nprint(n * 2)\nprint('done')\n"),
    "float for int": ("stdin", DOUBLE, "n = int(input())\nprint(float(n * 2))\n"),
    "main guard": ("stdin", DOUBLE, "def main():\n    print(int(input()) * 2)\n\n"
                                    "if __name__ == '__main__':\n    main()\n"),
    "sys.exit(0) after the answer": ("stdin", DOUBLE, "import sys\nprint(int(input()) * 2)\nsys.exit(0)\n"),
    "float exact": ("stdin", HALF, "n = int(input())\nprint(n / 2)\n"),
    "float trailing zeros": ("stdin", HALF, "n = int(input())\nprint(f'{n / 2:.4f}')\n"),
    "float close": ("stdin", HALF, "n = int(input())\nprint(n / 2 + 1e-9)\n"),
    "math without import": ("stdin", DOUBLE, "print(floor(int(input()) * 2.0))\n"),
    "call Solution method": ("functional", CALL,
                             "class Solution:\n    def double(self, n: int) -> int:\n        return n * 2\n"),
    "call wrong": ("functional", CALL, "class Solution:\n    def double(self, n):\n        return n + 2\n"),
    "call crash": ("functional", CALL, "class Solution:\n    def double(self, n):\n        return 1 // 0\n"),
    "call timeout": ("functional", CALL,
                     "class Solution:\n    def double(self, n):\n        while True:\n            pass\n"),
    "call float for int": ("functional", CALL,
                           "class Solution:\n    def double(self, n):\n        return n * 2.0\n"),
    "call top-level function": ("functional", CALL, "def double(n):\n    return n * 2\n"),
    "call tuple for list": ("functional", [("[1, 2]", "[2, 4]")],
                            "class Solution:\n    def double(self, xs):\n"
                            "        return tuple(x * 2 for x in xs)\n"),
    "call List annotation without import": ("functional", [("[1, 2]", "[2, 4]")],
                                            "class Solution:\n    def double(self, xs: List[int]) -> "
                                            "List[int]:\n        return [x * 2 for x in xs]\n"),
    "call helper class and function": ("functional", CALL,
                                       "class Solution:\n    pass\n\ndef double(n):\n    return n * 2\n"),
}
# (LCB's verdict, rewardkit's) where they differ, as rewardkit.sandbox.formats.livecodebench says why.
DELIBERATE = {
    "call float for int": (True, False),  # an int expectation is met by an int only
    "call helper class and function": (False, True),  # LCB takes Solution on its text
    "math without import": (True, False),  # LCB's star-imports are in scope there, not here
}


def _testing_util() -> Path:
    path = LCB / "skyrl_gym" / "envs" / "lcb" / "livecodebench.py"
    if not path.exists():
        pytest.skip(f"LiveCodeBench's testing_util is not in {LCB} (make .cache/lcb/.stamp)")
    return path


def _tests(testtype: str, cases: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return [{"input": given, "output": wanted, "testtype": testtype} for given, wanted in cases]


def _lcb_verdict(util: Path, testtype: str, cases: list[tuple[str, str]], program: str) -> bool:
    sample = {"input_output": json.dumps({"inputs": [c[0] for c in cases], "outputs": [c[1] for c in cases],
                                          "fn_name": "double" if testtype == "functional" else None})}
    done = subprocess.run([sys.executable, "-c", CHILD, str(util), str(TIMEOUT_S)], check=False,
                          input=json.dumps({"sample": sample, "program": program}), capture_output=True,
                          text=True, timeout=60)
    lines = done.stdout.strip().splitlines()
    verdicts = json.loads(lines[-1]) if done.returncode == 0 and lines else []
    return len(verdicts) == len(cases) and all(verdicts)


def _rewardkit_verdicts(sandbox: Sandbox, testtype: str, cases: list[tuple[str, str]],
                        program: str) -> tuple[bool, bool]:
    """rewardkit's verdict on the case list as a LiveCodeBench row and as a DeepCoder row."""
    metadata = json.dumps({"func_name": "double"} if testtype == "functional" else {})
    tests = _tests(testtype, cases)
    lcb = formats.read({"public_test_cases": json.dumps(tests[:1]),
                        "private_test_cases": json.dumps(tests[1:]), "metadata": metadata})
    deepcoder = formats.read({"tests": json.dumps(tests), "metadata": metadata})
    code = extract_code(f"```python\n{program}```", "python")
    assert code is not None and lcb.suite.to_dict() == deepcoder.suite.to_dict()
    verdict = sandbox.run(code, lcb.suite, "python", LIMITS).pass_rate == 1.0
    return verdict, verdict


def test_lcb_and_rewardkit_agree_on_the_corpus(sandbox: Sandbox) -> None:
    util = _testing_util()
    with ThreadPoolExecutor(8) as pool:
        theirs = list(pool.map(lambda item: _lcb_verdict(util, *item), CORPUS.values()))
        ours = list(pool.map(lambda item: _rewardkit_verdicts(sandbox, *item)[0], CORPUS.values()))
    verdicts = {name: (t, o) for name, t, o in zip(CORPUS, theirs, ours, strict=True)}
    differ = {name: verdict for name, verdict in verdicts.items() if verdict[0] != verdict[1]}
    assert differ == DELIBERATE, verdicts
