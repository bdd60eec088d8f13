"""Integers of any size cross the protocol (call and script mode) and print in stdio mode.

Python refuses ``str(int)`` past 4,300 digits; values cross in hexadecimal
(linear both ways) and the solution's own process has no digit limit.
"""

from __future__ import annotations

import json

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite
from rewardkit.sandbox.runtime import protocol

BIG = 10**5000


@pytest.mark.parametrize("sign", [1, -1])
def test_call_mode_returns_a_5000_digit_answer(sandbox: Sandbox, sign: int) -> None:
    suite = TestSuite.from_dict({"mode": "call", "entry_point": "power",
                                 "cases": [{"args": [sign, 5000], "expected": sign * BIG}]})
    assert sandbox.run("def power(s, n):\n    return s * 10**n\n", suite).passed
    wrong = sandbox.run("def power(s, n):\n    return s * 10**n + 1\n", suite)
    assert wrong.status == Status.WRONG_ANSWER and "digits" in wrong.feedback


def test_big_arguments_and_suites_round_trip_through_json(sandbox: Sandbox) -> None:
    suite = TestSuite.from_dict({"mode": "call", "entry_point": "half",
                                 "cases": [{"args": [2 * BIG], "expected": BIG}]})
    again = TestSuite.from_dict(json.dumps(suite.to_dict()))
    assert again.cases == suite.cases
    assert sandbox.run("def half(n):\n    return n // 2\n", again).passed
    with pytest.raises(ValueError, match="encoded"):
        TestSuite.from_dict('{"mode": "call", "entry_point": "f", "cases": [{"args": [], "expected": '
                            + "7" * 5000 + "}]}")


def test_script_mode_check_compares_a_big_value(sandbox: Sandbox) -> None:
    suite = TestSuite.from_dict({"mode": "script", "entry_point": "factorial", "check":
                                 "import math\ndef check(candidate):\n"
                                 "    assert candidate(2000) == math.factorial(2000)\n"})
    code = "import math\ndef factorial(n):\n    return math.factorial(n)\n"
    assert sandbox.run(code, suite).passed
    assert sandbox.run(code.replace("(n)\n", "(n) + 1\n"), suite).status == Status.WRONG_ANSWER


def test_stdio_program_prints_a_big_number(sandbox: Sandbox) -> None:
    suite = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "5000\n", "output": "1" + "0" * 5000}]})
    assert sandbox.run("print(10 ** int(input()))\n", suite).passed


def test_a_million_digits_fits_or_fails_cleanly(sandbox: Sandbox) -> None:
    suite = TestSuite.from_dict({"mode": "call", "entry_point": "huge",
                                 "cases": [{"args": [], "expected": 0}]})
    small = sandbox.run("def huge():\n    return 10**1_000_000\n", suite, limits=Limits(output_kb=64))
    assert small.status == Status.OUTPUT_EXCEEDED and small.wall_s < 30
    roomy = sandbox.run("def huge():\n    return 10**1_000_000\n", suite, limits=Limits(output_kb=4096))
    assert roomy.status == Status.WRONG_ANSWER and "digits" in roomy.feedback
    assert roomy.wall_s < 30


def test_codec_is_hexadecimal_and_reads_the_older_decimal_form() -> None:
    assert protocol.encode_value(-BIG) == {"int": hex(-BIG)}
    assert protocol.decode_value(protocol.encode_value([BIG, -BIG])) == [BIG, -BIG]
    assert protocol.decode_value({"int": "12345678901234567890"}) == 12345678901234567890
    assert "digits" in protocol.value_repr([BIG]) and len(protocol.value_repr([BIG])) < 200
