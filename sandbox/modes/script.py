"""``script`` mode: a HumanEval-style ``check(candidate)`` run on the trusted side, each call
of the candidate made in the sandbox.

The check sees the suite's definitions and, as ``candidate``, a proxy that
forwards each call to the sandboxed solution and returns plain data; the
solution's other functions reach it by name the same way.  No other name of
the solution's reaches the check, and the solution never runs here.
"""

from __future__ import annotations

import builtins
import functools
import keyword
from collections.abc import Iterator
from dataclasses import dataclass
from types import CodeType
from typing import Any, ClassVar, Literal

from ..check_random import check_builtins
from ..link import Link
from ..runtime import compile_plain, protocol
from ..suite import SUITE_CACHE, Case, SuiteError, TestSuite
from ..types import Status
from .base import Mode, Run, Tally, compiles, text_field
from .call import CALLS_PER_FRAME, PYTHON, call_replies, returned_value


class RemoteError(Exception):
    """The solution raised while being called from the check."""


class RemoteGone(Exception):
    """The solution's process ended (time limit, crash, exit) during a call."""


class Script(Mode):
    """``entry_point`` and ``check`` source defining ``check(candidate)``, with optional
    ``definitions`` (the problem's own source, such as HumanEval's prompt).  Python only;
    the suite counts one test."""

    name = "script"
    worker_kind: ClassVar[Literal["program", "module"]] = "module"
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

    def judge(self, run: Run) -> None:
        """Run the check here (or on the referee), each call of the solution in the sandbox."""
        suite, tally = run.suite, run.tally
        entry, names = str(suite.entry_point), run.begun.get("names")
        if not isinstance(names, list) or entry not in names:
            tally.fail(Status.RUNTIME_ERROR, None, f"The solution defines no function {entry!r}.")
            return
        per_frame = 1 if run.meter == "instructions" else CALLS_PER_FRAME
        looked_up = compiled(str(suite.check), suite.definitions).looked_up
        helpers = {name: Candidate(run.link, name, tally, per_frame) for name in names
                   if name in looked_up and _helper_name(name, entry)}
        outcome, message = run.suite_code.check(Candidate(run.link, entry, tally, per_frame), helpers)
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
    """Stands in for one of the solution's functions: each call runs in the sandboxed child.

    ``per_frame`` is how many calls :meth:`answer_many` sends in one frame.
    """

    def __init__(self, link: Link, name: str, tally: Tally, per_frame: int = CALLS_PER_FRAME) -> None:
        self._link, self._tally, self.per_frame = link, tally, per_frame
        self.__name__ = name

    def answer(self, args: list[Any], kwargs: dict[str, Any]) -> tuple[str, Any]:
        """Call the solution: ``("value", v)``, ``("error", text)`` or ``("gone", text)``.

        TypeError for arguments that are not plain data.
        """
        try:
            message = protocol.Call(op="call", name=self.__name__, args=protocol.encode_value(list(args)),
                                    kwargs=protocol.encode_value(kwargs))
        except protocol.NotPlainData as exc:
            raise TypeError(f"script mode passes only plain data to the solution: {exc}") from exc
        if self._tally.out_of_time(None):
            return "gone", "the suite's time is spent"
        return _answer_of(self._link.ask(message))

    def answer_many(self, args_list: list[list[Any]]) -> list[tuple[str, Any]]:
        """:meth:`answer` for many calls (no keyword arguments), sent as a call suite's are,
        ``per_frame`` to a frame: the answers in order, up to the first ``gone`` (a check that
        records a reference's outputs asks this way).

        TypeError for arguments that are not plain data.
        """
        answers: list[tuple[str, Any]] = []
        for start in range(0, len(args_list), self.per_frame):
            if self._tally.out_of_time(None):
                return [*answers, ("gone", "the suite's time is spent")]
            chunk = tuple(Case(args=tuple(args)) for args in args_list[start:start + self.per_frame])
            try:
                for reply in call_replies(self._link, self.__name__, chunk, self._tally):
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
    code = compiled(str(suite.check), suite.definitions)
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


@dataclass(frozen=True)
class Compiled:
    """A suite's check and definitions, compiled once, and every global name their code may
    look up (``co_names``): the solution's other functions that the check can reach by name."""

    check: CodeType
    definitions: CodeType | None
    looked_up: frozenset[str]


@functools.lru_cache(maxsize=SUITE_CACHE)
def compiled(check: str, definitions: str | None) -> Compiled:
    """The :class:`Compiled` check and definitions (kept for :data:`SUITE_CACHE` suites)."""
    checked = compile_plain(check, "<check>")
    top = compile_plain(definitions, "<definitions>") if definitions is not None else None
    codes = [checked] if top is None else [checked, top]
    return Compiled(checked, top, frozenset(name for code in _nested(codes) for name in code.co_names))


def _nested(codes: list[CodeType]) -> Iterator[CodeType]:
    """These code objects and every one nested in them."""
    todo = list(codes)
    while todo:
        code = todo.pop()
        yield code
        todo.extend(const for const in code.co_consts if isinstance(const, CodeType))
