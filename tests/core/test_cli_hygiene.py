"""The command line as a shell user meets it: a closed pipe is not an error, and every option
that names a backend offers every backend."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rewardkit.cli import build_parser
from rewardkit.sandbox.sandbox import BACKENDS


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path: Path) -> None:
    """``rewardkit analyze ... | head``: far more output than a pipe holds, the reader stops early."""
    source = tmp_path / "many_imports.py"
    source.write_text("".join(f"import module_{i}\n" for i in range(1500)))
    command = [sys.executable, "-m", "rewardkit", "analyze", str(source), "--format", "json"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.read(10) == b'{\n  "files'
    process.stdout.close()  # the reader goes away, as `head` does
    errors = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141, errors
    assert "Traceback" not in errors and "BrokenPipe" not in errors, errors


@pytest.mark.parametrize("command", ["run", "serve"])
def test_every_backend_is_offered(command: str) -> None:
    arguments = {"run": ["run", "solution.py", "--tests", "tests.json"], "serve": ["serve"]}[command]
    for backend in BACKENDS:
        assert build_parser().parse_args([*arguments, "--backend", backend]).backend == backend
    with pytest.raises(SystemExit):
        build_parser().parse_args([*arguments, "--backend", "cloud"])
