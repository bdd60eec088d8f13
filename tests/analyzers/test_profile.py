"""Profiles switch tools off, change severities and thresholds; bad profiles are rejected."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardkit.analyzers import analyze, load_profile

CODE = "import os\ndef f(a, b, c, d, e, g):\n    return a\n"


def test_severity_override_and_off() -> None:
    base = analyze(CODE, {"tools": {"mypy": False}})
    changed = analyze(CODE, {"tools": {"mypy": False},
                             "severity": {"pylint:R0913": "critical", "vulture:*": "off"}})
    r0913 = [f.severity for f in changed.findings if f.rule == "R0913"]
    assert r0913 == ["critical"]
    assert any(f.tool == "vulture" for f in base.findings)
    assert not any(f.tool == "vulture" for f in changed.findings)


def test_tool_switched_off_and_threshold_changed() -> None:
    report = analyze(CODE, {"tools": {"pylint": True, "vulture": False, "mypy": False},
                            "thresholds": {"max_args": 8}})
    assert not any(f.rule == "R0913" for f in report.findings)
    assert not any(f.tool == "vulture" for f in report.findings)


def test_toml_profile_file(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[tools]\nmypy = false\n[severity]\n"vulture:unused-import" = "high"\n')
    report = analyze(CODE, path)
    assert [f.severity for f in report.findings if f.rule == "unused-import"] == ["high"]
    assert not any(f.tool == "mypy" for f in report.findings)


@pytest.mark.parametrize(
    "bad",
    [{"nope": {}}, {"tools": {"flake9": True}}, {"thresholds": {"max_argz": 3}},
     {"severity": {"pylint:R0913": "severe"}}, {"severity": {"R0913": "low"}}],
)
def test_bad_profiles_are_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        load_profile(bad)


def test_fingerprint_tracks_settings() -> None:
    assert load_profile(None).fingerprint == load_profile({}).fingerprint
    assert load_profile(None).fingerprint != load_profile({"tools": {"mypy": False}}).fingerprint
