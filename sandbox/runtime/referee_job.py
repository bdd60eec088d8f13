"""The referee's code: a suite's evaluator or check, run inside the sandbox.

This file is never imported.  Its text, followed by a line that assigns the
suite's sources to ``SOURCES``, is the code of a module job on a sandbox worker of its
own (see :mod:`rewardkit.sandbox.referee`); the trusted side calls its
``referee_*`` functions, and every value crosses as plain data.

``referee_start(helpers)`` runs ``check(candidate)`` on a thread, where
``candidate``, and each of the solution's other functions named in
``helpers`` that the suite's code does not define, hands each call back to
the trusted side as an event: ``["call", args, kwargs, name]`` (name ``""``
for the entry point).  The trusted side makes the call in the solution's sandbox and
answers with ``referee_resume(kind, value)`` (``kind``: ``value``, ``error``
or ``gone``), which returns the next event, until ``["done", outcome,
message]``.  The check never shares a process with the solution.
"""

import queue
import threading
from typing import Any

SOURCES: dict[str, Any] = {}  # replaced by the job's last line: entry_point, definitions, check, evaluator


class CandidateError(Exception):
    """The solution raised, or sent back what could not be read."""


class CandidateGone(Exception):
    """The solution's process ended (time or memory limit, crash, exit)."""


_events: "queue.Queue[list[Any]]" = queue.Queue()
_answers: "queue.Queue[tuple[str, Any]]" = queue.Queue()
_evaluators: list[Any] = []


def _remote(name: str) -> Any:
    """Stands for one of the solution's functions ("" for the entry point): the trusted side calls it."""
    def call(*args: Any, **kwargs: Any) -> Any:
        _events.put(["call", list(args), kwargs, name])
        kind, value = _answers.get()
        if kind == "value":
            return value
        raise (CandidateGone if kind == "gone" else CandidateError)(value)

    return call


_candidate = _remote("")


def _run_check(helpers: list[str]) -> None:
    namespace: dict[str, Any] = {"__name__": "__check__"}
    namespace.update((name, _remote(name)) for name in helpers)
    try:
        if SOURCES.get("definitions") is not None:
            exec(SOURCES["definitions"], namespace)  # nosec B102 - the suite's own code, sandboxed
        namespace[SOURCES["entry_point"]] = _candidate
        exec(SOURCES["check"], namespace)  # nosec B102 - the suite's own code, sandboxed
        namespace["check"](_candidate)
    except CandidateGone:
        outcome = ["gone", ""]
    except CandidateError as exc:
        outcome = ["error", str(exc)]
    except AssertionError as exc:
        outcome = ["failed", str(exc)]
    except BaseException as exc:  # the check's own fault, whatever it raised
        outcome = ["raised", f"{type(exc).__name__}: {exc}"]
    else:
        outcome = ["passed", ""]
    _events.put(["done", *outcome])


def referee_start(helpers: list[str]) -> list[Any]:
    """Start the check, with ``helpers`` (the solution's other functions) in its globals; its first event."""
    threading.Thread(target=_run_check, args=([str(name) for name in helpers],), daemon=True).start()
    return _events.get()


def referee_resume(kind: str, value: Any) -> list[Any]:
    """Answer the check's pending call; its next event."""
    _answers.put((kind, value))
    return _events.get()


def referee_evaluate(expected: str, actual: str) -> bool:
    """The evaluator's verdict on one stdio case, as a bool."""
    if not _evaluators:
        namespace: dict[str, Any] = {"__name__": "__evaluator__"}
        exec(SOURCES["evaluator"], namespace)  # nosec B102 - the suite's own code, sandboxed
        _evaluators.append(namespace["evaluate"])
    return bool(_evaluators[0](expected, actual))
