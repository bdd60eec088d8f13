"""Running a suite through a worker and deciding the verdict, on the trusted side.

The worker only executes code and reports what happened.  Expected outputs,
evaluators and HumanEval ``check`` functions stay in this process: outputs are
compared here, and ``check(candidate)`` runs here, among the suite's own
definitions, with ``candidate`` a proxy that forwards each call to the
sandboxed child and returns plain data; no other name of the solution's
reaches the check.  Evaluators, definitions and check sources come from the
test suite, which the caller trusts; solutions never run here.

Whatever goes wrong between this process and the worker (the worker dies,
hangs, or sends an oversized or malformed reply) raises :class:`WorkerFault`:
an infrastructure fault, never a verdict on the code.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType
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

    def request(self, message: dict[str, Any], timeout: float, max_frame: int) -> dict[str, Any]:
        """Send one frame and return the worker's reply (a frame of at most ``max_frame`` bytes)."""


class WorkerFault(RuntimeError):
    """The worker failed during a job: an infrastructure fault, to be given as ``sandbox_error``.

    The worker must be replaced.  ``started`` says whether the job had begun;
    if not, nothing of it ran and it may be tried again on another worker.
    """

    def __init__(self, message: str, started: bool) -> None:
        super().__init__(message)
        self.started = started


class _Link:
    """A job's channel to its worker: a failed request becomes a WorkerFault, and stays one."""

    def __init__(self, worker: Transport, timeout: float, max_frame: int) -> None:
        self._worker, self._timeout, self._max_frame = worker, timeout, max_frame
        self.op = ""  # the latest request's
        self.started = False
        self.fault: WorkerFault | None = None

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """The worker's reply to ``message``; WorkerFault on any transport error or worker error."""
        if self.fault is None:
            self.op = str(message.get("op"))
            try:
                reply = self._worker.request(message, self._timeout, self._max_frame)
                if reply.get("worker_error"):  # the worker itself raised while answering
                    raise protocol.ProtocolError(_clip(str(reply.get("error", ""))))
                return reply
            except Exception as exc:  # the transport's errors are all infrastructure faults
                self.fault = self.failed(exc)
        raise self.fault

    def failed(self, exc: Exception, detail: str = "") -> WorkerFault:
        """The fault of the latest request, which raised ``exc``."""
        return WorkerFault(f"sandbox worker fault during {self.op!r}: {detail}{type(exc).__name__}: {exc}",
                           self.started)


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
    """Run ``code`` against ``suite`` on ``worker``.

    Raises WorkerFault when the worker fails, including a reply this side
    cannot read (malformed, or larger than the job's output cap allows).
    """
    link = _Link(worker, reply_timeout(suite, limits, meter), protocol.reply_limit(limits.output_kb))
    try:
        tally = _judge(link, code, suite, language, limits, meter)
    except WorkerFault:
        raise
    except Exception as exc:  # a reply without the fields it must have: the worker spoke nonsense
        raise link.failed(exc, "its reply cannot be read: ") from exc
    if link.fault is not None:  # a fault that the check's own ``except`` swallowed
        raise link.fault
    return tally.result(meter)


def _judge(link: _Link, code: str, suite: TestSuite, language: str, limits: Limits,
           meter: str) -> Tally:
    """Begin the job, run its cases, end it: the tally of verdict and figures."""
    kind = "program" if suite.mode == "stdio" else "module"
    wire_limits = limits.to_dict()
    if kind == "module":
        wire_limits["cpu_total_s"] = limits.time_s * max(1, len(suite))
    begun = link.ask({"op": "begin", "code": code, "language": language, "kind": kind,
                      "limits": wire_limits, "meter": meter, "prelude": suite.mode == "call"})
    link.started = True
    tally = Tally(total=len(suite))
    if not begun.get("ok"):
        _failed_start(tally, begun, limits)
    elif suite.mode == "stdio":
        _run_stdio(link, suite, limits, tally)
    elif suite.mode == "call":
        _run_calls(link, suite, tally)
    else:
        _run_check(link, suite, begun.get("names", []), tally)
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
        raise protocol.ProtocolError(f"worker could not begin the job: {_clip(repr(begun))}")


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


def _run_stdio(link: _Link, suite: TestSuite, limits: Limits, tally: Tally) -> None:
    for index, case in enumerate(suite.cases):
        report = link.ask({"op": "run", "stdin": case.input})
        if not report.get("ok"):
            raise protocol.ProtocolError(f"worker could not run the case: {_clip(repr(report))}")
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


def _run_calls(link: _Link, suite: TestSuite, tally: Tally) -> None:
    entry = str(suite.entry_point)
    for index, case in enumerate(suite.cases):
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
    """Stands in for the solution's entry point inside the trusted check."""

    def __init__(self, link: _Link, name: str) -> None:
        self._link = link
        self.__name__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            message = {"op": "call", "name": self.__name__, "args": protocol.encode_value(list(args)),
                       "kwargs": protocol.encode_value(kwargs)}
        except protocol.NotPlainData as exc:
            raise TypeError(f"script mode passes only plain data to the solution: {exc}") from exc
        reply = self._link.ask(message)
        if reply.get("gone"):
            raise RemoteGone(reply.get("error", "the solution exited"))
        if not reply.get("ok"):
            raise RemoteError(reply.get("traceback") or reply.get("error", ""))
        try:
            return _returned_value(reply)
        except ValueError as exc:
            raise RemoteError(str(exc)) from exc


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


def _run_check(link: _Link, suite: TestSuite, names: Any, tally: Tally) -> None:
    entry = str(suite.entry_point)
    if not isinstance(names, list) or entry not in names:
        tally.fail(Status.RUNTIME_ERROR, None, f"The solution defines no function {entry!r}.")
        return
    candidate = _Remote(link, entry)
    try:
        _check_namespace(suite, candidate)["check"](candidate)
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
