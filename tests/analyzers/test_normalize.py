"""A coding cookie cannot blind a tool: sources are decoded per PEP 263 and read back as UTF-8."""

from __future__ import annotations

import pytest

from rewardkit.analyzers import QualityReport, analyze_many
from rewardkit.analyzers.normalize import decode, normalize

BODY = "import subprocess\nNAME = 'caf\u00e9'\nsubprocess.call('ls ' + NAME, shell=True)\n"
PLAIN = "#\n" + BODY  # the cookie line blanked, so that lines stay where they were


def _keys(report: QualityReport) -> set[tuple[str, str, int]]:
    return {(f.tool, f.rule, f.line) for f in report.findings}


COOKIES = {
    "utf-16 cookie": "# -*- coding: utf-16 -*-\n" + BODY,
    "latin-1 cookie on text": "# coding: latin-1\n" + BODY,
    "ascii cookie on non-ASCII text": "# -*- coding: ascii -*-\n" + BODY,
    "cookie on line 2": "#!/usr/bin/env python3\n# vim: set fileencoding=utf-16 :\n" + BODY,
    "unknown codec": "# coding: no-such-codec\n" + BODY,
    "latin-1 bytes": ("# coding: latin-1\n" + BODY).encode("latin-1"),
    "utf-8 bytes saying latin-1": ("# coding: latin-1\n" + BODY).encode("utf-8"),
    "BOM and cookie": "\ufeff# coding: utf-8\n" + BODY,
    "CRLF and cookie": ("# coding: utf-16\n" + BODY).replace("\n", "\r\n"),
}


@pytest.mark.usefixtures("fresh_cache")
def test_no_cookie_blinds_a_tool() -> None:
    plain, cookie_line2 = analyze_many([PLAIN, "#!/usr/bin/env python3\n#\n" + BODY], workers=2)
    assert {"bandit:B602", "pylint:C0114"} <= {f"{t}:{r}" for t, r, _ in _keys(plain)}
    reports = analyze_many(list(COOKIES.values()), workers=2)
    for name, report in zip(COOKIES, reports, strict=True):
        assert report.errors == (), (name, report.errors)
        expected = cookie_line2 if name == "cookie on line 2" else plain
        if name == "utf-8 bytes saying latin-1":  # decoded as Python would: mojibake, same findings
            assert _keys(report) == _keys(plain), name
        else:
            assert report.findings == expected.findings, name


def test_decode_follows_pep_263() -> None:
    text = "# coding: latin-1\nx = '\u00e9'\n"
    assert decode(text.encode("latin-1")) == text
    assert decode(b"\xef\xbb\xbfx = 1\n") == "x = 1\n"
    with pytest.raises(SyntaxError):
        decode(b"# coding: no-such-codec\nx = 1\n")


def test_normalize_blanks_cookies_and_keeps_lines() -> None:
    assert normalize("# -*- coding: utf-16 -*-\nx = 1\n") == "#\nx = 1\n"
    assert normalize("#!python\r\n# coding=latin-1\rx = 1\r\n") == "#!python\n#\nx = 1\n"
    assert normalize("x = 1\n# coding: utf-16\n") == "x = 1\n#\n"
    assert normalize("x = 1\ny = 2\n# coding: utf-16\n") == "x = 1\ny = 2\n# coding: utf-16\n"
