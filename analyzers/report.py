"""`QualityReport`: the findings of one source and the score ``1 / (1 + W)``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .finding import CHARACTERISTICS, WEIGHTS, Characteristic, Finding, ToolError


def weighted_count(findings: Iterable[Finding]) -> float:
    """``W = sum_s w_s * N_s`` over the findings' severities (SPEC §4.4)."""
    return sum(WEIGHTS[f.severity] for f in findings)


def score_of(weight: float) -> float:
    """``r_quality = 1 / (1 + W)``."""
    return 1.0 / (1.0 + weight)


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
        """Score the findings; findings and errors are put in a canonical order."""
        ordered = tuple(sorted(findings, key=Finding.sort_key))
        total = weighted_count(ordered)
        per_char = {
            c: score_of(weighted_count(f for f in ordered if f.characteristic == c))
            for c in CHARACTERISTICS
        }
        errs = tuple(sorted(set(errors), key=lambda e: (e.tool, e.reason)))
        return cls(score_of(total), total, ordered, per_char, errs)

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form."""
        return {
            "score": self.score,
            "weighted_count": self.weighted_count,
            "findings": [f.to_dict() for f in self.findings],
            "by_characteristic": dict(self.by_characteristic),
            "errors": [e.to_dict() for e in self.errors],
        }
