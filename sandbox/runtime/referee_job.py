"""The referee's code: a suite's evaluator or check, run inside the sandbox.

This file is never imported.  Its text, followed by a line that assigns the
suite's sources to ``SOURCES``, is the code of a module job on a sandbox worker of its
own (see :mod:`rewardkit.sandbox.referee`); the trusted side calls its
``referee_*`` functions, and every value crosses as plain data.

``referee_start`` runs ``check(candidate)`` on a thread, where ``candidate``
hands each call back to the trusted side as an event: ``["call", args,
kwargs]``.  The trusted side makes the call in the solution's sandbox and
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


def _candidate(*args: Any, **kwargs: Any) -> Any:
    """Stands for the solution's entry point: the call is made by the trusted side."""
    _events.put(["call", list(args), kwargs])
    kind, value = _answers.get()
    if kind == "value":
        return value
    raise (CandidateGone if kind == "gone" else CandidateError)(value)


def _run_check() -> None:
    namespace: dict[str, Any] = {"__name__": "__check__"}
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


def referee_start() -> list[Any]:
    """Start the check; its first event."""
    threading.Thread(target=_run_check, daemon=True).start()
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
