"""Whose fault a failed analysis is: the source's (an input fault, scored 0) or ours (None).

An input fault is an ``rk-input`` finding: the source did not decode or parse,
was too large or too deep, hid its code (:mod:`.source`), or made a tool fail:

* a tool that exceeds Python's recursion limit on a source, or the memory of
  its worker process (:data:`.analysis_worker.MEMORY_MB`; mypy folds ``'a' * 10**11``),
  was defeated by that source (``analysis-recursion``, ``analysis-memory``),
  wherever in its causes the RecursionError or MemoryError is, since tools
  re-raise or wrap it;
* a tool still busy with one source after ``tool_timeout_s`` (``analysis-timeout``)
  and a source that crashes the analysis process twice (``analysis-crash``)
  are judged by the analysis pool (:mod:`.pool`), which kills and restarts workers.

Any other failure of a tool on a source that parsed is a fault of the tool or
the machine: a :class:`~.finding.ToolError`, and rewards leave the sample out.
"""

from __future__ import annotations

from .finding import INPUT_FAULT_TOOL, Finding, ToolError
from .profile import Profile
from .report import QualityReport

EXHAUSTION = {RecursionError: ("analysis-recursion", "exceeded Python's recursion limit on this "
                                                   "source (nested too deep for it)"),
              MemoryError: ("analysis-memory", "ran out of its worker's memory on this source")}


def exhaustion_in(exc: BaseException) -> tuple[str, str] | None:
    """The input-fault rule and message when ``exc`` is, or was raised from or during,
    a RecursionError or MemoryError; None otherwise."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        for kind, fault in EXHAUSTION.items():
            if isinstance(current, kind):
                return fault
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def input_fault(profile: Profile, rule: str, message: str, line: int = 1) -> Finding | None:
    """The ``rk-input`` finding of an input fault (None if the profile switched the rule off)."""
    return profile.finding(INPUT_FAULT_TOOL, rule, message, line)


def fault_report(profile: Profile, rule: str, message: str) -> QualityReport:
    """The report of a source whose analysis it defeated: the fault alone, score 0."""
    found = input_fault(profile, rule, message)
    return QualityReport.from_findings([found] if found else [])


def infrastructure_report(tool: str, reason: str) -> QualityReport:
    """The report of a source whose analysis failed for reasons not its own: an error, no score."""
    return QualityReport.from_findings((), [ToolError(tool, reason)])
