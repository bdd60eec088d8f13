"""APPS / TACO ``input_output`` rows judged by verl's ``prime_code`` and by rewardkit, side by side.

``prime_code`` (APPS's ``testing_util``, as verl ships it) is loaded from the verl wheel
unpacked in ``.cache/verl`` (``make .cache/verl/.stamp``; ``VERL_PATH`` names another
folder), without verl's ``__init__``.  Its verdict (``compute_score``'s first pass: every
case passed) and rewardkit's (the row read through the format registry, pass rate 1.0)
agree on every completion of the corpus but :data:`DELIBERATE`, the differences
``rewardkit.sandbox.formats.verl`` and ``.taco`` list.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import pytest

from rewardkit.rewards.extract import extract_code
from rewardkit.sandbox import Limits, Sandbox, formats

VERL = Path(os.environ.get("VERL_PATH", Path(__file__).resolve().parents[2] / ".cache" / "verl"))
PRIME_CODE = VERL / "verl" / "utils" / "reward_score" / "prime_code"
TIMEOUT_S = 2  # both harnesses; the corpus's endless loops spend it, the rest take milliseconds
LIMITS = Limits(time_s=TIMEOUT_S)

DOUBLE = {"inputs": ["2\n", "5\n"], "outputs": ["4\n", "10\n"]}
HALF = {"inputs": ["5\n", "7\n"], "outputs": ["2.5\n", "3.5\n"]}
CALL = {"inputs": ["2", "5"], "outputs": ["4", "10"], "fn_name": "double"}  # verl: JSON lines

# id -> (tests, program)
CORPUS: dict[str, tuple[dict[str, object], str]] = {
    "right": (DOUBLE, "n = int(input())\nprint(n * 2)\n"),
    "wrong": (DOUBLE, "n = int(input())\nprint(n * 3)\n"),
    "crash": (DOUBLE, "raise ValueError('no')\n"),
    "timeout": (DOUBLE, "while True:\n    pass\n"),
    "stdin read": (DOUBLE, "import sys\nprint(int(sys.stdin.read()) * 2)\n"),
    "trailing spaces": (DOUBLE, "n = int(input())\nprint(n * 2, end='   \\n\\n')\n"),
    "leading spaces": (DOUBLE, "n = int(input())\nprint('  ', n * 2)\n"),
    "no final newline": (DOUBLE, "n = int(input())\nprint(n * 2, end='')\n"),
    "extra line": (DOUBLE, "n = int(input())\nprint(n * 2)\nprint('done')\n"),
    "float for int": (DOUBLE, "n = int(input())\nprint(float(n * 2))\n"),
    "exit(0) after the answer": (DOUBLE, "n = int(input())\nprint(n * 2)\nexit(0)\n"),
    "exit(1) after the answer": (DOUBLE, "n = int(input())\nprint(n * 2)\nexit(1)\n"),
    "sys.exit(0) after the answer": (DOUBLE, "import sys\nprint(int(input()) * 2)\nsys.exit(0)\n"),
    "top-level return": (DOUBLE, "n = int(input())\nprint(n * 2)\nif n:\n    return\nprint('more')\n"),
    "main guard": (DOUBLE, "def main():\n    print(int(input()) * 2)\n\nif __name__ == '__main__':\n"
                           "    main()\n"),
    "float close": (HALF, "n = int(input())\nprint(n / 2 + 1e-7)\n"),
    "float far": (HALF, "n = int(input())\nprint(n / 2 + 0.01)\n"),
    "float exact": (HALF, "n = int(input())\nprint(n / 2)\n"),
    "call right": (CALL, "def double(n):\n    return n * 2\n"),
    "call Solution method": (CALL, "class Solution:\n    def double(self, n):\n        return n * 2\n"),
    "call wrong": (CALL, "def double(n):\n    return n + 2\n"),
    "call crash": (CALL, "def double(n):\n    raise ValueError(n)\n"),
    "call timeout": (CALL, "def double(n):\n    while True:\n        pass\n"),
    "call float for int": (CALL, "def double(n):\n    return n * 2.0\n"),
    "call list wrapped": (CALL, "def double(n):\n    return [n * 2]\n"),
    "call helper class and function": (CALL, "class Solution:\n    pass\n\ndef double(n):\n"
                                             "    return n * 2\n"),
}
# (prime_code's verdict, rewardkit's) where they differ, as rewardkit.sandbox.formats.verl and
# .taco say why.
DELIBERATE = {
    "float for int": (True, False),  # an expected integer line is met by the same text only
    "call float for int": (True, False),  # an int expectation is met by an equal int only
    "exit(0) after the answer": (False, True),  # prime_code's guard sets builtins.exit to None
    "exit(1) after the answer": (False, True),
    "call helper class and function": (False, True),  # prime_code takes Solution on its text
}


def _prime_code() -> ModuleType:
    if not (PRIME_CODE / "__init__.py").exists():
        pytest.skip(f"the verl wheel is not unpacked in {VERL} (make .cache/verl/.stamp)")
    spec = importlib.util.spec_from_file_location("prime_code", PRIME_CODE / "__init__.py",
                                                  submodule_search_locations=[str(PRIME_CODE)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["prime_code"] = module
    spec.loader.exec_module(module)
    return module


def _verl_verdict(prime_code: ModuleType, tests: dict[str, object], program: str) -> bool:
    """``compute_score``'s first pass: every case at once, passed when each is True."""
    results, _ = prime_code.apps_check_correctness(in_outs=dict(tests), generation=program,
                                                   timeout=TIMEOUT_S, debug=False)
    return all(result is True for result in results)


def _rewardkit_verdict(sandbox: Sandbox, tests: dict[str, object], program: str) -> bool:
    row = formats.read({"input_output": json.dumps(tests)})
    code = extract_code(f"```python\n{program}```", "python")
    assert code is not None
    return sandbox.run(code, row.suite, "python", LIMITS).pass_rate == 1.0


def test_prime_code_and_rewardkit_agree_on_the_corpus(sandbox: Sandbox) -> None:
    prime_code = _prime_code()
    with ThreadPoolExecutor(8) as pool:
        theirs = list(pool.map(lambda item: _verl_verdict(prime_code, *item), CORPUS.values()))
        ours = list(pool.map(lambda item: _rewardkit_verdict(sandbox, *item), CORPUS.values()))
    verdicts = {name: (t, o) for name, t, o in zip(CORPUS, theirs, ours, strict=True)}
    differ = {name: verdict for name, verdict in verdicts.items() if verdict[0] != verdict[1]}
    assert differ == DELIBERATE, verdicts
