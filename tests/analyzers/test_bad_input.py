"""Bad input is a finding, never an exception."""

from __future__ import annotations

import time

import pytest

from rewardkit.analyzers import analyze, analyze_many


def _input_rules(code: object) -> list[str]:
    return [f.rule for f in analyze(code).findings if f.tool == "rk-input"]


def test_syntax_error_is_one_critical_finding_and_the_lowest_score() -> None:
    report = analyze("def f(:\n    pass\n")
    assert [(f.rule, f.severity, f.line) for f in report.findings] == [
        ("syntax-error", "critical", 1)
    ]
    assert report.score == 0.0
    assert report.errors == ()


def test_empty_source_is_analysed_without_errors() -> None:
    report = analyze("")
    assert report.errors == () and _input_rules("") == []


def test_megabyte_source_is_refused_quickly() -> None:
    big = "x = 1\n" * ((1 << 20) // 6 + 1)
    start = time.perf_counter()
    report = analyze(big)
    assert time.perf_counter() - start < 5
    assert [f.rule for f in report.findings] == ["source-too-large"]
    assert report.findings[0].cwe == 1080


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        (b"x = '\xff\xfe'\n", "decode-error"),
        ("x = 1\x00\n", "syntax-error"),
        (b"x = 1\x00\n", "syntax-error"),
        (None, "invalid-input"),
        (12, "invalid-input"),
        ("x = '\ud800'\n", "decode-error"),
    ],
)
def test_bad_input_becomes_a_finding(code: object, rule: str) -> None:
    assert _input_rules(code) == [rule]


def test_bytes_follow_the_coding_cookie() -> None:
    code = "# -*- coding: latin-1 -*-\nNAME = 'caf\u00e9'\n".encode("latin-1")
    assert _input_rules(code) == []


def test_bad_inputs_in_a_batch_do_not_disturb_the_rest() -> None:
    good = "def add(a: int, b: int) -> int:\n    return a + b\n"
    reports = analyze_many([None, good, b"\xff", "def (", good], workers=2)
    assert [r.findings[0].rule for r in reports[:1] + reports[2:4]] == [
        "invalid-input", "decode-error", "syntax-error",
    ]
    assert reports[1] == reports[4] and reports[1].errors == ()
