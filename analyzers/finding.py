"""The one normalized finding type every tool adapter returns, and the score weights."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["info", "low", "medium", "high", "critical"]
Characteristic = Literal["maintainability", "security", "performance", "reliability"]

SEVERITIES: tuple[Severity, ...] = ("info", "low", "medium", "high", "critical")
CHARACTERISTICS: tuple[Characteristic, ...] = (
    "maintainability",
    "security",
    "performance",
    "reliability",
)

#: The tool name of input faults: findings that mean the source itself defeated the
#: analysis (it does not decode or parse, is too large or too deep, hides its code, or
#: made a tool overrun, recurse too deep or crash). A report with one scores 0.
INPUT_FAULT_TOOL = "rk-input"

#: Severity weights of the CISQ GRPO paper.
WEIGHTS: dict[Severity, float] = {
    "info": 0.5,
    "low": 1.0,
    "medium": 2.5,
    "high": 5.0,
    "critical": 10.0,
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One issue found in one source: which tool, which rule, where, how bad."""

    tool: str
    rule: str
    message: str
    line: int
    severity: Severity
    characteristic: Characteristic
    cwe: int | None = None

    @property
    def is_input_fault(self) -> bool:
        """Whether this finding says the source defeated the analysis (see ``INPUT_FAULT_TOOL``)."""
        return self.tool == INPUT_FAULT_TOOL

    def sort_key(self) -> tuple[int, str, str, str]:
        """Stable order used in every report: by line, then tool, rule, message."""
        return (self.line, self.tool, self.rule, self.message)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ToolError:
    """A tool that failed or timed out on a source; its findings are missing."""

    tool: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        """Plain-JSON form."""
        return {"tool": self.tool, "reason": self.reason}
