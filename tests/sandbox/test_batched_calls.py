"""Call suites sent in batches: many calls per frame, every verdict and limit as with one per frame.

The judge sends a call suite's cases ``calls_per_frame`` at a time (default
:data:`~rewardkit.sandbox.CALLS_PER_FRAME`; ``1`` is the old one call
per frame): each case below is judged both ways and must get the same result.
"""

from __future__ import annotations

import base64
import json
import statistics
import struct
import time
from typing import Any

import pytest

from rewardkit.sandbox import ExecutionResult, Limits, Sandbox, Status, TestSuite
from rewardkit.sandbox.modes.call import CALLS_PER_FRAME
from rewardkit.sandbox.runtime import protocol
from rewardkit.sandbox.runtime.protocol import PACKED_FLOATS, ProtocolError
from rewardkit.sandbox.sandbox import PoolExecutor

QUICK = Limits(time_s=1, memory_mb=512, output_kb=1024)


def suite(cases: list[dict[str, Any]], entry: str = "f", per_frame: int | None = None,
          **extra: Any) -> TestSuite:
    data: dict[str, Any] = {"mode": "call", "entry_point": entry, "cases": cases, **extra}
    if per_frame is not None:
        data["calls_per_frame"] = per_frame
    return TestSuite.from_dict(data)


def both_ways(sandbox: Sandbox, code: str, cases: list[dict[str, Any]], limits: Limits = QUICK,
              **extra: Any) -> ExecutionResult:
    """Run batched and one call per frame; assert the verdicts agree; the batched result."""
    batched = sandbox.run(code, suite(cases, **extra), limits=limits)
    single = sandbox.run(code, suite(cases, per_frame=1, **extra), limits=limits)
    assert (batched.status, batched.tests_passed, batched.failed_case, batched.feedback) == \
        (single.status, single.tests_passed, single.failed_case, single.feedback), (batched, single)
    return batched


SQUARES = [{"args": [i], "expected": i * i} for i in range(600)]


def test_many_cases_pass_across_several_frames(sandbox: Sandbox) -> None:
    result = both_ways(sandbox, "def f(x):\n    return x * x\n", SQUARES)
    assert result.passed and result.tests_passed == 600


def test_wrong_answers_and_errors_count_as_one_per_frame(sandbox: Sandbox) -> None:
    code = ("def f(x):\n    if x % 7 == 3:\n        raise ValueError(x)\n"
            "    return x * x + (x % 11 == 5)\n")
    result = both_ways(sandbox, code, SQUARES)
    assert result.status == Status.RUNTIME_ERROR and result.failed_case == 3
    assert result.tests_passed == sum(1 for i in range(600) if i % 7 != 3 and i % 11 != 5)


def test_a_call_past_its_own_limit_is_a_timeout_inside_a_batch(sandbox: Sandbox) -> None:
    # 20 calls of 1 s each may take 20 s in all; the third alone takes 1.6 s: a timeout
    code = "import time\ndef f(x):\n    if x == 2:\n        time.sleep(1.6)\n    return x * x\n"
    result = both_ways(sandbox, code, SQUARES[:20])
    assert result.status == Status.TIMEOUT and result.tests_passed == 2


def test_a_call_that_never_returns_ends_the_batch_at_its_limit(sandbox: Sandbox) -> None:
    code = "import time\ndef f(x):\n    while x == 5:\n        time.sleep(1)\n    return x * x\n"
    started = time.monotonic()
    result = sandbox.run(code, suite(SQUARES[:100]), limits=QUICK)
    assert result.status == Status.TIMEOUT and result.tests_passed == 5
    assert time.monotonic() - started < 15  # its own limit, not the batch's 100 s


def on_fifth_call(body: str) -> str:
    """A solution that runs ``body`` on its fifth call (``x == 4``) and is right otherwise."""
    return f"import os, signal, sys, time\ndef f(x):\n    if x == 4:\n        {body}\n    return x * x\n"


@pytest.mark.parametrize(("body", "status", "passed"), [
    ("print('out', x); print('err', x, file=sys.stderr)", Status.PASSED, 50),
    ("sys.stdout.write('x' * (2 << 20))", Status.OUTPUT_EXCEEDED, 4),
    ("os._exit(0)", Status.RUNTIME_ERROR, 4),
    ("sys.exit(0)", Status.RUNTIME_ERROR, 49),
    ("[os.kill(p, signal.SIGKILL) for p in (os.getppid(), os.getpid())]", Status.PASSED, 50),
    ("if os.fork() == 0: time.sleep(60)", Status.PASSED, 50),
    ("return 'y' * (2 << 20)", Status.OUTPUT_EXCEEDED, 4),
    ("b = bytearray(1 << 30)", Status.MEMORY_EXCEEDED, 49),
    ("time.sleep(3600)", Status.TIMEOUT, 4),
], ids=["prints", "floods-stdout", "os-exit", "sys-exit", "kills-parent-and-self", "forks",
        "gigantic-value", "memory", "sleeps-forever"])
def test_hostile_calls_inside_a_batch(sandbox: Sandbox, body: str, status: Status, passed: int) -> None:
    result = both_ways(sandbox, on_fifth_call(body), SQUARES[:50])
    assert (result.status, result.tests_passed) == (status, passed), result.feedback
    assert sandbox.run("def f(x):\n    return x * x\n", suite(SQUARES[:50]), limits=QUICK).passed


def test_replies_near_the_output_cap_cross_in_several_frames(sandbox: Sandbox) -> None:
    # 30 values of 600 KiB: each under the 1 MiB cap, 18 MiB in all (over what one reply may carry)
    big = "z" * (600 * 1024)
    result = both_ways(sandbox, "def f(x):\n    return 'z' * (600 * 1024)\n",
                       [{"args": [i], "expected": big} for i in range(30)])
    assert result.passed and result.tests_passed == 30


def test_a_slow_batch_is_answered_in_parts() -> None:
    """The worker answers at least every ``BATCH_REPLY_S`` (5 s), whatever the batch's length,
    so the parent never waits for a reply longer than for one call; 6.4 s come in two parts."""
    code = "import time\ndef f(x):\n    time.sleep(0.4)\n    return x * x\n"
    script = TestSuite.from_dict({"mode": "script", "entry_point": "f", "check": (
        "def check(candidate):\n    answers = candidate.answer_many([[x] for x in range(16)])\n"
        "    assert answers == [('value', x * x) for x in range(16)], answers\n")})
    with Sandbox(workers=1, trust_suites=True) as sb:
        result = sb.run(code, script, limits=Limits(time_s=1))
    assert result.passed, result.feedback


def test_integers_of_any_size_in_a_batch(sandbox: Sandbox) -> None:
    cases = [{"args": [n], "expected": {"int": hex(10 ** (5000 + n))}, "encoded": True} for n in range(40)]
    result = both_ways(sandbox, "def f(n):\n    return 10 ** (5000 + n)\n", cases)
    assert result.passed and result.tests_passed == 40


def test_metering_a_batch_matches_one_call_per_frame(sandbox: Sandbox) -> None:
    """``time_s`` is the module process's CPU time either way: the work dominates, framing does not.

    Seven pairs run back to back, each in the other order from the one before; the median of the
    pairs' ratios, so that a slow spell of the machine that falls on one side of a pair or two
    (up to 2x for a second in CI) does not move it.
    """
    code = "def f(n):\n    x = 0\n    for i in range(n):\n        x += i * i\n    return n\n"
    cases = [{"args": [400_000], "expected": 400_000}] * 12
    ways = {"batched": suite(cases), "single": suite(cases, per_frame=1)}
    ratios = []
    for k in range(7):
        time_s = {way: sandbox.run(code, ways[way], limits=QUICK).time_s
                  for way in sorted(ways, reverse=k % 2 == 1)}  # batched first, then single first
        ratios.append(time_s["batched"] / time_s["single"])
    assert 0.9 < statistics.median(ratios) < 1.1, ratios


@pytest.mark.usefixtures("valgrind_counts")
def test_the_instruction_meter_sends_one_call_per_frame() -> None:
    """How a large frame is read in pieces varies run to run: counts must not, so no batches."""
    code = "def f(x):\n    return x * x\n"
    with Sandbox(workers=1, meter="instructions") as sb:
        first = sb.run(code, suite(SQUARES[:30]), limits=Limits(time_s=2))
        again = sb.run(code, suite(SQUARES[:30]), limits=Limits(time_s=2))
        single = sb.run(code, suite(SQUARES[:30], per_frame=1), limits=Limits(time_s=2))
        wrong = sb.run("def f(x):\n    return x\n", suite(SQUARES[:30]), limits=Limits(time_s=2))
    assert first.passed and first.tests_passed == 30
    assert first.instructions is not None and first.instructions == again.instructions == single.instructions
    assert wrong.status == Status.WRONG_ANSWER and wrong.tests_passed == 2


RECORDING = """def check(candidate):
    answers = candidate.answer_many([[x] for x in range(5, 605)])
    assert [kind for kind, _ in answers] == ["value"] * 600, answers[:3]
    assert [value for _, value in answers] == [x * x for x in range(5, 605)]
    exiting = candidate.answer_many([[-1], [4], [5]])
    assert [kind for kind, _ in exiting] == ["value", "gone"], exiting
"""


def test_a_trusted_check_asks_many_calls_at_once() -> None:
    """``Candidate.answer_many``: what EvalPlus's loader uses to record a reference's outputs."""
    script = TestSuite.from_dict({"mode": "script", "entry_point": "f", "check": RECORDING})
    with Sandbox(workers=1, trust_suites=True) as sb:
        result = sb.run(on_fifth_call("os._exit(0)"), script, limits=QUICK)
    assert result.passed, result.feedback


# -- long lists cross packed --------------------------------------------------------------------------
@pytest.mark.parametrize("value", [
    [1, 3, *(i / 7 for i in range(500)), float("nan"), float("-inf"), -0.0, 2**53 - 1],
    [i / 3 for i in range(PACKED_FLOATS)],
    [1.5] * (PACKED_FLOATS - 1),
    [2**60, *[0.5] * 100],
    ["a", None, True, 2, *[0.25] * 100],
])
def test_long_number_lists_cross_exactly(value: list[Any]) -> None:
    back = protocol.decode_value(json.loads(json.dumps(protocol.encode_value(value))))
    assert [type(item) for item in back] == [type(item) for item in value]
    assert repr(back) == repr(value)  # -0.0, nan and inf as they were


def test_a_float_subclass_in_a_long_list_is_not_plain_data() -> None:
    class Sly(float):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = float.__hash__

    with pytest.raises(protocol.NotPlainData):
        protocol.encode_value([0.5] * 100 + [Sly(1.0)])


@pytest.mark.parametrize("body", [5, ["AAAAAAAAAAA=", "AAAA"], ["AAAAAAAAAAA=", 5], "AAA"])
def test_malformed_packed_numbers_are_refused(body: Any) -> None:
    with pytest.raises((ValueError, protocol.ProtocolError)):
        protocol.decode_value({"f64": body})


def _packed(doubles: list[float], indexes: list[int]) -> dict[str, Any]:
    return {"f64": [base64.b64encode(struct.pack(f"<{len(doubles)}d", *doubles)).decode(),
                    base64.b64encode(struct.pack(f"<{len(indexes)}I", *indexes)).decode()]}


# values of the wrong shape, as a solution's process could forge them: each must be a ProtocolError
MALFORMED = {
    "complex of one part": {"complex": [1]},
    "complex of none": {"complex": []},
    "nested complex": {"tuple": [{"complex": []}]},
    "an int index at infinity": _packed([float("inf")], [0]),
    "an int index past the end": _packed([1.0], [5]),
    "an int index at a fraction": _packed([0.5], [0]),
}


@pytest.mark.parametrize("value", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_values_are_protocol_errors(value: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError):
        protocol.decode_value(value)


FORGES = ("import json, os, struct\n"
          "def f(x):\n"
          "    body = json.dumps({{'ok': True, 'value': {value}}}).encode()\n"
          "    os.write(4, struct.pack('>I', len(body)) + body)\n"
          "    os._exit(0)\n")


@pytest.mark.parametrize("value", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_forged_reply_of_the_wrong_shape_is_the_solutions_fault(sandbox: Sandbox,
                                                                   value: dict[str, Any]) -> None:
    """A solution that writes its own reply frame, with a value no encoder writes, fails as a
    runtime error in call and in script mode, never as the sandbox's error."""
    code = FORGES.format(value=repr(value))
    script = TestSuite.from_dict({"mode": "script", "entry_point": "f",
                                  "check": "def check(candidate):\n    assert candidate(1) == 1\n"})
    for judged in (suite([{"args": [1], "expected": 1}]), script):
        result = sandbox.run(code, judged, limits=QUICK)
        assert result.status == Status.RUNTIME_ERROR, (judged.mode, result.feedback)
        assert "malformed" in result.feedback or "not a whole number" in result.feedback, result.feedback


DEEP = ("import os, struct\n"
        "def f(x):\n"
        "    body = b'{{\"ok\": true, \"value\": ' + b'[' * {n} + b']' * {n} + b'}}'\n"
        "    os.write(4, struct.pack('>I', len(body)) + body)\n"
        "    os._exit(0)\n")


def test_a_forged_reply_nested_near_the_stack_s_depth_is_the_solutions_fault(sandbox: Sandbox) -> None:
    """A reply the worker could parse but this process, deeper in its own stack, could not
    (nested some 980 levels) made the job a sandbox error; the worker now refuses a frame
    nested past ``MAX_NESTING``, whatever this process's depth."""
    script = TestSuite.from_dict({"mode": "script", "entry_point": "f",
                                  "check": "def check(candidate):\n    assert candidate(1) == 1\n"})
    statuses = {sandbox.run(DEEP.format(n=n), judged, limits=QUICK).status
                for n in [protocol.MAX_NESTING, *range(900, 1001, 4)]
                for judged in (suite([{"args": [1], "expected": 1}]), script)}
    assert Status.SANDBOX_ERROR not in statuses and Status.PASSED not in statuses, statuses


def test_mixed_lists_with_many_ints_cross_exactly() -> None:
    """Ints past one in 16 items: their indexes come from one pass over every item."""
    value = [i if i % 3 else i / 4 for i in range(3000)]
    back = protocol.decode_value(json.loads(json.dumps(protocol.encode_value(value))))
    assert [type(item) for item in back] == [type(item) for item in value] and back == value


def test_a_million_floats_returned_by_a_call(sandbox: Sandbox) -> None:
    code = "def f(n):\n    return [1, 3] + [i / 2 for i in range(n)]\n"
    cases = [{"args": [n], "expected": [1, 3] + [i / 2 for i in range(n)]} for n in (10, 1_000_000)]
    assert sandbox.run(code, suite(cases), limits=Limits(time_s=10, output_kb=64 * 1024)).passed


# -- transport errors during a batch are the infrastructure's --------------------------------------
class BatchFake:
    """Answers like a worker whose call job passes, but ``fail_op`` is answered with ``reply``
    (or raises it); a ``calls`` batch is answered in two parts, the second by ``results``."""

    def __init__(self, fail_op: str, reply: dict[str, Any] | Exception) -> None:
        self.fail_op, self.reply = fail_op, reply
        self.waiting = 0
        self.alive = True

    def request(self, message: dict[str, Any], timeout: float, max_frame: int = 0) -> dict[str, Any]:
        op = message["op"]
        if op == self.fail_op:
            if isinstance(self.reply, Exception):
                raise self.reply
            return self.reply
        if op == "calls":
            self.waiting = len(message["calls"])
        if op in ("calls", "results"):
            count = max(1, self.waiting // 2)
            self.waiting -= count
            return {"ok": True, "results": [{"ok": True, "value": 1}] * count}
        return {"ok": True, "names": ["f"]} if op == "begin" else {"ok": True}

    def close(self) -> None:
        self.alive = False


ONES = suite([{"args": [], "expected": 1}] * 8)


def on_fake(fail_op: str, reply: dict[str, Any] | Exception) -> ExecutionResult:
    executor = PoolExecutor(lambda: BatchFake(fail_op, reply), 1, fresh=False)  # type: ignore[arg-type]
    try:
        return executor.execute("", ONES, "python", Limits(), "time")
    finally:
        executor.close()


def test_a_batch_answered_in_parts_passes() -> None:
    result = on_fake("none", {})
    assert result.passed and result.tests_passed == 8


@pytest.mark.parametrize(("fail_op", "reply"), [
    ("calls", ProtocolError("peer closed the stream")),
    ("results", BrokenPipeError(32, "Broken pipe")),
    ("calls", {"ok": True, "results": "many"}),
    ("calls", {"ok": True, "results": []}),
    ("results", {"ok": True, "results": [{"ok": True, "value": 1}] * 9}),
    ("calls", {"ok": False, "error": "worker error: RuntimeError('boom')", "worker_error": True}),
], ids=["protocol", "broken-pipe", "not-a-list", "no-progress", "too-many", "worker-error"])
def test_a_bad_batch_reply_is_a_fault(fail_op: str, reply: dict[str, Any] | Exception) -> None:
    result = on_fake(fail_op, reply)
    assert result.status == Status.SANDBOX_ERROR and f"during {fail_op!r}" in result.feedback, result
    assert result.tests_passed == 0 and CALLS_PER_FRAME > len(ONES.cases) > 1  # batched
