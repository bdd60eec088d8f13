"""A source that defeats the analysis scores the lowest quality: a finding against it, never None."""

from __future__ import annotations

import pytest

from rewardkit.analyzers import QualityReport, analyze_many

DEEP = "def total(a):\n    return " + " + ".join(["a"] * 2000) + "\n"  # a 2,000-term expression
TERRIBLE = (  # valid code with many findings: an input fault must still score below it
    "import os, sys, subprocess, pickle\n"
    "def f(a, b, c, d, e, g, h):\n"
    "    while True:\n"
    "        try:\n"
    "            subprocess.call('rm ' + a, shell=True)\n"
    "            os.system('x' + b)\n"
    "            pickle.dumps(c)\n"
    "        except:\n"
    "            pass\n"
    "x: int = 'a'\n"
)
FAULTS = {
    "a 2,000-term expression": DEEP,
    "nested 150 levels": "X = " + "-" * 150 + "1\n",
    "too deep to parse": "X = " + " + ".join(["1"] * 20000) + "\n",
    "syntax error": "def f(:\n    pass\n",
    "undecodable bytes": b"x = '\xff\xfe'\n",
    "unknown codec": b"# coding: no-such-codec\nx = 1\n",
    "NUL byte": "x = 1\x00\n",
    "not text": None,
    "oversized": "x = 1\n" * 50_000,
}


def _input_rules(report: QualityReport) -> list[str]:
    return [f.rule for f in report.findings if f.tool == "rk-input"]


@pytest.mark.usefixtures("fresh_cache")
def test_input_faults_score_the_lowest_not_none() -> None:
    terrible, *faults = analyze_many([TERRIBLE, *FAULTS.values()], workers=2)
    assert terrible.errors == () and 0 < terrible.score < 0.05
    for name, report in zip(FAULTS, faults, strict=True):
        assert report.errors == (), (name, report.errors)
        assert len(_input_rules(report)) == 1, (name, report.findings)
        assert report.score == 0.0 and set(report.by_characteristic.values()) == {0.0}, name
    assert _input_rules(faults[0]) == ["too-deep"]
    assert "nested 2004 levels deep" in faults[0].findings[0].message


@pytest.mark.usefixtures("fresh_cache")
def test_a_tool_defeated_by_recursion_is_the_sources_fault() -> None:
    """Let the 2,000-term expression reach the tools: those that recurse too deep blame it."""
    (report,) = analyze_many([DEEP], {"thresholds": {"max_ast_depth": 100_000}}, workers=1)
    assert report.errors == () and report.score == 0.0
    assert {(f.rule, f.severity) for f in report.findings} == {("analysis-recursion", "critical")}
    blamed = {f.message.split()[0] for f in report.findings}
    assert {"pylint", "radon", "vulture"} <= blamed, report.findings
    assert all("exceeded Python's recursion limit" in f.message for f in report.findings)


@pytest.mark.usefixtures("fresh_cache")
@pytest.mark.parametrize("source", ["x = 'a' * (10 ** 11)\n", "x = 'ab' * (10 ** 9)\n"],
                         ids=["100 GB constant", "2 GB constant"])
def test_a_tool_defeated_by_memory_is_the_sources_fault(source: str) -> None:
    """mypy folds constant expressions: a short source makes it allocate gigabytes.

    Analysis workers have a bounded address space, so the tool gets a MemoryError
    that is blamed on the source instead of the machine running out of memory
    (or, before, mypy's internal error turning the sample into None).
    """
    (report,) = analyze_many([source], workers=1)
    assert report.errors == () and report.score == 0.0, report
    assert [(f.tool, f.rule) for f in report.findings] == [("rk-input", "analysis-memory")]
    assert report.findings[0].message.startswith("mypy ")
