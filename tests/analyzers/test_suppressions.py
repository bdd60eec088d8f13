"""Inline suppression comments cannot switch findings off unless the profile says so."""

from __future__ import annotations

import pytest

from rewardkit.analyzers import QualityReport, analyze_many
from rewardkit.analyzers.source import erase_suppressions

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
