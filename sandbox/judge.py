"""Running a suite through a worker and deciding the verdict, on the trusted side.

The worker only executes code and reports what happened.  Expected outputs,
evaluators and HumanEval ``check`` functions stay in this process: outputs are
compared here, and ``check(candidate)`` runs here with ``candidate`` (and every
other function the solution defines) replaced by a proxy that forwards the call
to the sandboxed child and returns plain data.  Evaluators and check sources
come from the test suite, which the caller trusts; solutions never run here.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .runtime import protocol
from .suite import Case, TestSuite
from .types import ExecutionResult, Limits, Status

SHOW = 400  # characters of input/expected/got quoted in feedback
GRACE_S = 30.0  # how much longer than the solution's own limit a worker reply may take

OUTCOME_STATUS = {
    "timeout": Status.TIMEOUT,
    "memory_exceeded": Status.MEMORY_EXCEEDED,
    "output_exceeded": Status.OUTPUT_EXCEEDED,
    "runtime_error": Status.RUNTIME_ERROR,
}


class Transport(Protocol):
    """Anything that answers worker frames: a WorkerProcess, or a fake in tests."""

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one frame and return the worker's reply."""


@dataclass
class Tally:
    """Accumulates per-case metrics and the first failure."""

    total: int
    passed: int = 0
    time_s: float = 0.0
    wall_s: float = 0.0
    peak_kb: float = 0.0
    integral: float = 0.0
    instructions: int | None = 0
    status: Status = Status.PASSED
    feedback: str = ""
    stderr: str = ""
    failed_case: int | None = None
    notes: list[str] = field(default_factory=list)

    def add_usage(self, report: dict[str, Any]) -> None:
        """Add a worker report's time, memory and instruction figures; keep its stderr tail."""
        self.time_s += float(report.get("time_s", 0.0))
        self.wall_s += float(report.get("wall_s", 0.0))
        self.peak_kb = max(self.peak_kb, float(report.get("peak_kb", 0.0)))
        self.integral += float(report.get("integral_kb_s", 0.0))
        count = report.get("instructions")
        self.instructions = None if count is None or self.instructions is None \
            else self.instructions + int(count)
        if report.get("stderr"):
            self.stderr = str(report["stderr"])[-4000:]

    def fail(self, status: Status, index: int | None, feedback: str) -> None:
        """Record a failure, unless an earlier one already set the verdict."""
        if self.status == Status.PASSED:
            self.status, self.failed_case, self.feedback = status, index, feedback

    def result(self, meter: str) -> ExecutionResult:
        """The final result; the instruction count is kept only under that meter."""
        return ExecutionResult(
            status=self.status, tests_passed=self.passed, tests_total=self.total,
            time_s=self.time_s, wall_s=self.wall_s, peak_memory_kb=self.peak_kb,
            integral_kb_s=self.integral,
            instructions=self.instructions if meter == "instructions" else None,
            feedback=self.feedback, stderr=self.stderr, failed_case=self.failed_case)


def execute(worker: Transport, code: str, suite: TestSuite, language: str, limits: Limits,
            meter: str) -> ExecutionResult:
    """Run ``code`` against ``suite`` on ``worker``; raises WorkerGone on infrastructure faults."""
    timeout = reply_timeout(suite, limits, meter)
    kind = "program" if suite.mode == "stdio" else "module"
    wire_limits = limits.to_dict()
    if kind == "module":
        wire_limits["cpu_total_s"] = limits.time_s * max(1, len(suite))
    begun = worker.request({"op": "begin", "code": code, "language": language, "kind": kind,
                            "limits": wire_limits, "meter": meter,
                            "prelude": suite.mode == "call"}, timeout)
    tally = Tally(total=len(suite))
    try:
        if not begun.get("ok"):
            _failed_start(tally, begun, limits)
        elif suite.mode == "stdio":
            _run_stdio(worker, suite, limits, tally, timeout)
        elif suite.mode == "call":
            _run_calls(worker, suite, limits, tally, timeout)
        else:
            _run_check(worker, suite, begun.get("names", []), limits, tally, timeout)
    finally:
        ended = worker.request({"op": "end"}, timeout)
    if kind == "module" and "outcome" in ended:
        tally.add_usage(ended)
        if ended["outcome"] != "ok":
            _outcome_failure(tally, ended, None, limits)
    if tally.passed < tally.total:  # e.g. the process vanished mid-call with exit code 0
        tally.fail(Status.RUNTIME_ERROR, None,
                   "The solution's process ended before every test had run.")
    return tally.result(meter)


def reply_timeout(suite: TestSuite, limits: Limits, meter: str) -> float:
    """Seconds one worker reply may take: all cases plus compiling at the meter's pace, plus grace."""
    slowdown = 60 if meter == "instructions" else 1
    return (limits.time_s * max(1, len(suite)) + limits.compile_time_s) * slowdown + GRACE_S


def _failed_start(tally: Tally, begun: dict[str, Any], limits: Limits) -> None:
    status = begun.get("status")
    if status == "compile_error":
        tally.fail(Status.COMPILE_ERROR, None, "Compile error:\n" + str(begun.get("message", "")))
    elif status == "load_failed":
        result = begun.get("result", {})
        tally.add_usage(result)
        if result.get("outcome") in ("timeout", "memory_exceeded", "output_exceeded"):
            _outcome_failure(tally, result, None, limits)
        else:
            detail = begun.get("traceback") or begun.get("message", "")
            tally.fail(Status.RUNTIME_ERROR, None, "Error while loading the solution:\n" + detail)
    else:
        raise protocol.ProtocolError(f"worker could not begin the job: {begun}")


def _outcome_failure(tally: Tally, report: dict[str, Any], index: int | None,
                     limits: Limits) -> None:
    outcome = report.get("outcome", "runtime_error")
    where = f" on test {index + 1}" if index is not None else ""
    if outcome == "timeout":
        text = f"Time limit exceeded{where} (limit {limits.time_s:g} s)."
    elif outcome == "memory_exceeded":
        text = f"Memory limit exceeded{where} (limit {limits.memory_mb} MB)."
    elif outcome == "output_exceeded":
        text = f"Output limit exceeded{where} (limit {limits.output_kb} KiB)."
    else:
        stderr = str(report.get("stderr", "")).strip()[-2000:]
        code = report.get("exit_code")
        how = f"exit code {code}" if code is not None else f"signal {report.get('signal')}"
        text = f"Runtime error{where} ({how}):\n{stderr}"
    tally.fail(OUTCOME_STATUS.get(outcome, Status.RUNTIME_ERROR), index, text)


# -- stdio ---------------------------------------------------------------------------------
def normalize_output(text: str) -> str:
    """Compare outputs modulo trailing whitespace on each line and at the end."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


@functools.lru_cache(maxsize=256)
def _evaluator(source: str) -> Callable[[str, str], Any]:
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": "__evaluator__"}
    exec(compile(source, "<evaluator>", "exec"), namespace)  # nosec B102 - the suite's trusted evaluator
    if not callable(namespace.get("evaluate")):
        raise ValueError("the evaluator source must define evaluate(expected, actual)")
    return namespace["evaluate"]  # type: ignore[no-any-return]


def _stdio_matches(suite: TestSuite, expected: str, actual: str) -> bool:
    if suite.evaluator is None:
        return normalize_output(expected) == normalize_output(actual)
    try:
        return bool(_evaluator(suite.evaluator)(expected, actual))
    except Exception:
        return False


def _run_stdio(worker: Transport, suite: TestSuite, limits: Limits, tally: Tally,
               timeout: float) -> None:
    for index, case in enumerate(suite.cases):
        report = worker.request({"op": "run", "stdin": case.input}, timeout)
        if not report.get("ok"):
            raise protocol.ProtocolError(f"worker could not run the case: {report}")
        tally.add_usage(report)
        if report["outcome"] != "ok":
            _outcome_failure(tally, report, index, limits)
            if report["outcome"] != "runtime_error":
                return  # a case that hit a limit would only hit it again
            continue
        if _stdio_matches(suite, case.output or "", report["stdout"]):
            tally.passed += 1
        else:
            tally.fail(Status.WRONG_ANSWER, index, _wrong_stdio(index, case, report["stdout"]))


def _wrong_stdio(index: int, case: Case, got: str) -> str:
    return (f"Wrong answer on test {index + 1}.\nInput:\n{_clip(case.input)}\n"
            f"Expected:\n{_clip(case.output or '')}\nGot:\n{_clip(got)}")


def _clip(text: str) -> str:
    return text if len(text) <= SHOW else text[:SHOW] + f"... ({len(text)} characters)"


# -- call ----------------------------------------------------------------------------------
def values_equal(expected: Any, actual: Any, tolerance: float = 1e-6) -> bool:
    """JSON-level equality: tuples equal lists, floats within a small tolerance."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        if isinstance(expected, float) or isinstance(actual, float):
            return math.isclose(expected, actual, rel_tol=tolerance, abs_tol=tolerance)
        return expected == actual
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        return len(expected) == len(actual) and all(
            values_equal(e, a, tolerance) for e, a in zip(expected, actual, strict=True))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            values_equal(expected[k], actual[k], tolerance) for k in expected)
    return type(expected) is type(actual) and bool(expected == actual)


def _run_calls(worker: Transport, suite: TestSuite, limits: Limits, tally: Tally,
               timeout: float) -> None:
    entry = str(suite.entry_point)
    for index, case in enumerate(suite.cases):
        message = {"op": "call", "name": entry, "args": protocol.encode_value(list(case.args)),
                   "return_arg": case.return_arg}
        reply = worker.request(message, timeout)
        if reply.get("gone"):
            return  # the end-of-job report says why (timeout, memory, exit)
        if not reply.get("ok"):
            status = Status.MEMORY_EXCEEDED if reply.get("memory") else Status.RUNTIME_ERROR
            detail = reply.get("traceback") or reply.get("error", "")
            tally.fail(status, index, f"Runtime error on test {index + 1}:\n{detail}")
            continue
        try:
            actual = _returned_value(reply)
        except ValueError as exc:
            tally.fail(Status.RUNTIME_ERROR, index, f"Runtime error on test {index + 1}: {exc}")
            continue
        if values_equal(case.expected, actual):
            tally.passed += 1
        else:
            args = ", ".join(_clip(repr(a)) for a in case.args)
            tally.fail(Status.WRONG_ANSWER, index,
                       f"Wrong answer on test {index + 1}: {entry}({args}) returned "
                       f"{_clip(repr(actual))}, expected {_clip(repr(case.expected))}.")


def _returned_value(reply: dict[str, Any]) -> Any:
    """Decode a value sent by the sandboxed child, which may have forged the frame."""
    if reply.get("ok") is not True or "value" not in reply:
        raise ValueError("the solution's process sent a malformed reply")
    try:
        return protocol.decode_value(reply["value"])
    except (protocol.ProtocolError, KeyError, TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"the solution's process sent an undecodable value ({exc})") from exc


# -- script ----------------------------------------------------------------------------------
class RemoteError(Exception):
    """The solution raised while being called from the check."""


class RemoteGone(Exception):
    """The solution's process ended (time limit, crash, exit) during a call."""


class _Remote:
    """Stands in for a function of the solution inside the trusted check."""

    def __init__(self, worker: Transport, name: str, timeout: float) -> None:
        self._worker, self._name, self._timeout = worker, name, timeout
        self.__name__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            message = {"op": "call", "name": self._name, "args": protocol.encode_value(list(args)),
                       "kwargs": protocol.encode_value(kwargs)}
        except protocol.NotPlainData as exc:
            raise TypeError(f"script mode passes only plain data to the solution: {exc}") from exc
        reply = self._worker.request(message, self._timeout)
        if reply.get("gone"):
            raise RemoteGone(reply.get("error", "the solution exited"))
        if not reply.get("ok"):
            raise RemoteError(reply.get("traceback") or reply.get("error", ""))
        try:
            return _returned_value(reply)
        except ValueError as exc:
            raise RemoteError(str(exc)) from exc


def _run_check(worker: Transport, suite: TestSuite, names: list[str], limits: Limits,
               tally: Tally, timeout: float) -> None:
    entry = str(suite.entry_point)
    names = [name for name in names if isinstance(name, str) and name.isidentifier()]
    if entry not in names:
        tally.fail(Status.RUNTIME_ERROR, None, f"The solution defines no function {entry!r}.")
        return
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": "__check__"}
    namespace.update({name: _Remote(worker, name, timeout) for name in names})
    try:
        exec(compile(str(suite.check), "<check>", "exec"), namespace)  # nosec B102 - the suite's trusted check
        namespace["check"](namespace[entry])
    except RemoteGone:
        return  # the end-of-job report says why
    except RemoteError as exc:
        tally.fail(Status.RUNTIME_ERROR, None, f"Runtime error:\n{exc}")
    except AssertionError as exc:
        detail = f": {exc}" if str(exc) else ""
        tally.fail(Status.WRONG_ANSWER, None, f"A check failed{detail}.")
    except Exception as exc:
        tally.fail(Status.WRONG_ANSWER, None, f"The check raised {type(exc).__name__}: {exc}")
    else:
        tally.passed = 1
