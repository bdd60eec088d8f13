"""Data types of the sandbox contract: Status, Limits, ExecutionResult."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any

from .runtime.protocol import LIMIT_DEFAULTS


class Status(str, Enum):
    """Outcome of running a solution against a test suite.

    ``sandbox_error`` is the only status that blames the infrastructure; every
    other one is the code's own outcome.
    """

    PASSED = "passed"
    WRONG_ANSWER = "wrong_answer"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    MEMORY_EXCEEDED = "memory_exceeded"
    OUTPUT_EXCEEDED = "output_exceeded"
    COMPILE_ERROR = "compile_error"
    SANDBOX_ERROR = "sandbox_error"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run.

    ``time_s`` bounds each test case (wall clock, and CPU through RLIMIT_CPU);
    ``memory_mb`` the address space (or the heap flag of JVM/Node/Go) and the
    memory of the run's whole process tree (its cgroup, tmpfs included);
    ``output_kb`` stdout plus stderr per test case (and the size of a call reply);
    ``suite_time_s``, if set, the wall clock of a whole run of the suite (every
    case, call and check together): past it the run ends with ``timeout``.
    """

    time_s: float = LIMIT_DEFAULTS["time_s"]
    memory_mb: int = int(LIMIT_DEFAULTS["memory_mb"])
    output_kb: int = int(LIMIT_DEFAULTS["output_kb"])
    compile_time_s: float = LIMIT_DEFAULTS["compile_time_s"]
    file_size_mb: int = int(LIMIT_DEFAULTS["file_size_mb"])
    suite_time_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("time_s", "memory_mb", "output_kb", "compile_time_s", "file_size_mb", "suite_time_s"):
            value = getattr(self, name)
            if value is None and name == "suite_time_s":
                continue
            if not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"Limits.{name} must be a positive number, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        """The limits as a dict, as sent to the worker (an unset ``suite_time_s`` left out); its
        fields are numbers, so a shallow copy (on every job's path: not ``asdict``)."""
        return {name: value for name, value in vars(self).items() if value is not None}


@dataclass
class ExecutionResult:
    """What running a solution against a suite produced.

    Units: seconds (``time_s`` is CPU time of the solution's own work, every
    process it started included; ``wall_s`` elapsed time), KiB
    (``peak_memory_kb``: the high-water mark of the memory the run added, all
    its processes and tmpfs files together), KiB·s (``integral_kb_s``, of the
    same memory over time).  With ``repeats > 1`` the metrics are medians and
    ``spread`` holds each metric's relative spread (MAD / median).
    """

    status: Status
    tests_passed: int = 0
    tests_total: int = 0
    time_s: float = 0.0
    wall_s: float = 0.0
    peak_memory_kb: float = 0.0
    integral_kb_s: float = 0.0
    instructions: int | None = None
    feedback: str = ""
    stderr: str = ""
    repeats: int = 1
    spread: dict[str, float] = field(default_factory=dict)
    failed_case: int | None = None

    @property
    def passed(self) -> bool:
        """Whether every test passed."""
        return self.status == Status.PASSED

    @property
    def pass_rate(self) -> float:
        """Fraction of tests passed (0.0 for an empty suite)."""
        return self.tests_passed / self.tests_total if self.tests_total else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields, with ``status`` as its string and ``passed``/``pass_rate`` added."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["status"] = self.status.value
        data["passed"] = self.passed
        data["pass_rate"] = self.pass_rate
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExecutionResult:
        """Rebuild a result from :meth:`to_dict` output; unknown keys are ignored."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["status"] = Status(values["status"])
        return cls(**values)

    @classmethod
    def sandbox_error(cls, message: str, tests_total: int = 0) -> ExecutionResult:
        """A result that blames the infrastructure, not the code."""
        return cls(Status.SANDBOX_ERROR, tests_total=tests_total, feedback=message)
