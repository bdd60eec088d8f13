"""Code mypy skips without a comment (branches it decides, ``no_type_check``) is type-checked anyway."""

from __future__ import annotations

import pytest

from rewardkit.analyzers import analyze, analyze_many

HEAD = '"""Adds."""\n\n\ndef add(a: int, b: int) -> int:\n    """Sum."""\n    return a + b\n\n\n'
WRONG = 'print(add("x", 1))\n'
HIDDEN = {
    "if not TYPE_CHECKING": f"from typing import TYPE_CHECKING\nif not TYPE_CHECKING:\n    {WRONG}",
    "else of typing.TYPE_CHECKING": f"import typing as t\nif t.TYPE_CHECKING:\n    pass\nelse:\n    {WRONG}",
    "no_type_check": f"from typing import no_type_check\n\n\n@no_type_check\ndef main() -> None:\n"
                     f"    \"\"\"Runs.\"\"\"\n    {WRONG}\n\nmain()\n",
    "typing.no_type_check": f"import typing\n\n\n@typing.no_type_check\ndef main() -> None:\n"
                            f"    \"\"\"Runs.\"\"\"\n    {WRONG}\n\nmain()\n",
    "if False": f"if False:\n    {WRONG}",
    "if 0": f"if 0:\n    {WRONG}",
    "while False": f"while False:\n    {WRONG}",
    "sys.version_info": f"import sys\nif sys.version_info < (3,):\n    {WRONG}",
    "sys.platform assert": f"import sys\nassert sys.platform == 'win32'\n{WRONG}",
    "conditional expression": "x = add('x', 1) if False else 0\nprint(x)\n",
}


@pytest.mark.parametrize("name", list(HIDDEN))
def test_code_hidden_from_mypy_is_checked(name: str) -> None:
    [report] = analyze_many([HEAD + HIDDEN[name]])
    assert "arg-type" in {f.rule for f in report.findings if f.tool == "mypy"}, report.findings


def test_lines_and_ordinary_loops_are_kept() -> None:
    code = HEAD + "from typing import TYPE_CHECKING\nwhile True:\n    break\nif TYPE_CHECKING:\n    pass\n" \
        + f"else:\n    {WRONG}"
    found = {(f.rule, f.line) for f in analyze(code).findings if f.tool == "mypy"}
    assert found == {("arg-type", 15)}
