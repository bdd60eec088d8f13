"""``call`` mode: the solution's module loaded once, its entry point called with each case's
arguments, the returned value judged here."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any, ClassVar, Literal

from ..apps_match import apps_matches
from ..evalplus_match import ORACLES, evalplus_matches
from ..link import Link, clip
from ..runtime import protocol
from ..suite import Case, SuiteError, TestSuite
from ..types import Status
from .base import Mode, Run, Tally

COMPARES = ("values", "evalplus", "apps")  # a call suite's ``compare``: how a returned value is judged
CALLS_PER_FRAME = 256  # call cases sent to the worker in one frame (a suite's ``calls_per_frame``)
PYTHON = frozenset({"python"})


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
    (:func:`~rewardkit.sandbox.evalplus_match.evalplus_matches`); ``"apps"`` judges as
    APPS's harness does (:func:`~rewardkit.sandbox.apps_match.apps_matches`).
    ValueError for a rule this judge lacks.
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


class Call(Mode):
    """``entry_point`` (``"func"``, a method of ``Solution``, or ``"Class.method"``) called with
    each case's ``args``; the value it returns compared with ``expected``.  Python only."""

    name = "call"
    worker_kind: ClassVar[Literal["program", "module"]] = "module"
    fields = ("cases", "entry_point")

    def languages(self) -> frozenset[str]:
        """Python: the worker loads the solution as a module and calls into it."""
        return PYTHON

    def read(self, data: dict[str, Any]) -> dict[str, Any]:
        """An entry point and at least one case of ``{"args": [...], "expected": ...}``."""
        if not data.get("entry_point"):
            raise SuiteError("call mode needs an 'entry_point'")
        cases = tuple(_case(index, raw) for index, raw in enumerate(data.get("cases", [])))
        if not cases:
            raise SuiteError("call mode needs at least one case in 'cases'")
        return {"cases": cases, "entry_point": data["entry_point"]}

    def validate(self, suite: TestSuite) -> None:
        """The judging options ``compare``, ``oracle``, ``atol`` and ``calls_per_frame``."""
        extra = suite.extra
        compare = extra.get("compare", "values")
        if compare not in COMPARES:
            raise SuiteError(f"unknown call comparison {compare!r}; use one of {', '.join(COMPARES)}")
        oracle = extra.get("oracle")
        if oracle is not None and (compare != "evalplus" or oracle not in ORACLES):
            raise SuiteError(f"'oracle' is for compare \"evalplus\" and one of {', '.join(ORACLES)}, "
                             f"got {oracle!r}")
        _check_atol(extra.get("atol"), len(suite.cases))
        per_frame = extra.get("calls_per_frame")
        if per_frame is not None and (type(per_frame) is not int or per_frame < 1):
            raise SuiteError(f"'calls_per_frame' must be a positive integer, got {per_frame!r}")

    def to_dict(self, suite: TestSuite) -> dict[str, Any]:
        """Entry point and cases (integers too long for JSON in the tagged form)."""
        return {"entry_point": suite.entry_point,
                "cases": [_call_case(c) | ({"return_arg": c.return_arg} if c.return_arg is not None else {})
                          for c in suite.cases]}

    def begin(self, message: protocol.Begin, suite: TestSuite, language: str) -> protocol.Begin:
        """The module gets the LeetCode prelude (``List``, ``TreeNode``...)."""
        message["prelude"] = True
        return message

    def judge(self, run: Run) -> None:
        """Run the cases, many to a frame, and judge each returned value here.

        The worker hands the module's process ``calls_per_frame`` cases at a time
        (the suite's ``extra``, default :data:`CALLS_PER_FRAME`; 1 is one call
        per frame), which runs them one after the other in the process that
        loaded the solution, as EvalPlus runs a sample's inputs; only arguments
        go there, and each call keeps its own time limit.  ``time_s`` and the
        memory figures are the module process's, as with one call per frame.
        The instruction meter sends one call per frame: how a large frame is
        read in pieces varies run to run, and its counts must not.
        """
        suite, tally = run.suite, run.tally
        entry = str(suite.entry_point)
        per_frame = 1 if run.meter == "instructions" \
            else int(suite.extra.get("calls_per_frame", CALLS_PER_FRAME))
        for start in range(0, len(suite.cases), per_frame):
            if tally.out_of_time(start):
                return
            chunk = suite.cases[start:start + per_frame]
            for index, reply in enumerate(call_replies(run.link, entry, chunk, tally), start):
                if reply.get("gone"):  # the end-of-job report says why (timeout, memory, exit)
                    tally.out_of_time(index)  # or the suite's time ran out during the batch
                    return
                _judge_call(suite, tally, index, suite.cases[index], reply)


def _case(index: int, raw: Any) -> Case:
    if not isinstance(raw, dict):
        raise SuiteError(f"case {index} must be an object, got {type(raw).__name__}")
    args, expected = raw.get("args", []), raw.get("expected")
    if raw.get("encoded") is True:  # values in the protocol's tagged form: integers of any size
        try:
            args, expected = protocol.decode_value(args), protocol.decode_value(expected)
        except (protocol.ProtocolError, TypeError, ValueError, RecursionError) as exc:
            raise SuiteError(f"call case {index}: its encoded values cannot be read: {exc}") from None
    if not isinstance(args, list) or "expected" not in raw:
        raise SuiteError(f"call case {index} needs 'args' (a list) and 'expected'")
    for name, value in (("args", args), ("expected", expected)):
        try:  # what the worker is sent, and what is compared, must be plain data
            protocol.encode_value(value)
        except (protocol.NotPlainData, RecursionError) as exc:
            raise SuiteError(f"call case {index}: '{name}' cannot be used: {exc}") from None
    return_arg = raw.get("return_arg")
    return Case(args=tuple(args), expected=expected,
                return_arg=int(return_arg) if return_arg is not None else None)


def _call_case(case: Case) -> dict[str, Any]:
    """A call case as JSON-ready data: plain, or tagged (``"encoded": true``) when it holds an
    integer too long for a JSON number that Python can read back (its digit limit)."""
    if protocol.has_long_int([case.args, case.expected]):
        return {"args": protocol.encode_value(list(case.args)),
                "expected": protocol.encode_value(case.expected), "encoded": True}
    return {"args": list(case.args), "expected": case.expected}


def _check_atol(atol: Any, count: int) -> None:
    if atol is None:
        return
    if isinstance(atol, list) and len(atol) != count:
        raise SuiteError(f"'atol' as a list needs one tolerance per case ({count}), got {len(atol)}")
    values = atol if isinstance(atol, list) else [atol]
    if not all(type(v) in (int, float) and 0 <= v < float("inf") for v in values):
        raise SuiteError(f"'atol' must be a finite number >= 0 (or a list of them), got {atol!r}")


def call_replies(link: Link, entry: str, chunk: tuple[Case, ...], tally: Tally) -> Iterator[dict[str, Any]]:
    """The worker's reply to each case of ``chunk``, in order, until one says the process is ``gone``.

    A batch's results may come in several replies (``results``: the worker
    keeps each reply near one output cap); a reply that is not a list of at
    most the results still due, or brings none while the process lives, is
    a ProtocolError.
    """
    due = len(chunk)
    if due == 1:
        case = chunk[0]
        yield link.ask(protocol.Call(op="call", name=entry, args=protocol.encode_value(list(case.args)),
                                     return_arg=case.return_arg))
        return
    message: protocol.Calls | protocol.Results = _batch_message(entry, chunk, tally)
    while due:
        reply = link.ask(message)
        message = protocol.Results(op="results")
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


def _batch_message(entry: str, chunk: tuple[Case, ...], tally: Tally) -> protocol.Calls:
    """The ``calls`` request for ``chunk``; with a suite time limit, the time it has left."""
    message = protocol.Calls(op="calls", name=entry, calls=[_wire_call(case) for case in chunk])
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
        actual = returned_value(reply)
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


def returned_value(reply: dict[str, Any]) -> Any:
    """Decode a value sent by the sandboxed child, which may have forged the frame."""
    if reply.get("ok") is not True or "value" not in reply:
        raise ValueError("the solution's process sent a malformed reply")
    try:
        return protocol.decode_value(reply["value"])
    except (protocol.ProtocolError, KeyError, TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"the solution's process sent an undecodable value ({exc})") from exc
