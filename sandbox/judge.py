"""Running a suite through a worker and deciding the verdict, on the trusted side.

The worker only executes code and reports what happened.  Expected outputs
never leave this process: outputs are compared here.  A suite's own code
(its evaluator, HumanEval ``check`` and ``definitions``) runs here when the
suite comes from a dataset the caller trusts, or in a referee's sandbox
(:mod:`.referee`) when it does not.  Either way ``check(candidate)`` sees the
suite's definitions and, as ``candidate``, a proxy that forwards each call to
the sandboxed solution and returns plain data; no other name of the
solution's reaches the check, and the solution never runs here.

Whatever goes wrong between this process and a worker (the worker dies,
hangs, or sends an oversized or malformed reply) raises :class:`WorkerFault`:
an infrastructure fault, never a verdict on the code.
"""

from __future__ import annotations

import builtins
import functools
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import CodeType
from typing import Any, Protocol

from .link import Link, Transport, WorkerFault, clip
from .referee import Referee
from .runtime import protocol
from .suite import Case, TestSuite
from .types import ExecutionResult, Limits, Status

GRACE_S = 30.0  # how much longer than the solution's own limit a worker reply may take

OUTCOME_STATUS = {
    "timeout": Status.TIMEOUT,
    "memory_exceeded": Status.MEMORY_EXCEEDED,
    "output_exceeded": Status.OUTPUT_EXCEEDED,
    "runtime_error": Status.RUNTIME_ERROR,
}


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
    suite_time_s: float | None = None  # Limits.suite_time_s
    started: float = field(default_factory=time.monotonic)

    def out_of_time(self, index: int | None) -> bool:
        """Whether the whole suite's time is spent; if so, the verdict is ``timeout``."""
        if self.suite_time_s is None or time.monotonic() - self.started < self.suite_time_s:
            return False
        where = f" before test {index + 1}" if index is not None else ""
        self.fail(Status.TIMEOUT, index,
                  f"Time limit for the whole suite exceeded{where} (limit {self.suite_time_s:g} s).")
        return True

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
            meter: str, referee: Transport | None = None) -> ExecutionResult:
    """Run ``code`` against ``suite`` on ``worker``.

    The suite's own code (evaluator, check, definitions) runs on ``referee``,
    a second worker (:mod:`.referee`), or, without one, in this process: pass
    a referee whenever the suite does not come from a trusted dataset.
    Raises WorkerFault when either worker fails, including a reply this side
    cannot read (malformed, or larger than the job's output cap allows).
    """
    timeout = reply_timeout(suite, limits, meter)
    link = Link(worker, timeout, protocol.reply_limit(limits.output_kb))
    with _suite_code(suite, limits, referee, timeout) as suite_code:
        try:
            tally = _judge(link, code, suite, language, limits, meter, suite_code)
        except WorkerFault:
            raise
        except Exception as exc:  # a reply without the fields it must have: the worker spoke nonsense
            raise link.failed(exc, "its reply cannot be read: ") from exc
    if link.fault is not None:  # a fault that the check's own ``except`` swallowed
        raise link.fault
    return tally.result(meter)


@contextmanager
def _suite_code(suite: TestSuite, limits: Limits, referee: Transport | None,
                timeout: float) -> Iterator[SuiteCode]:
    if referee is None:
        yield InProcess(suite)
    else:
        with Referee.started(referee, suite, limits, timeout) as refereed:
            yield refereed


def _judge(link: Link, code: str, suite: TestSuite, language: str, limits: Limits,
           meter: str, suite_code: SuiteCode) -> Tally:
    """Begin the job, run its cases, end it: the tally of verdict and figures."""
    kind = "program" if suite.mode == "stdio" else "module"
    wire_limits = limits.to_dict()
    if kind == "module":
        wire_limits["cpu_total_s"] = limits.time_s * max(1, len(suite))
    begun = link.ask({"op": "begin", "code": code, "language": language, "kind": kind,
                      "limits": wire_limits, "meter": meter, "prelude": suite.mode == "call"})
    link.started = True
    tally = Tally(total=len(suite), suite_time_s=limits.suite_time_s)
    if not begun.get("ok"):
        _failed_start(tally, begun, limits)
    elif suite.mode == "stdio":
        _run_stdio(link, suite, limits, tally, suite_code)
    elif suite.mode == "call":
        _run_calls(link, suite, tally)
    else:
        _run_check(link, suite, begun.get("names", []), tally, suite_code)
    ended = link.ask({"op": "end"})
    if kind == "module" and "outcome" in ended:
        tally.add_usage(ended)
        if ended["outcome"] != "ok":
            _outcome_failure(tally, ended, None, limits)
    if tally.passed < tally.total:  # e.g. the process vanished mid-call with exit code 0
        tally.fail(Status.RUNTIME_ERROR, None,
                   "The solution's process ended before every test had run.")
    return tally


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
        raise protocol.ProtocolError(f"worker could not begin the job: {clip(repr(begun))}")


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


def _run_stdio(link: Link, suite: TestSuite, limits: Limits, tally: Tally, suite_code: SuiteCode) -> None:
    for index, case in enumerate(suite.cases):
        if tally.out_of_time(index):
            return
        report = link.ask({"op": "run", "stdin": case.input})
        if not report.get("ok"):
            raise protocol.ProtocolError(f"worker could not run the case: {clip(repr(report))}")
        tally.add_usage(report)
        if report["outcome"] != "ok":
            _outcome_failure(tally, report, index, limits)
            if report["outcome"] != "runtime_error":
                return  # a case that hit a limit would only hit it again
            continue
        expected, actual = case.output or "", report["stdout"]
        if suite_code.matches(expected, actual) if suite.evaluator is not None \
                else normalize_output(expected) == normalize_output(actual):
            tally.passed += 1
        else:
            tally.fail(Status.WRONG_ANSWER, index, _wrong_stdio(index, case, report["stdout"]))


def _wrong_stdio(index: int, case: Case, got: str) -> str:
    return (f"Wrong answer on test {index + 1}.\nInput:\n{clip(case.input)}\n"
            f"Expected:\n{clip(case.output or '')}\nGot:\n{clip(got)}")



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


def _run_calls(link: Link, suite: TestSuite, tally: Tally) -> None:
    entry = str(suite.entry_point)
    for index, case in enumerate(suite.cases):
        if tally.out_of_time(index):
            return
        message = {"op": "call", "name": entry, "args": protocol.encode_value(list(case.args)),
                   "return_arg": case.return_arg}
        reply = link.ask(message)
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
            args = ", ".join(clip(repr(a)) for a in case.args)
            tally.fail(Status.WRONG_ANSWER, index,
                       f"Wrong answer on test {index + 1}: {entry}({args}) returned "
                       f"{clip(repr(actual))}, expected {clip(repr(case.expected))}.")


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


class Candidate:
    """Stands in for the solution's entry point: each call runs in the sandboxed child."""

    def __init__(self, link: Link, name: str, tally: Tally) -> None:
        self._link, self._tally = link, tally
        self.__name__ = name

    def answer(self, args: list[Any], kwargs: dict[str, Any]) -> tuple[str, Any]:
        """Call the solution: ``("value", v)``, ``("error", text)`` or ``("gone", text)``.

        TypeError for arguments that are not plain data.
        """
        try:
            message = {"op": "call", "name": self.__name__, "args": protocol.encode_value(list(args)),
                       "kwargs": protocol.encode_value(kwargs)}
        except protocol.NotPlainData as exc:
            raise TypeError(f"script mode passes only plain data to the solution: {exc}") from exc
        if self._tally.out_of_time(None):
            return "gone", "the suite's time is spent"
        reply = self._link.ask(message)
        if reply.get("gone"):
            return "gone", str(reply.get("error", "the solution exited"))
        if not reply.get("ok"):
            return "error", str(reply.get("traceback") or reply.get("error", ""))
        try:
            return "value", _returned_value(reply)
        except ValueError as exc:
            return "error", str(exc)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kind, value = self.answer(list(args), kwargs)
        if kind == "gone":
            raise RemoteGone(value)
        if kind == "error":
            raise RemoteError(value)
        return value


def _check_namespace(suite: TestSuite, candidate: Any) -> dict[str, Any]:
    """The globals the check runs in: the suite's definitions, ``entry_point`` = ``candidate``, the check.

    Nothing else of the solution's is there: a helper or a builtin it
    redefines does not change what the check calls.
    """
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": "__check__"}
    if suite.definitions is not None:
        exec(_compiled(suite.definitions, "<definitions>"), namespace)  # nosec B102 - the suite's trusted source
    namespace[str(suite.entry_point)] = candidate
    exec(_compiled(str(suite.check), "<check>"), namespace)  # nosec B102 - the suite's trusted check
    return namespace


@functools.lru_cache(maxsize=256)
def _compiled(source: str, name: str) -> CodeType:
    return compile(source, name, "exec")


class SuiteCode(Protocol):
    """Where a suite's own code (its evaluator or check) runs: here, or in a referee's sandbox."""

    def matches(self, expected: str, actual: str) -> bool:
        """The evaluator's verdict on one stdio case."""

    def check(self, candidate: Candidate) -> tuple[str, str]:
        """The outcome of ``check(candidate)``: ``passed``, ``failed`` (an assertion), ``error``
        (the solution raised), ``gone`` (its process ended) or ``raised`` (the check's own
        fault), with a message."""


class InProcess:
    """The suite's code run in this process: a dataset the caller trusts."""

    def __init__(self, suite: TestSuite) -> None:
        self.suite = suite

    def matches(self, expected: str, actual: str) -> bool:
        """What the suite's evaluator says (False if it raises)."""
        try:
            return bool(_evaluator(str(self.suite.evaluator))(expected, actual))
        except Exception:
            return False

    def check(self, candidate: Candidate) -> tuple[str, str]:
        """Run the check here, among the suite's definitions."""
        try:
            _check_namespace(self.suite, candidate)["check"](candidate)
        except RemoteGone:
            return "gone", ""
        except RemoteError as exc:
            return "error", str(exc)
        except AssertionError as exc:
            return "failed", str(exc)
        except Exception as exc:
            return "raised", f"{type(exc).__name__}: {exc}"
        return "passed", ""


def _run_check(link: Link, suite: TestSuite, names: Any, tally: Tally, suite_code: SuiteCode) -> None:
    entry = str(suite.entry_point)
    if not isinstance(names, list) or entry not in names:
        tally.fail(Status.RUNTIME_ERROR, None, f"The solution defines no function {entry!r}.")
        return
    outcome, message = suite_code.check(Candidate(link, entry, tally))
    if outcome == "gone":
        return  # the end-of-job report says why
    if outcome == "error":
        tally.fail(Status.RUNTIME_ERROR, None, f"Runtime error:\n{message}")
    elif outcome == "failed":
        tally.fail(Status.WRONG_ANSWER, None, f"A check failed{': ' + message if message else ''}.")
    elif outcome != "passed":
        tally.fail(Status.WRONG_ANSWER, None, f"The check raised {message}")
    else:
        tally.passed = 1
