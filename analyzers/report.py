"""`QualityReport`: the findings of one source and the score ``1 / (1 + W)``.

A source that defeated the analysis (an input fault: it does not parse, hides its
code, makes a tool overrun...) scores 0 overall and in every characteristic, below
any source that could be analysed: a trick that blinds the tools must never pay.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .finding import CHARACTERISTICS, WEIGHTS, Characteristic, Finding, ToolError


def weighted_count(findings: Iterable[Finding]) -> float:
    """``W = sum_s w_s * N_s`` over the findings' severities."""
    return sum(WEIGHTS[f.severity] for f in findings)


def quality_score(weighted_count: float) -> float:
    """CISQ paper: ``r_quality = 1 / (1 + W)``, for the whole source or one characteristic.

    >>> quality_score(0.0), quality_score(1.5)
    (1.0, 0.4)
    """
    return 1.0 / (1.0 + weighted_count)


@dataclass(frozen=True)
class QualityReport:
    """Analysis result of one source: score, W, findings, per-characteristic scores, errors."""

    score: float
    weighted_count: float
    findings: tuple[Finding, ...]
    by_characteristic: dict[Characteristic, float] = field(default_factory=dict)
    errors: tuple[ToolError, ...] = ()

    @classmethod
    def from_findings(
        cls, findings: Iterable[Finding], errors: Iterable[ToolError] = ()
    ) -> QualityReport:
        """Score the findings (0 with an input fault); findings and errors in a canonical order."""
        ordered = tuple(sorted(findings, key=Finding.sort_key))
        total = weighted_count(ordered)
        errs = tuple(sorted(set(errors), key=lambda e: (e.tool, e.reason)))
        if any(f.is_input_fault for f in ordered):
            return cls(0.0, total, ordered, dict.fromkeys(CHARACTERISTICS, 0.0), errs)
        per_char = {
            c: quality_score(weighted_count(f for f in ordered if f.characteristic == c))
            for c in CHARACTERISTICS
        }
        return cls(quality_score(total), total, ordered, per_char, errs)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "score": self.score,
            "weighted_count": self.weighted_count,
            "findings": [f.to_dict() for f in self.findings],
            "by_characteristic": dict(self.by_characteristic),
            "errors": [e.to_dict() for e in self.errors],
        }
