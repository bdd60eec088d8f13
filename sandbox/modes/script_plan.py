"""The calls a script check will make, sent to the solution before the check asks for them.

A check's opening literal calls (:func:`~rewardkit.sandbox.prefetch.opening_calls`)
or the calls of its rehearsal (:mod:`~rewardkit.sandbox.rehearsal`) go to the
worker in batches, even in the message that begins the job; the
:class:`~.script.Candidate` hands their answers to the check as it asks, and a
check that leaves a rehearsal's calls is judged again, unrehearsed
(:class:`~.script.Diverged`).
"""

from __future__ import annotations

import functools
import json
import weakref
from typing import TYPE_CHECKING, Any, NamedTuple

from ..check_code import CheckCode, check_code
from ..prefetch import opening_calls
from ..rehearsal import Rehearsal
from ..runtime import protocol
from ..suite import SUITE_CACHE, TestSuite
from ..types import Limits
from .base import SuiteCode
from .call import CALLS_PER_FRAME

if TYPE_CHECKING:
    from .script import Candidate


class Opening(NamedTuple):
    """The calls a check makes first, read from its source or seen in a rehearsal, in the forms
    the judge sends and compares them in."""

    args: tuple[list[Any], ...]  # each call's positional arguments
    wire: tuple[dict[str, Any], ...]  # each call as the worker receives it in a batch
    keys: tuple[str, ...]  # each call as :meth:`Candidate.answer` compares it (:func:`json_key`)
    whole: bool  # the calls are the whole check
    rehearsed: bool  # seen in a rehearsal: a call other than these means the check must be judged again


def json_key(message: dict[str, Any]) -> str:
    """A call (its encoded ``args`` and ``kwargs``) as the solution receives it, as text: equal
    keys, indistinguishable calls."""
    return json.dumps([message["args"], message["kwargs"]], separators=(",", ":"))


def planned_calls(suite: TestSuite, limits: Limits, meter: str, suite_code: SuiteCode) -> Opening | None:
    """The calls to make before a check asks for them: those of its rehearsal, where it can be
    rehearsed (not under the instruction meter or a suite time limit), or else its opening
    literal calls."""
    if meter != "instructions" and limits.suite_time_s is None:
        rehearsal = suite_code.rehearse(CALLS_PER_FRAME)
        if rehearsal is not None and rehearsal.calls:
            return rehearsed_opening(rehearsal)
    return static_opening(suite)


# the opening of each rehearsal still held: a kept one (a check that imports no random) is
# encoded once for all its jobs, and a seeded one's entry goes with it
REHEARSED: weakref.WeakKeyDictionary[Rehearsal, Opening] = weakref.WeakKeyDictionary()


def rehearsed_opening(rehearsal: Rehearsal) -> Opening:
    """The :class:`Opening` of a rehearsal's calls, encoded once per rehearsal."""
    opening = REHEARSED.get(rehearsal)
    if opening is None:
        opening = _encoded_opening([list(call) for call in rehearsal.calls], list(rehearsal.encoded),
                                   rehearsal.whole, rehearsed=True)
        REHEARSED[rehearsal] = opening
    return opening


def static_opening(suite: TestSuite) -> Opening | None:
    """The check's opening literal calls, or None."""
    return _opening(str(suite.check))


@functools.lru_cache(maxsize=SUITE_CACHE)
def _opening(check: str) -> Opening | None:
    """The :class:`Opening` of a check's opening literal calls, made once per check; None when
    it has none (:func:`~rewardkit.sandbox.prefetch.opening_calls`)."""
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


def _encoded_opening(args: list[list[Any]], encoded: list[Any], whole: bool, rehearsed: bool) -> Opening:
    keys = tuple(json_key({"args": call, "kwargs": _NO_KWARGS}) for call in encoded)
    return Opening(tuple(args), tuple({"args": call} for call in encoded), keys, whole, rehearsed)


def opening_batch(suite: TestSuite, limits: Limits, meter: str,
                  opening: Opening | None) -> dict[str, Any] | None:
    """The begin message's ``prefetch``: the ``opening`` calls, for the worker to make as soon
    as the solution has loaded, unless the solution defines a name the suite's code may call it
    by (``unless``), so the batch needs no round trip of its own.

    When those calls are the whole check and no code of the suite's that runs once the check
    does names the entry point (a rehearsal saw such calls too), nothing else can reach the
    solution: the worker ends the job in the same reply (``end``).  HumanEval's definitions
    (its prompt) define a stub of the entry point, which the candidate replaces before any of
    that code runs.
    None under the instruction meter (one call per frame) or a suite time limit (which starts
    once the job has begun), and for a check with no such calls or more than one frame's worth.
    """
    if meter == "instructions" or limits.suite_time_s is not None:
        return None
    if opening is None or len(opening.wire) > CALLS_PER_FRAME:
        return None
    code = check_code(str(suite.check), suite.definitions)
    entry = str(suite.entry_point)
    end = opening.whole and (opening.rehearsed or entry not in code.looked_up_when_run)
    unless = sorted(unseen_ways(code, entry, opening))
    return {"name": entry, "calls": opening.wire, "end": end, "unless": unless}


def unseen_ways(code: CheckCode, entry: str, opening: Opening) -> frozenset[str]:
    """The names by which the suite's code may call the solution (:meth:`CheckCode.may_call`)
    that the ``opening`` calls do not account for: a rehearsal saw the calls made by the
    entry point's own name too, which it stood for."""
    names = code.may_call(entry)
    return names - {entry} if opening.rehearsed else names


def prefetched(candidate: Candidate, suite: TestSuite, code: CheckCode, begun: dict[str, Any],
               opening: Opening | None) -> Candidate:
    """``candidate`` with the ``opening`` calls made, when nothing but ``candidate`` can reach the
    solution (no code of the suite's calls its functions by name): by the worker as the job
    began (``prefetched`` in the begin reply), or now."""
    if opening is None:
        return candidate
    if begun.get("prefetched"):
        candidate.prefetch(opening, made=begun)
    elif not unseen_ways(code, str(suite.entry_point), opening) & set(begun["names"]):
        candidate.prefetch(opening)
    return candidate
