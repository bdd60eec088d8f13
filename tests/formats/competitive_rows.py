"""One row per competitive-programming format, as each project ships it, with a right and a wrong answer.

Shapes from each project's source: PrimeIntellect genesys
``src/genesys/verifiers/code_test_verifier.py`` (verification_info), rLLM
``cookbooks/deepcoder/prepare_deepcoder_data.py`` and
``rllm/rewards/code_reward.py`` (DeepCoder tests / ground_truth), LiveCodeBench
``lcb_runner/benchmarks/code_generation.py`` (public/private test cases,
metadata), deepmind/code_contests' dataset fields, and the APPS / TACO
``input_output`` column.
"""

from __future__ import annotations

import base64
import json
import pickle
import zlib
from typing import Any

STDIO_RIGHT = "```python\nn = int(input())\nprint(n * 2)\n```"
STDIO_WRONG = "```python\nn = int(input())\nprint(n * 3)\n```"
CALL_RIGHT = "```python\nclass Solution:\n    def double(self, n: int) -> int:\n        return n * 2\n```"
CALL_WRONG = "```python\ndef double(n):\n    return n + 1\n```"


def lcb_compressed(tests: list[dict[str, Any]]) -> str:
    """LiveCodeBench's private_test_cases encoding: base64(zlib(pickle(json)))."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()


def _stdin(pairs: list[tuple[int, int]], kind: str = "stdin") -> list[dict[str, Any]]:
    return [{"input": f"{n}\n", "output": f"{m}\n", "testtype": kind} for n, m in pairs]


ROWS: dict[str, tuple[dict[str, Any], bool]] = {  # name: (row, functional)
    "verification_info stdin_stdout": ({"verification_info": json.dumps({
        "language": "python", "test_cases": [{"type": "stdin_stdout", "input": "2\n", "output": "4\n"},
                                             {"type": "stdin_stdout", "input": "5\n", "output": "10\n"}]})},
        False),
    "verification_info function_call": ({"verification_info": json.dumps({
        "language": "python", "test_cases": [
            {"type": "function_call", "fn_name": "double", "input": [2], "output": [4]},
            {"type": "function_call", "fn_name": "double", "input": [5], "output": [10]}]})}, True),
    "deepcoder tests": ({"tests": json.dumps(_stdin([(2, 4), (5, 10)])), "metadata": "{}"}, False),
    "rllm ground_truth functional": ({"ground_truth": json.dumps([
        {"input": "2", "output": "4", "testtype": "functional", "metadata": {"func_name": "double"}},
        {"input": "5", "output": "10", "testtype": "functional", "metadata": {"func_name": "double"}}])},
        True),
    "livecodebench stdin": ({"public_test_cases": json.dumps(_stdin([(2, 4)])),
                             "private_test_cases": lcb_compressed(_stdin([(5, 10)])),
                             "starter_code": "", "metadata": "{}"}, False),
    "livecodebench functional": ({"public_test_cases": json.dumps(
        [{"input": "2", "output": "4", "testtype": "functional"}]),
        "private_test_cases": json.dumps([{"input": "5", "output": "10", "testtype": "functional"}]),
        "starter_code": "class Solution:\n    def double(self, n: int) -> int:\n        ",
        "metadata": json.dumps({"func_name": "double"})}, True),
    "code_contests": ({"public_tests": {"input": ["2\n"], "output": ["4\n"]},
                       "private_tests": {"input": ["5\n"], "output": ["10\n"]},
                       "generated_tests": {"input": ["7\n"], "output": ["14\n"]}}, False),
    "apps input_output": ({"input_output": json.dumps({"inputs": ["2\n", "5\n"],
                                                       "outputs": ["4\n", "10\n"]})}, False),
    "taco input_output fn_name": ({"input_output": json.dumps({"inputs": [[2], [5]], "outputs": [[4], [10]],
                                                               "fn_name": "double"})}, True),
}
