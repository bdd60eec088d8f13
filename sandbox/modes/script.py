"""``script`` mode: a HumanEval-style ``check(candidate)`` run on the trusted side, each call
of the candidate made in the sandbox.

The check sees the suite's definitions and, as ``candidate``, a proxy that
forwards each call to the sandboxed solution and returns plain data; the
solution's other functions reach it by name the same way.  No other name of
the solution's reaches the check, and the solution never runs here.
"""

from __future__ import annotations

import builtins
import collections
import keyword
from typing import Any

from ..check_code import check_code
from ..check_random import check_builtins
from ..link import Link
from ..rehearsal import give_up
from ..runtime import protocol
from ..suite import Case, SuiteError, TestSuite
from ..types import Limits, Status
from .base import Mode, Run, SuiteCode, Tally, compiles, text_field
from .call import CALLS_PER_FRAME, PYTHON, call_replies, returned_value
from .script_plan import Opening, json_key, opening_batch, planned_calls, prefetched, static_opening


class RemoteError(Exception):
    """The solution raised while being called from the check."""


class RemoteGone(Exception):
    """The solution's process ended (time limit, crash, exit) during a call."""


class Diverged(BaseException):
    """The check left its rehearsal (:mod:`~rewardkit.sandbox.rehearsal`): it made a call other
    than the next one the rehearsal made, a call after a whole rehearsal's last, or passed with
    answers unused.  The job is judged again, unrehearsed.  Not an Exception: no ``except`` of
    the check's may swallow it."""


class Script(Mode):
    """``entry_point`` and ``check`` source defining ``check(candidate)``, with optional
    ``definitions`` (the problem's own source, such as HumanEval's prompt).  Python only;
    the suite counts one test."""

    name = "script"
    worker_kind = "module"
    fields = ("entry_point", "check", "definitions")

    def languages(self) -> frozenset[str]:
        """Python: the worker loads the solution as a module and calls into it."""
        return PYTHON

    def read(self, data: dict[str, Any]) -> dict[str, Any]:
        """Entry point, check and definitions, each compiled here to fail fast."""
        if not data.get("entry_point"):
            raise SuiteError("script mode needs an 'entry_point'")
        check = text_field(data, "check", "script mode needs 'check' source defining check(candidate)")
        definitions = text_field(data, "definitions")
        for name, source in (("check", check), ("definitions", definitions)):
            if source is not None:
                compiles(name, source)
        return {"entry_point": data["entry_point"], "check": check, "definitions": definitions}

    def to_dict(self, suite: TestSuite) -> dict[str, Any]:
        """Entry point, check and definitions (when given)."""
        out = {"entry_point": suite.entry_point, "check": suite.check}
        return out | ({"definitions": suite.definitions} if suite.definitions is not None else {})

    def size(self, suite: TestSuite) -> int:
        """One: the check passes or not."""
        return 1

    def plan(self, suite: TestSuite, limits: Limits, meter: str, suite_code: SuiteCode) -> Opening | None:
        """The calls to make before the check asks for them (:mod:`.script_plan`)."""
        return planned_calls(suite, limits, meter, suite_code)

    def replan(self, suite: TestSuite) -> Opening | None:
        """The calls to make ahead when the check left its rehearsal: its opening literal calls."""
        return static_opening(suite)

    def begin_with(self, message: dict[str, Any], suite: TestSuite, limits: Limits, meter: str,
                   opening: Opening | None) -> dict[str, Any]:
        """The begin message with the opening calls for the worker to make at once, if any."""
        batch = opening_batch(suite, limits, meter, opening)
        return message | {"prefetch": batch} if batch is not None else message

    def judge(self, run: Run) -> None:
        """Run the check here (or on the referee), each call of the solution in the sandbox."""
        suite, tally, begun = run.suite, run.tally, run.begun
        per_frame = 1 if run.meter == "instructions" else CALLS_PER_FRAME
        entry, names = str(suite.entry_point), begun.get("names")
        if not isinstance(names, list) or entry not in names:
            tally.fail(Status.RUNTIME_ERROR, None, f"The solution defines no function {entry!r}.")
            return
        code = check_code(str(suite.check), suite.definitions)
        helpers = {name: Candidate(run.link, name, tally, per_frame) for name in names
                   if name in code.looked_up and _helper_name(name, entry)}
        candidate = prefetched(Candidate(run.link, entry, tally, per_frame), suite, code, begun, run.opening)
        outcome, message = _held_to_rehearsal(run.suite_code, candidate, helpers, str(suite.check))
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


class Candidate:
    """Stands in for the solution's entry point: each call runs in the sandboxed child.

    ``per_frame`` is how many calls :meth:`answer_many` sends in one frame.
    """

    def __init__(self, link: Link, name: str, tally: Tally, per_frame: int = CALLS_PER_FRAME) -> None:
        self._link, self._tally, self.per_frame = link, tally, per_frame
        self.__name__ = name
        self._ahead: collections.deque[tuple[str, tuple[str, Any]]] = collections.deque()
        self._rehearsed: Opening | None = None  # the rehearsal whose answers ``_ahead`` holds
        self.diverged = False

    def prefetch(self, opening: Opening, made: dict[str, Any] | None = None) -> None:
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
            if key == json_key(message):
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
        ``per_frame`` to a frame: the answers in order, up to the first ``gone``.
        ``made``: the first frame's reply, when the worker made those calls already.

        TypeError for arguments that are not plain data.
        """
        answers: list[tuple[str, Any]] = []
        for start in range(0, len(args_list), self.per_frame):
            if self._tally.out_of_time(None):
                return [*answers, ("gone", "the suite's time is spent")]
            chunk = tuple(Case(args=tuple(args)) for args in args_list[start:start + self.per_frame])
            try:
                for reply in call_replies(self._link, self.__name__, chunk, self._tally,
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


def _answer_of(reply: dict[str, Any]) -> tuple[str, Any]:
    """A worker's reply to one call as :meth:`Candidate.answer` gives it."""
    if reply.get("gone"):
        return "gone", str(reply.get("error", "the solution exited"))
    if not reply.get("ok"):
        return "error", str(reply.get("traceback") or reply.get("error", ""))
    try:
        return "value", returned_value(reply)
    except ValueError as exc:
        return "error", str(exc)


def _helper_name(name: Any, entry: str) -> bool:
    """Whether a name the solution says it defines may stand for one of its functions in the
    check (as it would in HumanEval's harness, where the check shares the solution's globals):
    an identifier other than the entry point, a builtin's name or a dunder."""
    return (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)
            and name != entry and not hasattr(builtins, name) and not name.startswith("__"))


def check_namespace(suite: TestSuite, candidate: Any, helpers: dict[str, Any], seed: int) -> dict[str, Any]:
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


def run_check(suite: TestSuite, candidate: Any, helpers: dict[str, Any], seed: int) -> tuple[str, str]:
    """``check(candidate)`` in :func:`check_namespace`: its outcome and message, as
    :meth:`~.base.SuiteCode.check` gives them."""
    try:
        check_namespace(suite, candidate, helpers, seed)["check"](candidate)
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
    """The check's outcome; Diverged (``check`` is then not rehearsed again) when it left the
    rehearsal the candidate's answers came from, or passed with some of them unused."""
    try:
        outcome, message = suite_code.check(candidate, helpers)
    except Diverged:
        outcome, message = "diverged", ""
    if candidate.diverged or (outcome == "passed" and candidate.rehearsal_unused):
        give_up(check)
        raise Diverged
    return outcome, message
