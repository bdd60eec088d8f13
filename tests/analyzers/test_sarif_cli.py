"""SARIF 2.1.0 validity and the ``rewardkit analyze`` command (called as ``main``)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from rewardkit.analyzers import QualityReport, ToolError, analyze
from rewardkit.analyzers.cli import main
from rewardkit.analyzers.sarif import to_sarif

SCHEMA = json.loads((Path(__file__).parent / "sarif_2.1.0_subset.schema.json").read_text())
BAD = "import subprocess\nsubprocess.call('ls ' + x, shell=True)\ntry:\n    f()\nexcept:\n    pass\n"


def _validate(doc: dict[str, Any]) -> None:
    jsonschema.Draft7Validator(SCHEMA).validate(doc)


def test_sarif_is_valid_and_carries_cwe_taxa_and_levels() -> None:
    failed = QualityReport.from_findings([], [ToolError("mypy", "crashed")])
    doc = to_sarif([("bad.py", analyze(BAD)), ("other.py", failed)])
    _validate(doc)
    run = doc["runs"][0]
    b602 = next(r for r in run["results"] if r["ruleId"] == "bandit/B602")
    assert b602["level"] == "error" and b602["taxa"][0]["id"] == "78"
    assert b602["properties"]["security-severity"] == "9.5"
    assert b602["locations"][0]["physicalLocation"]["region"]["startLine"] == 2
    rule = run["tool"]["driver"]["rules"][b602["ruleIndex"]]
    assert rule["id"] == "bandit/B602"
    assert rule["relationships"][0]["target"]["id"] == "78"
    assert {t["id"] for t in run["taxonomies"][0]["taxa"]} >= {"78", "703", "390"}
    assert run["invocations"][0]["executionSuccessful"] is False


def test_schema_rejects_a_broken_document() -> None:
    doc = to_sarif([("bad.py", analyze(BAD))])
    doc["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        _validate(doc)


@pytest.fixture
def files(tmp_path: Path) -> list[str]:
    bad, good = tmp_path / "bad.py", tmp_path / "good.py"
    bad.write_text(BAD)
    good.write_text('"""Fine."""\n')
    return [str(bad), str(good)]


def test_cli_json(files: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*files, "--format", "json", "--workers", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [f["path"] for f in data["files"]] == files
    assert data["files"][0]["score"] < data["files"][1]["score"] == 1.0


def test_cli_sarif_and_table(files: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*files, "--format", "sarif", "--workers", "1"]) == 0
    _validate(json.loads(capsys.readouterr().out))
    assert main([files[0]]) == 0
    out = capsys.readouterr().out
    assert "bandit:B602" in out and "CWE-78" in out


def test_cli_reads_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fake = io.TextIOWrapper(io.BytesIO(b"def (\n"))
    monkeypatch.setattr(sys, "stdin", fake)
    assert main(["-", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["files"][0]["path"] == "<stdin>"
    assert data["files"][0]["findings"][0]["rule"] == "syntax-error"


@pytest.mark.parametrize("argv", [[], ["x.py", "--format", "xml"], ["/no/such/file.py"]])
def test_cli_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err


def test_cli_summary_and_fail_under(files: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The gate ``make quality`` uses: exit 1 under the floor, one line per file."""
    assert main([*files, "--summary", "--workers", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3 and out[2].startswith("2 files: mean score")
    mean = float(out[2].split("mean score ")[1].split(",")[0])
    assert 0.5 < mean < 1.0
    assert main([*files, "--summary", "--fail-under", f"{mean - 0.01}"]) == 0
    assert main([*files, "--summary", "--fail-under", f"{mean + 0.01}"]) == 1
    assert "under" in capsys.readouterr().err


def test_rewardkit_analyze_help_is_analyzes_own(capsys: pytest.CaptureFixture[str]) -> None:
    from rewardkit.cli import main as rewardkit_main

    assert rewardkit_main(["analyze", "-h"]) == 0
    assert "--fail-under" in capsys.readouterr().out
