"""HumanEval-Rust records: read as Rust, judged with their test module; the real file when present."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from rewardkit.benchmarks.loaders import LoaderError, detect_schema, load_dataset
from rewardkit.benchmarks.loaders.humaneval_rust import humaneval_rust_problem, is_humaneval_rust
from rewardkit.sandbox import Sandbox, Status
from rewardkit.sandbox.runtime.languages import find_tool, home_rustc

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
RUST_FILE = SHARED_DATA / "HumanEval_rust.jsonl"
SAMPLE = 10  # canonical solutions judged from the real file (each compiles in well under a second)

RECORD = {
    "task_id": "Mine/add", "entry_point": "add", "edition": "2021",
    "prompt": "// Adds two numbers.\nfn add(a: i64, b: i64) -> i64 {",
    "canonical_solution": "\n    a + b\n}",
    "test": "#[cfg(test)]\n    mod tests {\n        use super::*;\n\n        #[test]\n"
            "        fn test_add() {\n            assert_eq!(add(40, 2), 42);\n        }\n    }",
}
CUT = RECORD | {"task_id": "Mine/cut",  # cut off as 32 records of the real file are
               "test": "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    // BEGIN_TESTS\n"}


def sandbox_rustc_version() -> tuple[int, int] | None:
    """(major, minor) of the rustc the sandbox compiles with, or None when there is none."""
    path = home_rustc(os.environ.get("PATH", "")) or find_tool("rustc")
    if path is None:
        return None
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout
    match = re.search(r"(\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else None


def needs_rustc(minimum: tuple[int, int] = (1, 0)) -> None:
    version = sandbox_rustc_version()
    if version is None or version < minimum:
        pytest.skip(f"needs rustc {minimum[0]}.{minimum[1]} or later where the sandbox can use it "
                    f"(found {version}); make toolchains installs one")


def test_a_rust_record_is_read_as_rust_not_as_python_humaneval() -> None:
    assert is_humaneval_rust(RECORD) and detect_schema(RECORD) == "humaneval_rust"
    problem = humaneval_rust_problem(RECORD)
    assert (problem.language, problem.tests.mode) == ("rust", "unittest")
    assert problem.tests.extra["edition"] == "2021"
    assert problem.references[0].code == RECORD["prompt"] + RECORD["canonical_solution"]


def test_its_reference_passes_and_a_wrong_body_names_the_test(sandbox: Sandbox) -> None:
    needs_rustc()
    problem = humaneval_rust_problem(RECORD)
    assert sandbox.run(problem.references[0].code, problem.tests, language="rust").passed
    wrong = sandbox.run(RECORD["prompt"] + "\n    a - b\n}", problem.tests, language="rust")
    assert wrong.status == Status.WRONG_ANSWER and "tests::test_add" in wrong.feedback


def test_a_record_without_tests_is_skipped_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "rust.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (RECORD, CUT)))
    with pytest.warns(UserWarning):
        loaded = load_dataset(path)
    assert [p.problem_id for p in loaded] == ["Mine/add"]
    assert loaded.skipped[0].index == 1 and "no #[test] function" in loaded.skipped[0].reason
    with pytest.raises(LoaderError, match="record 1: its Rust test module has no #\\[test\\]"):
        load_dataset(path, strict=True)


@pytest.fixture(scope="module")
def real_file() -> Path:
    if not RUST_FILE.is_file():
        pytest.skip(f"../shared/data is absent: no {RUST_FILE.name} to read")
    return RUST_FILE


def test_the_real_file_loads(real_file: Path) -> None:
    with pytest.warns(UserWarning, match="32 records skipped"):
        loaded = load_dataset(real_file)
    # 32 of the 180 records have a test module cut off before any #[test] (a property of the file)
    assert (len(loaded), len(loaded.skipped)) == (148, 32)
    assert all(p.language == "rust" and p.tests.extra["edition"] == "2024" for p in loaded)
    assert all("no #[test] function" in s.reason for s in loaded.skipped)


def test_canonical_solutions_of_the_real_file_pass(real_file: Path, sandbox: Sandbox) -> None:
    needs_rustc((1, 85))  # edition 2024
    with pytest.warns(UserWarning):
        problems = list(load_dataset(real_file))
    step = len(problems) // SAMPLE
    sample = [p for p in problems[::step][:SAMPLE] if p.title not in ("longest", "count_long_words")]
    results = sandbox.run_many([(p.references[0].code, p.tests, "rust") for p in sample])
    assert [(p.problem_id, r.status) for p, r in zip(sample, results, strict=True) if not r.passed] == []
