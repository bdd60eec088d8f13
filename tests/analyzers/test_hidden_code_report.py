"""Hidden code scores lowest, yet the report keeps every other finding beside the hidden-code one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardkit.analyzers import analyze
from rewardkit.analyzers.cli import main

# unsafe deserialisation, a shell command, a hard-coded password, a request without timeout, and eval
OFFLINE = '''\
"""Loads a job and runs it."""
import pickle
import subprocess

import requests

PASSWORD = "hunter2"


def main() -> None:
    """Entry point."""
    with open("job.bin", "rb") as handle:
        job = pickle.load(handle)
    subprocess.run(str(job), shell=True, check=False)
    requests.get("http://example.com/" + PASSWORD)
    print(eval(input()))


main()
'''
# bandit's CWEs: 502 pickle, 78 shell=True, 259 password, 400 no timeout; 95 the hidden code itself
EXPECTED = {("bandit", 502), ("bandit", 78), ("bandit", 259), ("bandit", 400), ("rk-input", 95)}


def test_hidden_code_scores_zero_and_keeps_the_other_findings() -> None:
    report = analyze(OFFLINE)
    assert report.score == 0.0
    assert {(f.tool, f.cwe) for f in report.findings} >= EXPECTED
    assert {f.rule for f in report.findings if f.is_input_fault} == {"hidden-code"}


@pytest.mark.parametrize("form", ["json", "sarif"])
def test_the_cli_shows_them_all(form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "offline.py"
    path.write_text(OFFLINE)
    assert main([str(path), "--format", form, "--workers", "1"]) == 0
    out = capsys.readouterr().out
    json.loads(out)
    for cwe in (502, 78, 259, 400, 95):
        assert f"CWE-{cwe}" in out or f'"cwe": {cwe}' in out, cwe
