"""Inline suppression comments cannot switch findings off unless the profile says so."""

from __future__ import annotations

import pytest

from rewardkit.analyzers import QualityReport, analyze_many
from rewardkit.analyzers.suppressions import erase_suppressions

SUPPRESSED = (
    "import subprocess  # nosec\n"
    "def f(x: int) -> str:  # pylint: disable=missing-function-docstring\n"
    "    return x  # type: ignore\n"
    "subprocess.call('ls ' + f(1), shell=True)  # nosec B602\n"
)
PLAIN = "\n".join(line.split("  #")[0] for line in SUPPRESSED.splitlines()) + "\n"


def _rules(report: QualityReport) -> set[str]:
    return {f"{f.tool}:{f.rule}" for f in report.findings}


def test_erasing_keeps_lines_and_other_comments() -> None:
    code = "x = 1  # nosec\ny = '# noqa'  # a plain note\n"
    assert erase_suppressions(code) == "x = 1  #\ny = '# noqa'  # a plain note\n"


@pytest.mark.usefixtures("fresh_cache")
def test_suppressions_are_ignored_by_default_and_honoured_on_request() -> None:
    plain, suppressed = analyze_many([PLAIN, SUPPRESSED], workers=1)
    assert {"bandit:B602", "mypy:return-value", "pylint:C0116"} <= _rules(suppressed)
    assert suppressed.findings == plain.findings
    (honoured,) = analyze_many([SUPPRESSED], {"thresholds": {"honour_suppressions": True}}, workers=1)
    assert not {"bandit:B602", "mypy:return-value", "pylint:C0116"} & _rules(honoured)
    assert honoured.score > suppressed.score


# Characters str.splitlines() breaks at and Python does not (and \r, which Python does).
LINE_BREAKS = ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\r", "\r\n"]
PLACES = {  # a line break put before the suppressed code, and the same text without it
    "own line": ("{brk}\n", "\n"),
    "in a comment": ("# note{brk}more\n", "# notemore\n"),
    "in a string": ("NOTE = 'a{brk}b'\n", "NOTE = 'ab'\n"),
}


@pytest.mark.usefixtures("fresh_cache")
@pytest.mark.parametrize("place", PLACES)
def test_no_line_break_keeps_a_suppression_alive(place: str) -> None:
    """Line breaks that Python does not count cannot shift which comment is erased (where
    Python rejects the character, the source is a syntax error: the lowest score)."""
    with_break, without = PLACES[place]
    (baseline,) = analyze_many([without + PLAIN], workers=1)
    expected = {(f.tool, f.rule) for f in baseline.findings}
    assert {("bandit", "B602"), ("mypy", "return-value")} <= expected
    variants = [with_break.format(brk=brk) + SUPPRESSED for brk in LINE_BREAKS]
    analysed = 0
    for brk, report in zip(LINE_BREAKS, analyze_many(variants, workers=2), strict=True):
        assert report.errors == () and report.score <= baseline.score, (repr(brk), report)
        if not any(f.is_input_fault for f in report.findings):
            assert {(f.tool, f.rule) for f in report.findings} >= expected, repr(brk)
            analysed += 1
    assert analysed >= 2  # \f and \r\n parse wherever they are


@pytest.mark.usefixtures("fresh_cache")
def test_a_noqa_in_a_string_does_not_silence_vulture() -> None:
    plain = "import os\n\n\ndef _helper():\n    return 1\n"
    hidden = "import os; NOTE = '# noqa'\n\n\ndef _helper():\n    return 1; X = '# NOQA'\n"
    plain_report, hidden_report = analyze_many([plain, hidden], workers=1)
    vulture = {f.rule for f in plain_report.findings if f.tool == "vulture"}
    assert vulture == {"unused-import", "unused-function"}
    assert vulture <= {f.rule for f in hidden_report.findings if f.tool == "vulture"}


def test_erasing_fails_closed_when_the_tokenizer_refuses() -> None:
    assert "nosec" not in erase_suppressions("x = '''unterminated  # nosec\n")
