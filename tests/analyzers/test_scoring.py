"""Score formula (SPEC §4.4), per-characteristic scores and the report's JSON form."""

from __future__ import annotations

import json

import pytest

from rewardkit.analyzers import WEIGHTS, Finding, QualityReport, ToolError


def _f(severity: str, characteristic: str = "reliability", line: int = 1) -> Finding:
    return Finding("t", "r", "m", line, severity, characteristic, None)


def test_weights_are_the_papers() -> None:
    assert WEIGHTS == {"info": 0.5, "low": 1.0, "medium": 2.5, "high": 5.0, "critical": 10.0}


def test_score_is_one_over_one_plus_weighted_count() -> None:
    findings = [_f("info"), _f("low"), _f("medium", "security"), _f("high"), _f("critical")]
    report = QualityReport.from_findings(findings)
    assert report.weighted_count == pytest.approx(19.0)
    assert report.score == pytest.approx(1 / 20)
    assert report.by_characteristic["security"] == pytest.approx(1 / 3.5)
    assert report.by_characteristic["reliability"] == pytest.approx(1 / 17.5)
    assert report.by_characteristic["performance"] == 1.0


def test_clean_report_scores_one() -> None:
    report = QualityReport.from_findings([])
    assert report.score == 1.0 and report.weighted_count == 0
    assert set(report.by_characteristic.values()) == {1.0}


def test_findings_are_put_in_canonical_order() -> None:
    a, b = _f("low", line=9), _f("low", line=2)
    assert QualityReport.from_findings([a, b]) == QualityReport.from_findings([b, a])


def test_to_dict_is_plain_json() -> None:
    report = QualityReport.from_findings([_f("high")], [ToolError("mypy", "boom")])
    data = json.loads(json.dumps(report.to_dict()))
    assert data["findings"][0]["severity"] == "high"
    assert data["errors"] == [{"tool": "mypy", "reason": "boom"}]
    assert data["score"] == pytest.approx(1 / 6)
