"""The installed wheel, used as a user would: every subcommand from outside the repository.

Each command is the virtualenv's own ``rewardkit`` script (never ``python -m``
from the checkout), run in a temporary directory with no ``PYTHONPATH``
(``installed.py``), so a module or data file the wheel lacks fails here even
though the editable checkout has it.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from installed import Installed, free_port, serving, stop
from test_readme import BLOCKS, Outcome, Tutorial

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]  # the first test pays for the install

TESTS = {"mode": "stdio", "cases": [{"input": "2 3\n", "output": "5\n"},
                                   {"input": "10 -4\n", "output": "6\n"}]}
SUM = "a, b = map(int, input().split())\nprint(a + b)\n"
EXPECTED_COMMANDS = {"run", "score", "analyze", "optimize", "train", "bench", "serve", "demo"}


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def _stdio_files(folder: Path) -> tuple[Path, Path]:
    (folder / "solution.py").write_text(SUM)
    (folder / "tests.json").write_text(json.dumps(TESTS))
    return folder / "solution.py", folder / "tests.json"


def test_the_package_imported_is_the_installed_one(installed: Installed, tmp_path: Path) -> None:
    code = ("import importlib, rewardkit\n"
            "for name in ('rewardkit', 'rewardkit.sandbox', 'rewardkit.analyzers', 'rewardkit.serve',"
            " 'rewardkit.client', 'rewardkit.trainers', 'rewardkit.benchmarks'):\n"
            "    print(importlib.import_module(name).__file__)\n")
    files = _ok(installed.run([str(installed.python), "-c", code], tmp_path)).split()
    assert len(files) == 7
    assert all(Path(f).is_relative_to(installed.site_packages / "rewardkit") for f in files), files
    version = [str(installed.python), "-c", "import torch; print(torch.__version__)"]
    torch = _ok(installed.run(version, tmp_path))
    assert torch.strip().endswith("+cpu"), f"constraints.txt should have given the CPU build, got {torch}"


def test_every_subcommand_has_help_and_it_writes_nothing(installed: Installed, tmp_path: Path) -> None:
    top = _ok(installed.rewardkit("--help", cwd=tmp_path))
    commands = set(re.search(r"\{([a-z,]+)\}", top).group(1).split(","))  # type: ignore[union-attr]
    assert commands >= EXPECTED_COMMANDS
    for command in sorted(commands):
        text = _ok(installed.rewardkit(command, "--help", cwd=tmp_path, timeout=180))
        assert text.startswith(f"usage: rewardkit {command}"), (command, text[:200])
    assert not any(tmp_path.iterdir()), f"--help wrote {sorted(p.name for p in tmp_path.iterdir())}"


def test_run_judges_a_stdio_solution(installed: Installed, tmp_path: Path) -> None:
    solution, tests = _stdio_files(tmp_path)
    result = json.loads(_ok(installed.rewardkit("run", str(solution), "--tests", str(tests), "--json",
                                                cwd=tmp_path)))
    assert (result["status"], result["tests_passed"], result["tests_total"]) == ("passed", 2, 2)
    table = _ok(installed.rewardkit("run", "-", "--tests", str(tests), cwd=tmp_path,
                                    stdin="print(int(input().split()[0]))\n"))
    assert re.search(r"status\s+wrong_answer", table) and re.search(r"tests\s+0/2", table), table


def test_run_judges_a_script_check(installed: Installed, tmp_path: Path) -> None:
    """A HumanEval-style check that calls the solution in a loop with random arguments, judged by
    the installed package (its modules from site-packages)."""
    tests = tmp_path / "tests.json"
    tests.write_text(json.dumps({"mode": "script", "entry_point": "add", "check": (
        "import random\n\ndef check(candidate):\n    for _ in range(20):\n"
        "        a, b = random.randint(0, 9), random.randint(0, 9)\n"
        "        assert candidate(a, b) == a + b\n")}))
    solution = tmp_path / "solution.py"
    for code, status in (("def add(a, b):\n    return a + b\n", "passed"),
                         ("def add(a, b):\n    return a * b\n", "wrong_answer")):
        solution.write_text(code)
        result = json.loads(_ok(installed.rewardkit("run", str(solution), "--tests", str(tests), "--json",
                                                    cwd=tmp_path)))
        assert result["status"] == status, result


def test_score_a_completion(installed: Installed, tmp_path: Path) -> None:
    _, tests = _stdio_files(tmp_path)
    answer = tmp_path / "answer.md"
    answer.write_text(f"Read both numbers and add them.\n\n```python\n{SUM}```\n")
    scored = json.loads(_ok(installed.rewardkit("score", str(answer), "--tests", str(tests),
                                                "--format", "json", cwd=tmp_path)))
    assert scored["preset"] == "cisq_grpo"
    assert scored["components"]["pass_rate"] == 1.0 and scored["components"]["code_block_format"] == 1.0
    assert 0.5 < scored["value"] <= 1.0


def test_analyze_a_file(installed: Installed, tmp_path: Path) -> None:
    source = tmp_path / "messy.py"
    source.write_text("import os\n\ndef f(x):\n    try:\n        return 1 / x\n    except:\n        pass\n")
    reports = json.loads(_ok(installed.rewardkit("analyze", str(source), "--format", "json", cwd=tmp_path)))
    (report,) = reports["files"]
    rules = {finding["rule"] for finding in report["findings"]}
    assert {"bare-except", "unused-import"} <= rules, rules
    assert 0 < report["score"] < 1


def test_bench_on_the_embedded_references(installed: Installed, tmp_path: Path) -> None:
    dump = ("import json\nfrom rewardkit.benchmarks.loaders import load_dataset\n"
            "for p in load_dataset('mini', limit=2):\n"
            "    record = {'problem_id': p.problem_id, 'code': p.references[0].code, 'sample': 0}\n"
            "    print(json.dumps(record))\n")
    solutions = tmp_path / "references.jsonl"
    solutions.write_text(_ok(installed.run([str(installed.python), "-c", dump], tmp_path)))
    out = _ok(installed.rewardkit("bench", "--dataset", "mini", "--limit", "2", "--solutions", str(solutions),
                                  "--out", "report", cwd=tmp_path, timeout=600))
    assert "pass@1" in out
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    assert report["metrics"]["pass@1"]["value"] == 1.0
    assert {row["problem_id"] for row in report["problems"]} == {
        json.loads(line)["problem_id"] for line in solutions.read_text().splitlines()}


def test_demo_runs_and_its_candidates_behave(installed: Installed, tmp_path: Path) -> None:
    """``rewardkit demo`` (what ``make demo`` runs): the bundled candidates get the verdicts and
    rewards their kinds promise."""
    start = time.monotonic()
    out = _ok(installed.rewardkit("demo", "--out", "demo", cwd=tmp_path, timeout=600))
    seconds = time.monotonic() - start
    assert "pass@1" in out and "fork bomb" in out
    written = {path.name for path in (tmp_path / "demo").iterdir()}
    assert {"report.json", "report.md", "demo.json", "metrics.png"} <= written
    print(f"rewardkit demo: {seconds:.1f} s")
    rows = json.loads((tmp_path / "demo" / "demo.json").read_text())
    data = (installed.site_packages / "rewardkit" / "data" / "demo_solutions.jsonl").read_text()
    kinds = {(c["problem_id"], c["label"]): c["kind"] for c in map(json.loads, data.splitlines())}
    assert len(rows) == len(kinds) >= 20
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_kind.setdefault(kinds[row["problem_id"], row["label"]], []).append(row)
    assert all(r["status"] == "passed" for k in ("correct-fast", "correct-slow", "messy-correct")
               for r in by_kind[k])
    assert all(r["status"] == "wrong_answer" for r in by_kind["wrong"])
    assert all(r["status"] not in ("passed", "sandbox_error") for r in by_kind["hostile"])
    assert not Path("/tmp/rewardkit-demo-was-here").exists()  # nosec B108 - where a hostile one writes
    # rewards order the kinds: fast beats slow beats wrong; messy code loses quality to the clean one
    for problem in {r["problem_id"] for r in by_kind["correct-slow"]}:
        fast, slow, wrong = (next(r for r in by_kind[k] if r["problem_id"] == problem)
                             for k in ("correct-fast", "correct-slow", "wrong"))
        assert fast["reward"]["value"] > slow["reward"]["value"] > wrong["reward"]["value"]
        # several times faster (5.7x to 25x in one run here); Beyond-T ranks the two among the same
        # references, so it cannot put the slow above the fast, but both may land between the same
        # two references when the machine slows the fast one's runs for a moment
        assert 3 * fast["time_s"] < slow["time_s"]
        assert fast["values"]["beyond_t"] >= slow["values"]["beyond_t"]
    for messy in by_kind["messy-correct"]:
        clean = next(r for r in by_kind["correct-fast"] if r["problem_id"] == messy["problem_id"])
        assert messy["reward"]["components"]["quality"] < clean["reward"]["components"]["quality"]
    report = json.loads((tmp_path / "demo" / "report.json").read_text())
    assert {"pass@1", "beyond_t", "beyond_m", "beyond_i"} <= set(report["metrics"])


def test_serve_answers_health_and_stops_on_sigint(installed: Installed, tmp_path: Path) -> None:
    port = free_port()
    command = [str(installed.bin / "rewardkit"), "serve", "--port", str(port), "--workers", "1"]
    with serving(command, port, tmp_path, installed.env(), tmp_path / "serve.log") as process:
        health = installed.run([str(installed.python), "-c",
                                f"import httpx; print(httpx.get('http://127.0.0.1:{port}/health').text)"],
                               tmp_path)
        assert '"run"' in _ok(health)
        code = stop(process)
    assert code == 0, (tmp_path / "serve.log").read_text()


def _docs_run(tutorial: Tutorial, text: str) -> Outcome:
    """The outcome of the docs' block holding ``text``: the run test_readme.py checks too, made once."""
    (block,) = [block for block in BLOCKS if text in block.text]
    outcome = tutorial.run_through(block)
    assert outcome.returncode == 0, f"{block.id}: exit {outcome.returncode}\n{outcome.output[-3000:]}"
    return outcome


def test_train_grpo_smoke_run(tutorial: Tutorial) -> None:
    """The docs' ``rewardkit train grpo`` smoke run saves a model where it says."""
    out = _docs_run(tutorial, "rewardkit train grpo").output
    assert re.search(r"2 steps; saved to out/grpo-smoke", out), out[-3000:]
    assert (tutorial.folder / "out" / "grpo-smoke" / "config.json").is_file()


def test_the_docs_grpo_example_trains_on_cpu(tutorial: Tutorial) -> None:
    """The docs' GRPO example in Python, CPU only, with a cache that started empty: ``grpo_rows``
    measured the references into it, and ``build_trainer`` chose FP32 (TRL's BF16 default fails
    without a GPU that supports it)."""
    out = _docs_run(tutorial, "grpo.build_trainer(").output
    assert "'train_runtime'" in out, out[-3000:]
    assert list((tutorial.cache / "references").rglob("*.json")), "no reference measured into the cache"


def test_optimize_replays_recorded_answers(installed: Installed, tmp_path: Path) -> None:
    dump = ("import json\nfrom rewardkit.benchmarks.loaders import load_dataset\n"
            "(p,) = load_dataset('mini', limit=1)\n"
            "for ref in (p.references[-1], p.references[0]):\n"
            "    code = '```python\\n' + ref.code + '\\n```'\n"
            "    text = '<thinking>faster</thinking>\\n<solution>\\n' + code + '\\n</solution>'\n"
            "    print(json.dumps({'problem_id': p.problem_id, 'text': text}))\n")
    replay = tmp_path / "replay.jsonl"
    replay.write_text(_ok(installed.run([str(installed.python), "-c", dump], tmp_path)))
    out = _ok(installed.rewardkit("optimize", "--dataset", "mini", "--limit", "1", "--generator", "replay",
                                  "--replay", str(replay), "--iterations", "1", "--repeats", "1",
                                  "--out", "optimize", cwd=tmp_path, timeout=600))
    assert "| iteration |" in out
    summary = json.loads((tmp_path / "optimize" / "iterations.json").read_text())
    assert summary["iterations"][-1]["pass@1"]["value"] == 1.0
    (trajectory,) = map(json.loads, (tmp_path / "optimize" / "trajectories.jsonl").read_text().splitlines())
    assert trajectory["problem_id"] == "mini/count-pairs"
