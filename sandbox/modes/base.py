"""What every test mode shares: the tally of a run, the run itself, and the :class:`Mode` interface.

A mode owns a suite's validation, the languages it runs, the message that
begins its job on the worker, and the judging of what the worker reports.
:class:`~rewardkit.sandbox.suite.TestSuite` holds the data; its mode (from
:data:`~rewardkit.sandbox.modes.MODES`) says what the data means.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from ..link import Link
from ..runtime import compile_plain, protocol
from ..suite import SuiteError, TestSuite
from ..types import ExecutionResult, Limits, Status

if TYPE_CHECKING:
    from .script import Candidate


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

    def outcome(self, report: dict[str, Any], index: int | None, limits: Limits) -> None:
        """Record a worker report whose outcome is not ``ok``: a limit hit, or a crash."""
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
        self.fail(OUTCOME_STATUS.get(outcome, Status.RUNTIME_ERROR), index, text)

    def result(self, meter: str) -> ExecutionResult:
        """The final result; the instruction count is kept only under that meter."""
        return ExecutionResult(
            status=self.status, tests_passed=self.passed, tests_total=self.total,
            time_s=self.time_s, wall_s=self.wall_s, peak_memory_kb=self.peak_kb,
            integral_kb_s=self.integral,
            instructions=self.instructions if meter == "instructions" else None,
            feedback=self.feedback, stderr=self.stderr, failed_case=self.failed_case)


class SuiteCode(Protocol):
    """Where a suite's own code (its evaluator or check) runs: here, or in a referee's sandbox."""

    def matches(self, expected: str, actual: str) -> bool:
        """The evaluator's verdict on one stdio case."""

    def check(self, candidate: Candidate, helpers: dict[str, Candidate]) -> tuple[str, str]:
        """The outcome of ``check(candidate)``: ``passed``, ``failed`` (an assertion), ``error``
        (the solution raised), ``gone`` (its process ended) or ``raised`` (the check's own
        fault), with a message.  ``helpers``: the solution's other functions, by name."""


@dataclass
class Run:
    """One job in progress, as a mode judges it: the channel, the inputs and the tally."""

    link: Link
    code: str
    suite: TestSuite
    limits: Limits
    meter: str
    tally: Tally
    suite_code: SuiteCode
    begun: dict[str, Any]


class Mode:
    """A test mode: how its suites are read and written, what it runs, and how it is judged.

    ``worker_kind`` is how the worker runs the solution: a ``program`` run per
    case, or a ``module`` loaded once and called.
    """

    name: ClassVar[str]
    worker_kind: ClassVar[Literal["program", "module"]] = "program"
    fields: ClassVar[tuple[str, ...]] = ()  # the suite fields the mode reads besides ``mode``

    def languages(self) -> frozenset[str] | None:
        """The languages the mode runs (canonical names); None for every language."""
        return None

    def refusal(self, language: str) -> str | None:
        """Why the mode cannot run ``language`` (a canonical name), or None when it can."""
        names = self.languages()
        if names is None or language in names:
            return None
        shown = ", ".join(sorted(name.capitalize() for name in names))
        return f"{self.name} mode runs {shown} only; use stdio for {language}"

    def read(self, data: dict[str, Any]) -> dict[str, Any]:
        """The validated suite fields of ``data`` (``cases``, ``entry_point``, ``check``,
        ``evaluator``, ``definitions``); SuiteError says what is wrong."""
        raise NotImplementedError

    def validate(self, suite: TestSuite) -> None:
        """SuiteError for options in the suite's ``extra`` that the mode could not use."""

    def to_dict(self, suite: TestSuite) -> dict[str, Any]:
        """The suite's own fields, JSON-ready (its ``extra`` is added by the caller)."""
        raise NotImplementedError

    def size(self, suite: TestSuite) -> int:
        """How many tests the suite counts."""
        return len(suite.cases)

    def refused_code(self, code: str) -> str | None:
        """A compile error for what the mode refuses in a solution, or None."""
        return None

    def begin(self, message: protocol.Begin, suite: TestSuite, language: str) -> protocol.Begin:
        """The message that begins the job, with the mode's own fields added."""
        return message

    def judge(self, run: Run) -> None:
        """Run the suite's tests on the worker and tally each verdict."""
        raise NotImplementedError


def compiles(name: str, source: str) -> None:
    """SuiteError when a suite's Python source (its check, evaluator, definitions) does not compile."""
    try:
        compile_plain(source, f"<{name}>")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise SuiteError(f"the suite's {name} source does not compile: {type(exc).__name__}: {exc}") from exc


def text_field(data: dict[str, Any], name: str, needed: str | None = None) -> str | None:
    """A field that is source text: SuiteError when it is given and not a string, or when it is
    missing and ``needed`` (the message) says the mode needs it."""
    value = data.get(name)
    if value is None:
        if needed is not None:
            raise SuiteError(needed)
        return None
    if not isinstance(value, str):
        raise SuiteError(f"'{name}' must be source text (a string), got {type(value).__name__}")
    return value
