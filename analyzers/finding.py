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

#: Severity weights of the CISQ GRPO paper (SPEC §4.4).
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
