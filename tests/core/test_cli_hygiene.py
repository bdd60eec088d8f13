"""The command line as a shell user meets it: a closed pipe is not an error, every option that
names a backend or objective offers each one, --help is plain text and writes nothing, and bench
keeps an earlier report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rewardkit.cli import build_parser, main
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


# every subcommand and sub-subcommand a user can ask --help of
HELPS = [[], ["run"], ["score"], ["analyze"], ["bench"], ["demo"], ["serve"], ["optimize"], ["train"],
         ["train", "grpo"], ["train", "sft"], ["train", "dpo"], ["docker"], ["docker", "setup"],
         ["docker", "status"]]
RST = ("``", ":func:", ":mod:", ":class:", ":meth:", ":attr:", "::")


def _tree(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")}


@pytest.mark.parametrize("command", HELPS, ids=lambda c: " ".join(c) or "rewardkit")
def test_help_is_plain_text_and_writes_nothing(command: list[str], tmp_path: Path) -> None:
    (tmp_path / "already.txt").write_text("here before\n")
    before = _tree(tmp_path)
    done = subprocess.run([sys.executable, "-m", "rewardkit", *command, "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: rewardkit"), done.stdout[:200]
    assert _tree(tmp_path) == before and not (tmp_path / "out").exists()
    markup = [mark for mark in RST if mark in done.stdout]
    assert not markup, f"RST markup {markup} in the help of {command}:\n{done.stdout}"


def test_every_objective_the_presets_accept_is_offered() -> None:
    from rewardkit.rewards.components import check_objective
    from rewardkit.rewards.formulas import UPPER

    for objective in UPPER:  # each objective with a gain formula, "instructions" among them
        assert check_objective(objective) == objective
        assert build_parser().parse_args(["score", "x.py", "--objective", objective]).objective == objective
    with pytest.raises(SystemExit):
        build_parser().parse_args(["score", "x.py", "--objective", "speed"])


def _one_solution(tmp_path: Path) -> Path:
    from rewardkit.benchmarks.embedded import load_mini

    problem = load_mini()[0]
    path = tmp_path / "solutions.jsonl"
    path.write_text(json.dumps({"problem_id": problem.problem_id, "sample": 0,
                                "code": problem.references[0].code}) + "\n")
    return path


def test_bench_does_not_overwrite_an_earlier_report(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.json").write_text('{"earlier": true}\n')
    arguments = ["bench", "--solutions", str(_one_solution(tmp_path)), "--out", str(out), "--repeats", "1"]
    assert main(arguments) == 2
    assert "is an earlier run's; give another --out, or --force" in capsys.readouterr().err
    assert json.loads((out / "report.json").read_text()) == {"earlier": True}
    assert main([*arguments, "--force"]) == 0
    assert "metrics" in json.loads((out / "report.json").read_text())


@pytest.mark.parametrize("command", ["optimize", "train"])
def test_optimize_and_train_do_not_overwrite_an_earlier_run(command: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """What an earlier run wrote (an optimisation's trajectories, a trainer's checkpoints) stays,
    and the refusal comes before any work (no model, no generator is touched)."""
    out = tmp_path / "out"
    out.mkdir()
    earlier = out / ("trajectories.jsonl" if command == "optimize" else "checkpoint-500")
    earlier.write_text("earlier\n")
    arguments = {"optimize": ["optimize", "--dataset", "mini", "--limit", "1", "--generator", "replay",
                              "--replay", str(tmp_path / "absent.jsonl"), "--out", str(out)],
                 "train": ["train", "grpo", "--model", str(tmp_path / "no-model"), "--limit", "1",
                           "--out", str(out)]}[command]
    assert main(arguments) == 2
    assert "is an earlier run's; give another --out, or --force" in capsys.readouterr().err
    assert earlier.read_text() == "earlier\n"
    assert main([*arguments, "--force"]) != 0  # now it gets to work, and fails on the missing input
    assert "earlier run" not in capsys.readouterr().err
