"""`rewardkit run`: table or JSON, exit 0 whatever the verdict, 2 on bad usage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardkit.cli import main

TESTS = {"mode": "stdio", "cases": [{"input": "2 3\n", "output": "5\n"}]}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "tests.json").write_text(json.dumps(TESTS))
    (tmp_path / "good.py").write_text("a, b = map(int, input().split())\nprint(a + b)\n")
    (tmp_path / "bad.py").write_text("print(4)\n")
    (tmp_path / "broken.json").write_text("{nope")
    return {p.stem: p for p in tmp_path.iterdir()}


def test_run_prints_json(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(files["good"]), "--tests", str(files["tests"]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "passed" and data["pass_rate"] == 1.0 and data["time_s"] >= 0


def test_run_prints_a_table_and_feedback(files: dict[str, Path],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(files["bad"]), "--tests", str(files["tests"])]) == 0
    out = capsys.readouterr().out
    assert "wrong_answer" in out and "0/1" in out and "Expected:\n5" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "missing.py", "--tests", "{tests}"],
        ["run", "{good}", "--tests", "{broken}"],
        ["run", "{good}", "--tests", "{tests}", "--language", "cobol"],
        ["run", "{good}"],
    ],
)
def test_bad_usage_exits_2(files: dict[str, Path], argv: list[str],
                           capsys: pytest.CaptureFixture[str]) -> None:
    paths = {k: str(v) for k, v in files.items()}
    assert main([a.format(**paths) for a in argv]) == 2
    assert capsys.readouterr().err
