"""Running a suite through a worker and deciding the verdict, on the trusted side.

The worker only executes code and reports what happened.  Expected outputs
never leave this process: outputs are compared here, by the suite's mode
(:mod:`.modes`).  A suite's own code (its evaluator, HumanEval ``check`` and
``definitions``) runs here when the suite comes from a dataset the caller
trusts, or in a referee's sandbox (:mod:`.referee`) when it does not.

Whatever goes wrong between this process and a worker (the worker dies,
hangs, or sends an oversized or malformed reply) raises :class:`WorkerFault`:
an infrastructure fault, never a verdict on the code.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .link import Link, Transport, WorkerFault, clip
from .modes import Run, SuiteCode, Tally
from .modes.script import Candidate, run_check
from .modes.stdio import evaluator
from .referee import Referee
from .runtime import pmu, protocol
from .runtime.callgrind import VALGRIND_SLOWDOWN
from .runtime.languages import resolve_language
from .suite import TestSuite
from .types import ExecutionResult, Limits, Status

GRACE_S = 30.0  # how much longer than the solution's own limit a worker reply may take


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


def reply_timeout(suite: TestSuite, limits: Limits, meter: str) -> float:
    """Seconds one worker reply may take: all cases plus compiling at the meter's pace, plus grace."""
    slowdown = VALGRIND_SLOWDOWN if meter == "instructions" else 1
    return (limits.time_s * max(1, len(suite)) + limits.compile_time_s) * slowdown + GRACE_S


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
    """Begin the job, run its tests, end it: the tally of verdict and figures."""
    mode = suite.kind
    tally = Tally(total=len(suite), suite_time_s=limits.suite_time_s)
    if (refused := mode.refused_code(code)) is not None:
        tally.fail(Status.COMPILE_ERROR, None, f"Compile error:\n{refused}")
        return tally
    begun = link.ask(_begin_message(code, suite, language, limits, meter))
    link.started = True
    if not begun.get("ok"):
        _failed_start(tally, begun, limits)
    else:
        mode.judge(Run(link, code, suite, limits, meter, tally, suite_code, begun))
    ended = link.ask(protocol.End(op="end"))
    if mode.worker_kind == "module" and "outcome" in ended:
        tally.add_usage(ended)
        if ended["outcome"] != "ok":
            tally.outcome(ended, None, limits)
    if tally.passed < tally.total:  # e.g. the process vanished mid-call with exit code 0
        tally.fail(Status.RUNTIME_ERROR, None,
                   "The solution's process ended before every test had run.")
    return tally


def _begin_message(code: str, suite: TestSuite, language: str, limits: Limits,
                   meter: str) -> protocol.Begin:
    """The request that begins the job: the code as the worker is to build it, its kind and limits."""
    mode = suite.kind
    wire_limits = limits.to_dict()
    if mode.worker_kind == "module":
        wire_limits["cpu_total_s"] = limits.time_s * max(1, len(suite))
    begin = protocol.Begin(op="begin", code=code, language=language, kind=mode.worker_kind,
                           limits=wire_limits, meter="instructions" if meter == "instructions" else "time")
    if meter == "instructions":
        begin["counter"] = pmu.chosen()
    return mode.begin(begin, suite, resolve_language(language).name)


def _failed_start(tally: Tally, begun: dict[str, Any], limits: Limits) -> None:
    status = begun.get("status")
    if status == "compile_error":
        tally.fail(Status.COMPILE_ERROR, None, "Compile error:\n" + str(begun.get("message", "")))
    elif status == "load_failed":
        result = begun.get("result", {})
        tally.add_usage(result)
        if result.get("outcome") in ("timeout", "memory_exceeded", "output_exceeded"):
            tally.outcome(result, None, limits)
        else:
            detail = begun.get("traceback") or begun.get("message", "")
            tally.fail(Status.RUNTIME_ERROR, None, "Error while loading the solution:\n" + detail)
    else:
        raise protocol.ProtocolError(f"worker could not begin the job: {clip(repr(begun))}")


class InProcess:
    """The suite's code run in this process: a dataset the caller trusts.  The check draws
    random numbers from a generator of its own (:mod:`.check_random`), seeded once per job."""

    def __init__(self, suite: TestSuite) -> None:
        self.suite = suite
        self.seed = int.from_bytes(os.urandom(8), "little")

    def matches(self, expected: str, actual: str) -> bool:
        """What the suite's evaluator says (False if it raises)."""
        try:
            return bool(evaluator(str(self.suite.evaluator))(expected, actual))
        except Exception:
            return False

    def check(self, candidate: Candidate, helpers: dict[str, Candidate]) -> tuple[str, str]:
        """Run the check here, among the suite's definitions."""
        return run_check(self.suite, candidate, helpers, self.seed)
