"""Without an optional extra, the trainers say which one to install; their --help needs none.

Each check runs in a fresh interpreter where the extra's packages are hidden
(``sys.modules[name] = None`` makes importing them fail as if absent), so
what is already imported in this test process cannot mask a missing guard.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TRAIN = ("torch", "transformers", "trl", "datasets", "peft", "tokenizers")
TRAIN_MODULES = ("grpo", "sft", "dpo", "tiny", "precision", "generators.local")
CORE_MODULES = ("optimize", "train", "datasets", "afterburner", "rlef", "prompts", "generators")


def run(code: str, hidden: tuple[str, ...], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter in which the ``hidden`` packages cannot be imported."""
    prelude = f"import sys\nfor name in {hidden!r}:\n    sys.modules[name] = None\n"
    return subprocess.run([sys.executable, "-c", prelude + code], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.mark.parametrize("module", TRAIN_MODULES)
def test_train_modules_name_the_train_extra(module: str, tmp_path: Path) -> None:
    result = run(f"""
from rewardkit.optional import MissingExtra
try:
    import rewardkit.trainers.{module}
except MissingExtra as exc:
    print(exc)
""", TRAIN, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "pip install 'rewardkit[train]'" in result.stdout


def test_openai_generator_names_the_openai_extra(tmp_path: Path) -> None:
    result = run("""
from rewardkit.optional import MissingExtra
from rewardkit.trainers.generators import make_generator
print(make_generator("replay", pool=["a"]).generate(["p"]))  # the replay generator needs no extra
try:
    make_generator("openai", base_url="http://127.0.0.1:1/v1", model="m")
except MissingExtra as exc:
    print(exc)
""", ("openai",), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "['a']", "openai is not installed; it comes with rewardkit's [openai] extra (OpenAI-compatible "
        "generators): pip install 'rewardkit[openai]'"]


def test_core_modules_import_without_any_extra(tmp_path: Path) -> None:
    modules = ", ".join(f"rewardkit.trainers.{m}" for m in CORE_MODULES)
    result = run(f"import {modules}\nprint('ok')", (*TRAIN, "openai"), tmp_path)
    assert (result.returncode, result.stdout.strip()) == (0, "ok"), result.stderr


@pytest.mark.parametrize(("argv", "extra"), [
    (["train", "grpo", "--model", "m", "--out", "o"], "train"),
    (["optimize", "--generator", "local", "--model", "m"], "train"),
    (["optimize", "--generator", "openai", "--model", "m", "--base-url", "http://127.0.0.1:1/v1"], "openai"),
])
def test_commands_raise_missing_extra_for_the_cli_to_print(argv: list[str], extra: str,
                                                           tmp_path: Path) -> None:
    """The commands' own main() lets MissingExtra through (the dispatcher prints it), before any work."""
    command, *rest = argv
    result = run(f"""
from rewardkit.optional import MissingExtra
from rewardkit.trainers.{command} import main
try:
    main({rest!r})
except MissingExtra as exc:
    print(exc)
""", (*TRAIN, "openai"), tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(f"pip install 'rewardkit[{extra}]'"), result.stdout + result.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written, no references measured


@pytest.mark.parametrize("argv", [["optimize", "--help"], ["train", "--help"], ["train", "grpo", "--help"],
                                  ["train", "sft", "--help"], ["train", "dpo", "--help"]])
def test_help_without_extras_is_plain_and_writes_nothing(argv: list[str], tmp_path: Path) -> None:
    command, *rest = argv
    result = run(f"from rewardkit.trainers.{command} import main\nraise SystemExit(main({rest!r}))",
                 (*TRAIN, "openai", "matplotlib"), tmp_path)
    assert result.returncode == 0, result.stderr
    assert "usage: rewardkit" in result.stdout
    for markup in ("``", ":func:", ":mod:", ":class:"):
        assert markup not in result.stdout
    assert list(tmp_path.iterdir()) == []
