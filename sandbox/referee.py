"""Suite code from a source the caller does not trust, run by a referee in a sandbox of its own.

``Sandbox(trust_suites=False)`` (the reward service's setting) never runs a
suite's ``evaluator``, ``check`` or ``definitions`` in the caller's process.
They run as a module job (:mod:`.runtime.referee_job`) on a second sandbox
worker, leased together with the solution's worker for the job: solution and
referee are separate processes under separate limits and never see each
other.  This process relays each call the check makes to the solution, and
each answer back, as plain data; the referee's own time is not charged to the
solution.

A referee whose code fails (it raises, loops past the time limit, runs out of
memory) fails the case, as a raising trusted evaluator or check does: the
suite is at fault, not the infrastructure.  A referee worker that fails is a
:class:`~.link.WorkerFault`, as the solution's worker is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .link import Link, Transport, clip
from .runtime import protocol
from .suite import TestSuite
from .types import Limits

if TYPE_CHECKING:  # the script mode imports this module
    from .modes.script import Candidate

JOB_CODE = (Path(__file__).parent / "runtime" / "referee_job.py").read_text("utf-8")
ROLE = "referee worker"


def needs_referee(suite: TestSuite) -> bool:
    """Whether judging ``suite`` runs code of the suite's own (a check or an evaluator)."""
    return suite.mode == "script" or suite.evaluator is not None


class Referee:
    """A suite's check or evaluator, running in a module job on its own worker."""

    def __init__(self, link: Link) -> None:
        self._link = link
        self._ended = ""  # why the referee's process is gone, once it is

    @classmethod
    @contextmanager
    def started(cls, worker: Transport, suite: TestSuite, limits: Limits,
                timeout: float) -> Iterator[Referee]:
        """Begin the referee's job on ``worker``; end it on the way out."""
        link = Link(worker, timeout, protocol.reply_limit(limits.output_kb), ROLE)
        sources = {"entry_point": suite.entry_point, "definitions": suite.definitions,
                   "check": suite.check, "evaluator": suite.evaluator}
        wire_limits = limits.to_dict() | {"cpu_total_s": limits.time_s * max(1, len(suite))}
        begun = link.ask({"op": "begin", "code": f"{JOB_CODE}\nSOURCES = {sources!r}\n",
                          "language": "python", "kind": "module", "limits": wire_limits,
                          "meter": "time", "prelude": False})
        link.started = True
        referee = cls(link)
        if not begun.get("ok"):
            referee._ended = f"the referee could not start: {clip(str(begun.get('message', begun)))}"
        try:
            yield referee
        finally:
            link.ask({"op": "end"})

    def matches(self, expected: str, actual: str) -> bool:
        """The evaluator's verdict on one stdio case (False if it failed)."""
        reply = self._call("referee_evaluate", [expected, actual])
        return reply is not None and reply.get("ok") is True and reply.get("value") is True

    def check(self, candidate: Candidate, helpers: dict[str, Candidate]) -> tuple[str, str]:
        """Run ``check(candidate)``: its outcome (``passed``, ``failed``, ``error``, ``gone`` or
        ``raised``) and message, each call of the candidate (or of one of the solution's
        ``helpers``, by name) relayed to the solution."""
        callables = {**helpers, "": candidate}  # "" stands for the entry point
        event = self._event("referee_start", [sorted(helpers)])
        while event[0] == "call":
            target = callables.get(event[3])
            if target is None:
                return "raised", f"the check called {clip(event[3])!r}, which the solution does not define"
            kind, value = target.answer(event[1], event[2])
            event = self._event("referee_resume", [kind, value])
        return event[1], event[2]

    def _event(self, name: str, args: list[Any]) -> list[Any]:
        """The check's next event: ``["call", args, kwargs, name]`` (name "" for the entry point)
        or ``["done", outcome, message]``."""
        reply = self._call(name, args)
        if reply is None:
            return ["done", "raised", self._ended]
        if not reply.get("ok"):
            return ["done", "raised", clip(str(reply.get("error", "")))]
        try:
            event = protocol.decode_value(reply["value"])
        except (protocol.ProtocolError, KeyError, TypeError, ValueError, RecursionError):
            event = None
        return event if _well_formed(event) else ["done", "raised", "the check sent a malformed event"]

    def _call(self, name: str, args: list[Any]) -> dict[str, Any] | None:
        """The reply to calling ``name`` in the referee; None once its process is gone."""
        if self._ended:
            return None
        reply = self._link.ask({"op": "call", "name": name, "args": protocol.encode_value(args)})
        if reply.get("gone"):
            self._ended = f"the check did not finish: {reply.get('error') or 'its process ended'}"
            return None
        return reply


def _well_formed(event: Any) -> bool:
    """``["call", list, dict, str]`` or ``["done", str, str]``."""
    if not isinstance(event, list) or not event:
        return False
    kinds = {"call": (list, dict, str), "done": (str, str)}.get(event[0])
    return (kinds is not None and len(event) == 1 + len(kinds)
            and all(isinstance(item, kind) for item, kind in zip(event[1:], kinds, strict=True)))
