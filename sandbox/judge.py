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
import collections
import functools
import json
import keyword
import math
import os
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from . import rust_tests
from .check_code import CheckCode, check_code
from .check_random import check_builtins
from .evalplus_match import evalplus_matches
from .link import Link, Transport, WorkerFault, clip
from .prefetch import opening_calls
from .referee import Referee
from .rehearsal import Rehearsal, give_up, rehearse
from .runtime import compile_plain, protocol
from .runtime.apps import apps_program
from .runtime.languages import DEFAULT_EDITION, resolve_language
from .suite import COMPARES, SUITE_CACHE, Case, TestSuite
from .formats.verl import apps_matches
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
    """Begin the job, run its cases, end it: the tally of verdict and figures.  A check that
    goes another way than its rehearsal (:mod:`.rehearsal`) is judged again, unrehearsed."""
    if suite.mode == "unittest" and (refused := rust_tests.refused(code)):
        tally = Tally(total=len(suite))
        tally.fail(Status.COMPILE_ERROR, None, f"Compile error:\nunittest mode refuses {refused!r} "
                   "in the solution: it could read the test code compiled beside it, or run code "
                   "before the test program's entry point or in place of a function it calls.")
        return tally
    try:
        return _judge_job(link, code, suite, language, limits, meter, suite_code,
                          _planned_calls(suite, limits, meter, suite_code))
    except Diverged:
        return _judge_job(link, code, suite, language, limits, meter, suite_code, _static_opening(suite))


def _judge_job(link: Link, code: str, suite: TestSuite, language: str, limits: Limits,
               meter: str, suite_code: SuiteCode, opening: _Opening | None) -> Tally:
    """One job, making the ``opening`` calls before the check asks for them; Diverged (the job
    ended) when the check left its rehearsal."""
    begun = link.ask(_begin_message(code, suite, language, limits, meter, opening))
    link.started = True
    if "ended" in begun:
        link.job_ended()
    tally = Tally(total=len(suite), suite_time_s=limits.suite_time_s)
    if not begun.get("ok"):
        _failed_start(tally, begun, limits)
    elif suite.mode == "stdio":
        _run_stdio(link, suite, limits, tally, suite_code)
    elif suite.mode == "call":
        _run_calls(link, suite, tally, meter)
    elif suite.mode == "unittest":
        _run_tests(link, suite, limits, tally, first_test_line=code.count("\n") + 3)
    else:
        try:
            _run_check(link, suite, begun, tally, suite_code, opening,
                       1 if meter == "instructions" else CALLS_PER_FRAME)
        except Diverged:
            if "ended" not in begun:
                link.ask({"op": "end"})
            raise
    ended = begun["ended"] if "ended" in begun else link.ask({"op": "end"})
    if _kind(suite) == "module" and "outcome" in ended:
        tally.add_usage(ended)
        if ended["outcome"] != "ok":
            _outcome_failure(tally, ended, None, limits)
    if tally.passed < tally.total:  # e.g. the process vanished mid-call with exit code 0
        tally.fail(Status.RUNTIME_ERROR, None,
                   "The solution's process ended before every test had run.")
    return tally


def _kind(suite: TestSuite) -> str:
    """How the worker runs the solution: a ``program`` run per case, or a ``module`` it calls."""
    return "program" if suite.mode in ("stdio", "unittest") else "module"


def _begin_message(code: str, suite: TestSuite, language: str, limits: Limits, meter: str,
                   opening: _Opening | None) -> dict[str, Any]:
    """The request that begins the job: the code as the worker is to build it, its kind and limits."""
    kind = _kind(suite)
    wire_limits = limits.to_dict()
    if kind == "module":
        wire_limits["cpu_total_s"] = limits.time_s * max(1, len(suite))
    begin = {"op": "begin", "code": code, "language": language, "kind": kind,
             "limits": wire_limits, "meter": meter, "prelude": suite.mode == "call"}
    if suite.mode == "unittest":
        edition = suite.extra.get("edition") or DEFAULT_EDITION
        begin |= {"code": rust_tests.test_program(code, str(suite.check), edition), "tests": True,
                  "edition": edition}
    if suite.mode == "stdio" and suite.extra.get("program") == "apps" \
            and resolve_language(language).name == "python":
        begin["code"] = apps_program(code)  # run as APPS's harness runs it (a top-level return ends it)
    batch = _opening_batch(suite, limits, meter, opening)
    if batch is not None:
        begin["prefetch"] = batch
    return begin


def _opening_batch(suite: TestSuite, limits: Limits, meter: str,
                   opening: _Opening | None) -> dict[str, Any] | None:
    """The begin message's ``prefetch``: a script check's ``opening`` calls, for the worker to
    make as soon as the solution has loaded, unless the solution defines a name the suite's
    code may call it by (``unless``), so the batch needs no round trip of its own.

    When those calls are the whole check and no code of the suite's that runs once the check
    does names the entry point (a rehearsal saw such calls too), nothing else can reach the
    solution: the worker ends the job in the same reply (``end``).  HumanEval's definitions
    (its prompt) define a stub of the entry point, which the candidate replaces before any of
    that code runs.
    None under the instruction meter (one call per frame) or a suite time limit (which starts
    once the job has begun), and for a check with no such calls or more than one frame's worth.
    """
    if suite.mode != "script" or meter == "instructions" or limits.suite_time_s is not None:
        return None
    if opening is None or len(opening.wire) > CALLS_PER_FRAME:
        return None
    code = check_code(str(suite.check), suite.definitions)
    entry = str(suite.entry_point)
    end = opening.whole and (opening.rehearsed or entry not in code.looked_up_when_run)
    unless = sorted(_unseen_ways(code, entry, opening))
    return {"name": entry, "calls": opening.wire, "end": end, "unless": unless}


def _unseen_ways(code: CheckCode, entry: str, opening: _Opening) -> frozenset[str]:
    """The names by which the suite's code may call the solution (:meth:`CheckCode.may_call`)
    that the ``opening`` calls do not account for: a rehearsal saw the calls made by the
    entry point's own name too, which it stood for."""
    names = code.may_call(entry)
    return names - {entry} if opening.rehearsed else names


class _Opening(NamedTuple):
    """The calls a check makes first, read from its source (:func:`~.prefetch.opening_calls`)
    or seen in a rehearsal (:mod:`.rehearsal`), in the forms the judge sends and compares them in."""

    args: tuple[list[Any], ...]  # each call's positional arguments
    wire: tuple[dict[str, Any], ...]  # each call as the worker receives it in a batch
    keys: tuple[str, ...]  # each call as :meth:`Candidate.answer` compares it (:func:`_json_key`)
    whole: bool  # the calls are the whole check
    rehearsed: bool  # seen in a rehearsal: a call other than these means the check must be judged again


def _planned_calls(suite: TestSuite, limits: Limits, meter: str, suite_code: SuiteCode) -> _Opening | None:
    """The calls to make before a script check asks for them: those of its rehearsal, where it
    can be rehearsed (not under the instruction meter or a suite time limit), or else its
    opening literal calls."""
    if suite.mode != "script":
        return None
    if meter != "instructions" and limits.suite_time_s is None:
        rehearsal = suite_code.rehearse(CALLS_PER_FRAME)
        if rehearsal is not None and rehearsal.calls:
            return _rehearsed_opening(rehearsal)
    return _static_opening(suite)


# the opening of each rehearsal still held: a kept one (a check that imports no random) is
# encoded once for all its jobs, and a seeded one's entry goes with it
_REHEARSED: weakref.WeakKeyDictionary[Rehearsal, _Opening] = weakref.WeakKeyDictionary()


def _rehearsed_opening(rehearsal: Rehearsal) -> _Opening:
    opening = _REHEARSED.get(rehearsal)
    if opening is None:
        opening = _encoded_opening([list(call) for call in rehearsal.calls], list(rehearsal.encoded),
                                   rehearsal.whole, rehearsed=True)
        _REHEARSED[rehearsal] = opening
    return opening


def _static_opening(suite: TestSuite) -> _Opening | None:
    return _opening(str(suite.check)) if suite.mode == "script" else None


@functools.lru_cache(maxsize=SUITE_CACHE)
def _opening(check: str) -> _Opening | None:
    """The :class:`_Opening` of a check's opening literal calls, made once per check; None when
    it has none (:func:`~.prefetch.opening_calls`)."""
    calls, whole = opening_calls(check)
    if not calls:
        return None
    args = [list(call) for call in calls]
    try:
        encoded = [protocol.encode_value(call) for call in args]
    except protocol.NotPlainData:  # the check's own calls say so, one by one
        return None
    return _encoded_opening(args, encoded, whole, rehearsed=False)


_NO_KWARGS = protocol.encode_value({})


def _encoded_opening(args: list[list[Any]], encoded: list[Any], whole: bool, rehearsed: bool) -> _Opening:
    """The :class:`_Opening` of calls with these positional ``args``, ``encoded`` as the
    protocol sends them."""
    keys = tuple(_json_key({"args": call, "kwargs": _NO_KWARGS}) for call in encoded)
    return _Opening(tuple(args), tuple({"args": call} for call in encoded), keys, whole, rehearsed)


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


@functools.lru_cache(maxsize=SUITE_CACHE)
def _evaluator(source: str) -> Callable[[str, str], Any]:
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": "__evaluator__"}
    exec(compile_plain(source, "<evaluator>"), namespace)  # nosec B102 - the suite's trusted evaluator
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
    """JSON-level equality: tuples equal lists.  Only a float expectation tolerates: a number
    within ``tolerance`` (relative or absolute) meets it.  Everything else compares exactly: an
    int is met by an equal int only (not by a float, however near or equal), and a bool by a bool.
    """
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, float):
        try:
            return isinstance(actual, (int, float)) and \
                math.isclose(expected, actual, rel_tol=tolerance, abs_tol=tolerance)
        except OverflowError:  # an int past float's range is near no float
            return False
    if isinstance(expected, int):
        return isinstance(actual, int) and expected == actual
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        return len(expected) == len(actual) and all(
            values_equal(e, a, tolerance) for e, a in zip(expected, actual, strict=True))
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            values_equal(expected[k], actual[k], tolerance) for k in expected)
    return type(expected) is type(actual) and bool(expected == actual)


def call_matches(suite: TestSuite, index: int, case: Case, actual: Any) -> bool:
    """Whether a call case's returned value is right, by the suite's ``compare`` rule.

    The suite's ``extra`` may carry ``compare`` (default ``"values"``:
    :func:`values_equal`), ``atol`` (one float, or one per case; default 1e-6
    for ``"values"``) and, with ``"evalplus"``, ``oracle``
    (:func:`~.evalplus_match.evalplus_matches`); ``"apps"`` judges as APPS's harness does
    (:func:`~.formats.verl.apps_matches`).  ValueError for a rule this judge lacks.
    """
    compare = suite.extra.get("compare", "values")
    atol = suite.extra.get("atol")
    if isinstance(atol, list):
        atol = atol[index]
    if compare == "values":
        return values_equal(case.expected, actual, 1e-6 if atol is None else float(atol))
    if compare == "evalplus":
        return evalplus_matches(case.expected, actual, float(atol or 0.0), list(case.args),
                                suite.extra.get("oracle"))
    if compare == "apps":
        return apps_matches(case.expected, actual)
    raise ValueError(f"unknown call comparison {compare!r}; use one of {', '.join(COMPARES)}")


CALLS_PER_FRAME = 256  # call cases sent to the worker in one frame (a suite's ``calls_per_frame``)


def _run_calls(link: Link, suite: TestSuite, tally: Tally, meter: str) -> None:
    """Run a call suite's cases, many to a frame, and judge each returned value here.

    The worker hands the module's process ``calls_per_frame`` cases at a time
    (the suite's ``extra``, default :data:`CALLS_PER_FRAME`; 1 is one call
    per frame), which runs them one after the other in the process that
    loaded the solution, as EvalPlus runs a sample's inputs; only arguments
    go there, and each call keeps its own time limit.  ``time_s`` and the
    memory figures are the module process's, as with one call per frame.
    The instruction meter sends one call per frame: how a large frame is
    read in pieces varies run to run, and its counts must not.
    """
    entry = str(suite.entry_point)
    per_frame = 1 if meter == "instructions" else _calls_per_frame(suite)
    for start in range(0, len(suite.cases), per_frame):
        if tally.out_of_time(start):
            return
        chunk = suite.cases[start:start + per_frame]
        for index, reply in enumerate(_call_replies(link, entry, chunk, tally), start):
            if reply.get("gone"):  # the end-of-job report says why (timeout, memory, exit)
                tally.out_of_time(index)  # or the suite's time ran out during the batch
                return
            _judge_call(suite, tally, index, suite.cases[index], reply)


def _calls_per_frame(suite: TestSuite) -> int:
    return int(suite.extra.get("calls_per_frame", CALLS_PER_FRAME))  # checked when the suite was made


def _call_replies(link: Link, entry: str, chunk: tuple[Case, ...], tally: Tally,
                  first: dict[str, Any] | None = None) -> Iterator[dict[str, Any]]:
    """The worker's reply to each case of ``chunk``, in order, until one says the process is ``gone``.

    A batch's results may come in several replies (``results``: the worker
    keeps each reply near one output cap); a reply that is not a list of at
    most the results still due, or brings none while the process lives, is
    a ProtocolError.  ``first``: the batch's first reply, when the worker made
    the calls already (the begin reply, :func:`_opening_batch`).
    """
    due = len(chunk)
    if first is None and due == 1:
        yield link.ask({"op": "call", "name": entry, **_wire_call(chunk[0])})
        return
    message: dict[str, Any] = {"op": "results"} if first is not None else _batch_message(entry, chunk, tally)
    while due:
        reply = first if first is not None else link.ask(message)
        first, message = None, {"op": "results"}
        results = _batch_results(reply, due)
        yield from results
        if reply.get("gone"):
            yield {"gone": True}
            return
        due -= len(results)


def _batch_results(reply: dict[str, Any], due: int) -> list[dict[str, Any]]:
    """The results in one reply to a batch, checked: a list of at most ``due``, not empty unless
    the process is ``gone``; ProtocolError otherwise."""
    results = reply.get("results")
    if reply.get("ok") is not True or not isinstance(results, list) or len(results) > due \
            or not (results or reply.get("gone")):
        raise protocol.ProtocolError(f"worker answered a batch of calls with {clip(repr(reply))}")
    return results


def _wire_call(case: Case) -> dict[str, Any]:
    return {"args": protocol.encode_value(list(case.args)), "return_arg": case.return_arg}


def _batch_message(entry: str, chunk: tuple[Case, ...], tally: Tally) -> dict[str, Any]:
    """The ``calls`` request for ``chunk``; with a suite time limit, the time it has left."""
    message: dict[str, Any] = {"op": "calls", "name": entry, "calls": [_wire_call(case) for case in chunk]}
    if tally.suite_time_s is not None:  # the worker ends the batch when the suite's time is spent
        message["budget_s"] = max(0.0, tally.suite_time_s - (time.monotonic() - tally.started))
    return message


def _judge_call(suite: TestSuite, tally: Tally, index: int, case: Case, reply: dict[str, Any]) -> None:
    """Tally one call case from the worker's reply: passed, wrong answer or runtime error."""
    if not reply.get("ok"):
        status = Status.MEMORY_EXCEEDED if reply.get("memory") else Status.RUNTIME_ERROR
        detail = reply.get("traceback") or reply.get("error", "")
        tally.fail(status, index, f"Runtime error on test {index + 1}:\n{detail}")
        return
    try:
        actual = _returned_value(reply)
    except ValueError as exc:
        tally.fail(Status.RUNTIME_ERROR, index, f"Runtime error on test {index + 1}: {exc}")
        return
    if call_matches(suite, index, case, actual):
        tally.passed += 1
    elif tally.status == Status.PASSED:  # the first failure's message is the one kept: write only it
        entry = str(suite.entry_point)
        args = ", ".join(clip(protocol.value_repr(a)) for a in case.args)
        tally.fail(Status.WRONG_ANSWER, index,
                   f"Wrong answer on test {index + 1}: {entry}({args}) returned "
                   f"{clip(protocol.value_repr(actual))}, expected "
                   f"{clip(protocol.value_repr(case.expected))}.")


def _returned_value(reply: dict[str, Any]) -> Any:
    """Decode a value sent by the sandboxed child, which may have forged the frame."""
    if reply.get("ok") is not True or "value" not in reply:
        raise ValueError("the solution's process sent a malformed reply")
    try:
        return protocol.decode_value(reply["value"])
    except (protocol.ProtocolError, KeyError, TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"the solution's process sent an undecodable value ({exc})") from exc


# -- unittest ------------------------------------------------------------------------------
def _run_tests(link: Link, suite: TestSuite, limits: Limits, tally: Tally, first_test_line: int) -> None:
    """Run the test program once and tally its verdicts (:func:`.rust_tests.verdict`): the frames
    the worker kept, those bearing its nonce, never the program's output."""
    report = link.ask({"op": "run", "stdin": ""})
    if not report.get("ok") or not isinstance(report.get("verdicts"), list):
        raise protocol.ProtocolError(f"worker could not run the tests: {clip(repr(report))}")
    tally.add_usage(report)
    said = rust_tests.verdict(report["verdicts"], rust_tests.test_names(str(suite.check)),
                              str(report["outcome"]), first_test_line)
    if said is None:
        _outcome_failure(tally, report, None, limits)
    elif said[0] == Status.PASSED:
        tally.passed = 1
    else:
        tally.fail(said[0], None, said[1])


# -- script ----------------------------------------------------------------------------------
class RemoteError(Exception):
    """The solution raised while being called from the check."""


class RemoteGone(Exception):
    """The solution's process ended (time limit, crash, exit) during a call."""


class Diverged(BaseException):
    """The check left its rehearsal (:mod:`.rehearsal`): it made a call other than the next one
    the rehearsal made, a call after a whole rehearsal's last, or passed with answers unused.
    The job is judged again, unrehearsed.  Not an Exception: no ``except`` of the check's
    may swallow it."""


class Candidate:
    """Stands in for the solution's entry point: each call runs in the sandboxed child.

    ``per_frame`` is how many calls :meth:`answer_many` sends in one frame.
    """

    def __init__(self, link: Link, name: str, tally: Tally, per_frame: int = CALLS_PER_FRAME) -> None:
        self._link, self._tally, self.per_frame = link, tally, per_frame
        self.__name__ = name
        self._ahead: collections.deque[tuple[str, tuple[str, Any]]] = collections.deque()
        self._rehearsed: _Opening | None = None  # the rehearsal whose answers ``_ahead`` holds
        self.diverged = False

    def prefetch(self, opening: _Opening, made: dict[str, Any] | None = None) -> None:
        """Make the check's opening calls now, in batches (:meth:`answer_many`), and keep their
        answers for the check: :meth:`answer` hands out the next one when it is asked the same
        call.  ``made``: the reply of the worker that made them already, as one batch.
        A check that leaves a rehearsal's calls raises Diverged (:meth:`answer`).
        """
        # answers stop at the first ``gone``: the calls after it are never answered
        answers = self.answer_many(list(opening.args), made)
        self._ahead = collections.deque(zip(opening.keys, answers, strict=False))
        self._rehearsed = opening if opening.rehearsed else None

    @property
    def rehearsal_unused(self) -> bool:
        """Whether answers of a rehearsal's calls are left that the check has not asked for."""
        return self._rehearsed is not None and bool(self._ahead)

    def answer(self, args: list[Any], kwargs: dict[str, Any]) -> tuple[str, Any]:
        """Call the solution: ``("value", v)``, ``("error", text)`` or ``("gone", text)``.

        TypeError for arguments that are not plain data.
        """
        try:
            message = {"op": "call", "name": self.__name__, "args": protocol.encode_value(list(args)),
                       "kwargs": protocol.encode_value(kwargs)}
        except protocol.NotPlainData as exc:
            raise TypeError(f"script mode passes only plain data to the solution: {exc}") from exc
        if self._ahead:
            key, answer = self._ahead.popleft()
            if key == _json_key(message):
                return answer
            self._ahead.clear()  # the check went another way: every call from here on is live
            self._diverge()
        elif self._rehearsed is not None and self._rehearsed.whole:
            self._diverge()
        if self._tally.out_of_time(None):
            return "gone", "the suite's time is spent"
        return _answer_of(self._link.ask(message))

    def _diverge(self) -> None:
        """Raise Diverged when the calls went another way than a rehearsal's (the process has
        answered calls the check does not make)."""
        if self._rehearsed is not None:
            self.diverged = True
            raise Diverged

    def answer_many(self, args_list: list[list[Any]],
                    made: dict[str, Any] | None = None) -> list[tuple[str, Any]]:
        """:meth:`answer` for many calls (no keyword arguments), sent as a call suite's are,
        :data:`CALLS_PER_FRAME` to a frame: the answers in order, up to the first ``gone``.
        ``made``: the first frame's reply, when the worker made those calls already.

        TypeError for arguments that are not plain data.
        """
        answers: list[tuple[str, Any]] = []
        for start in range(0, len(args_list), self.per_frame):
            if self._tally.out_of_time(None):
                return [*answers, ("gone", "the suite's time is spent")]
            chunk = tuple(Case(args=tuple(args)) for args in args_list[start:start + self.per_frame])
            try:
                for reply in _call_replies(self._link, self.__name__, chunk, self._tally,
                                           made if start == 0 else None):
                    answers.append(_answer_of(reply))
                    if answers[-1][0] == "gone":
                        return answers
            except protocol.NotPlainData as exc:
                raise TypeError(f"script mode passes only plain data to the solution: {exc}") from exc
        return answers

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kind, value = self.answer(list(args), kwargs)
        if kind == "gone":
            raise RemoteGone(value)
        if kind == "error":
            raise RemoteError(value)
        return value


def _json_key(message: dict[str, Any]) -> str:
    """A call (its encoded ``args`` and ``kwargs``) as the solution receives it, as text: equal
    keys, indistinguishable calls."""
    return json.dumps([message["args"], message["kwargs"]], separators=(",", ":"))


def _answer_of(reply: dict[str, Any]) -> tuple[str, Any]:
    """A worker's reply to one call as :meth:`Candidate.answer` gives it."""
    if reply.get("gone"):
        return "gone", str(reply.get("error", "the solution exited"))
    if not reply.get("ok"):
        return "error", str(reply.get("traceback") or reply.get("error", ""))
    try:
        return "value", _returned_value(reply)
    except ValueError as exc:
        return "error", str(exc)


def _helper_name(name: Any, entry: str) -> bool:
    """Whether a name the solution says it defines may stand for one of its functions in the
    check (as it would in HumanEval's harness, where the check shares the solution's globals):
    an identifier other than the entry point, a builtin's name or a dunder."""
    return (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)
            and name != entry and not hasattr(builtins, name) and not name.startswith("__"))


def _check_namespace(suite: TestSuite, candidate: Any, helpers: dict[str, Any], seed: int) -> dict[str, Any]:
    """The globals the check runs in: the solution's other functions (``helpers``, each call
    made in the sandbox), then the suite's definitions, ``entry_point`` = ``candidate``, the check.

    A name the suite's own code defines, or a builtin, is never the solution's:
    a helper or a builtin the solution redefines does not change what the check calls.
    """
    namespace: dict[str, Any] = {"__builtins__": check_builtins(seed), "__name__": "__check__", **helpers}
    code = check_code(str(suite.check), suite.definitions)
    if code.definitions is not None:
        exec(code.definitions, namespace)  # nosec B102 - the suite's trusted source
    namespace[str(suite.entry_point)] = candidate
    exec(code.check, namespace)  # nosec B102 - the suite's trusted check
    return namespace


def _prefetched(candidate: Candidate, suite: TestSuite, code: CheckCode, begun: dict[str, Any],
                opening: _Opening | None) -> Candidate:
    """``candidate`` with the ``opening`` calls made (a rehearsal's, or the check's opening literal
    calls), when nothing but ``candidate`` can reach the solution (no code of the suite's calls
    its functions by name): by the worker as the job began (``prefetched`` in the begin reply),
    or now."""
    if opening is None:
        return candidate
    if begun.get("prefetched"):
        candidate.prefetch(opening, made=begun)
    elif not _unseen_ways(code, str(suite.entry_point), opening) & set(begun["names"]):
        candidate.prefetch(opening)
    return candidate


class SuiteCode(Protocol):
    """Where a suite's own code (its evaluator or check) runs: here, or in a referee's sandbox."""

    def rehearse(self, limit: int) -> Rehearsal | None:
        """The check's rehearsal (:mod:`.rehearsal`), of at most ``limit`` calls; None where it
        has none."""

    def matches(self, expected: str, actual: str) -> bool:
        """The evaluator's verdict on one stdio case."""

    def check(self, candidate: Candidate, helpers: dict[str, Candidate]) -> tuple[str, str]:
        """The outcome of ``check(candidate)``: ``passed``, ``failed`` (an assertion), ``error``
        (the solution raised), ``gone`` (its process ended) or ``raised`` (the check's own
        fault), with a message.  ``helpers``: the solution's other functions, by name."""


class InProcess:
    """The suite's code run in this process: a dataset the caller trusts.  The check draws
    random numbers from a generator of its own (:mod:`.check_random`), seeded once per job."""

    def __init__(self, suite: TestSuite) -> None:
        self.suite = suite
        self.seed = int.from_bytes(os.urandom(8), "little")

    def rehearse(self, limit: int) -> Rehearsal | None:
        """The check rehearsed with this job's seed (:func:`.rehearsal.rehearse`)."""
        suite = self.suite
        return rehearse(str(suite.check), suite.definitions, str(suite.entry_point), self.seed, limit)

    def matches(self, expected: str, actual: str) -> bool:
        """What the suite's evaluator says (False if it raises)."""
        try:
            return bool(_evaluator(str(self.suite.evaluator))(expected, actual))
        except Exception:
            return False

    def check(self, candidate: Candidate, helpers: dict[str, Candidate]) -> tuple[str, str]:
        """Run the check here, among the suite's definitions."""
        try:
            _check_namespace(self.suite, candidate, helpers, self.seed)["check"](candidate)
        except RemoteGone:
            return "gone", ""
        except RemoteError as exc:
            return "error", str(exc)
        except AssertionError as exc:
            return "failed", str(exc)
        except Exception as exc:
            return "raised", f"{type(exc).__name__}: {exc}"
        return "passed", ""


def _held_to_rehearsal(suite_code: SuiteCode, candidate: Candidate, helpers: dict[str, Candidate],
                       check: str) -> tuple[str, str]:
    """The check's outcome (:meth:`SuiteCode.check`); Diverged when it left the rehearsal the
    candidate's answers came from, or passed with some of them unused (``check`` is then not
    rehearsed again)."""
    try:
        outcome, message = suite_code.check(candidate, helpers)
    except Diverged:
        outcome, message = "diverged", ""
    if candidate.diverged or (outcome == "passed" and candidate.rehearsal_unused):
        give_up(check)
        raise Diverged
    return outcome, message


def _run_check(link: Link, suite: TestSuite, begun: dict[str, Any], tally: Tally, suite_code: SuiteCode,
               opening: _Opening | None, per_frame: int) -> None:
    entry, names = str(suite.entry_point), begun.get("names")
    if not isinstance(names, list) or entry not in names:
        tally.fail(Status.RUNTIME_ERROR, None, f"The solution defines no function {entry!r}.")
        return
    code = check_code(str(suite.check), suite.definitions)
    helpers = {name: Candidate(link, name, tally, per_frame) for name in names
               if name in code.looked_up and _helper_name(name, entry)}
    candidate = _prefetched(Candidate(link, entry, tally, per_frame), suite, code, begun, opening)
    outcome, message = _held_to_rehearsal(suite_code, candidate, helpers, str(suite.check))
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
