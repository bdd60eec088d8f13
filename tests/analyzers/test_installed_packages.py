"""What a source imports is not analysed with it: the findings of a source that uses a large
installed package (transformers) come as fast as any, and are those it would get if the
package were not installed at all (mypy already reads no site-packages; pylint's astroid now
builds the standard library only)."""

from __future__ import annotations

import pytest

from rewardkit.analyzers import analyze_many

USES_TRANSFORMERS = '''"""Loads a config."""
from transformers import AutoConfig


def load(path: str) -> object:
    """The config at ``path``, padded with token 0."""
    config = AutoConfig.from_pretrained(path, revision="main")
    config.pad_token_id = 0
    return config
'''
NOT_INSTALLED = USES_TRANSFORMERS.replace("transformers", "transformerz_not_installed")


def _findings(report: object) -> list[tuple[str, str, int | None]]:
    """The findings but bandit's, which reads the text (its hub-download rule names transformers)."""
    return sorted((f.tool, f.rule, f.line) for f in report.findings  # type: ignore[attr-defined]
                  if f.tool != "bandit")


@pytest.mark.usefixtures("fresh_cache")
def test_a_source_that_uses_a_large_package_is_analysed_as_if_it_were_not_installed() -> None:
    """Before: astroid built transformers to infer ``config.pad_token_id = 0`` (69 s), so the
    source scored 0 for an analysis timeout (30 s budget)."""
    pytest.importorskip("transformers")  # what makes the case: the package is installed here
    used, absent = analyze_many([USES_TRANSFORMERS, NOT_INSTALLED], workers=1)
    assert used.errors == () and absent.errors == ()
    assert ("rk-input", "analysis-timeout") not in {(f.tool, f.rule) for f in used.findings}, used
    assert _findings(used) == _findings(absent)
    assert _findings(used)  # it was analysed: docstrings are there, the attribute is unused...
