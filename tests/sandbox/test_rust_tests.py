"""unittest mode: a Rust solution compiled with its test module and our test entry point, in the sandbox."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import leftovers
import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite
from rewardkit.sandbox.runtime.languages import find_tool, home_rustc
from rewardkit.sandbox.suite import SuiteError

PROMPT = "// Adds two numbers.\nfn add(a: i64, b: i64) -> i64 {"
TESTS = """#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_big() {
        assert_eq!(add(40, 2), 42);
    }

    #[test]
    fn test_small() {
        assert_eq!(add(1, 2), 3);
    }
}
"""
SUITE = TestSuite.from_dict({"mode": "unittest", "edition": "2021", "check": TESTS})
QUICK = Limits(time_s=2, memory_mb=512)


def sandbox_rustc() -> str | None:
    """The rustc the sandbox compiles with (as the worker picks it), or None."""
    return home_rustc(os.environ.get("PATH", "")) or find_tool("rustc")


@pytest.fixture(autouse=True)
def needs_rustc() -> None:
    if sandbox_rustc() is None:
        pytest.skip("no rustc where the sandbox can use it (make toolchains installs one)")


@pytest.fixture
def clean_host() -> Iterator[None]:
    before = leftovers.Snapshot.take()
    yield
    leftovers.assert_clean(before)


def run(sandbox: Sandbox, body: str, suite: TestSuite = SUITE) -> object:
    return sandbox.run(PROMPT + body, suite, language="rust", limits=QUICK)


def test_a_right_body_passes(sandbox: Sandbox, clean_host: None) -> None:
    result = run(sandbox, "\n    a + b\n}\n")
    assert result.status == Status.PASSED, result.feedback
    assert (result.tests_passed, result.tests_total) == (1, 1)


def test_a_wrong_body_is_a_wrong_answer_naming_the_test(sandbox: Sandbox) -> None:
    result = run(sandbox, "\n    if a == 40 { 0 } else { a + b }\n}\n")
    assert result.status == Status.WRONG_ANSWER
    assert "tests::test_big" in result.feedback and "right: 42" in result.feedback


def test_a_panic_in_the_solution_is_a_runtime_error(sandbox: Sandbox) -> None:
    result = run(sandbox, "\n    let v: Vec<i64> = Vec::new();\n    v[a as usize] + b\n}\n")
    assert result.status == Status.RUNTIME_ERROR
    assert "index out of bounds" in result.feedback


def test_a_body_that_does_not_compile_is_a_compile_error(sandbox: Sandbox) -> None:
    result = run(sandbox, "\n    a +\n}\n")
    assert result.status == Status.COMPILE_ERROR and "main.rs" in result.feedback


def test_an_infinite_loop_times_out_and_leaves_nothing(sandbox: Sandbox, clean_host: None) -> None:
    result = run(sandbox, "\n    loop {}\n}\n")
    assert result.status == Status.TIMEOUT


@pytest.mark.parametrize("body", [
    "\n    std::process::exit(0)\n}\n",  # ends the test program before any test fails
    "\n    0\n}\nmacro_rules! assert_eq { ($($t:tt)*) => {} }\n",  # a do-nothing assert_eq! for the tests
    "\n    if std::fs::read_to_string(\"main.rs\").is_ok() { a + b } else { 0 }\n}\n",  # the source
], ids=["exit-0", "shadowed-assert", "reads-source"])
def test_the_tests_cannot_be_fooled(sandbox: Sandbox, body: str) -> None:
    assert not run(sandbox, body).passed


def test_include_macros_are_refused(sandbox: Sandbox) -> None:
    result = run(sandbox, "\n    a + b\n}\nconst T: &str = include_str!(\"main.rs\");\n")
    assert result.status == Status.COMPILE_ERROR and "include_str" in result.feedback


def test_the_suite_edition_is_used(sandbox: Sandbox) -> None:
    body = "\n    let async = a;\n    async + b\n}\n"  # `async` is a keyword from edition 2018 on
    old = TestSuite.from_dict({"mode": "unittest", "edition": "2015", "check": TESTS})
    assert run(sandbox, body, old).status == Status.PASSED
    assert run(sandbox, body, SUITE).status == Status.COMPILE_ERROR


def test_configuration_errors_fail_fast(sandbox: Sandbox) -> None:
    with pytest.raises(SuiteError, match="needs 'check'"):
        TestSuite.from_dict({"mode": "unittest"})
    with pytest.raises(SuiteError, match="edition"):
        TestSuite.from_dict({"mode": "unittest", "check": TESTS, "edition": "latest"})
    with pytest.raises(ValueError, match="built-in test runner"):
        sandbox.run("def add(a, b): return a + b\n", SUITE, language="python")
    assert TestSuite.from_dict(SUITE.to_dict()) == SUITE


def test_a_rustup_proxy_resolves_to_its_default_toolchain(tmp_path: Path) -> None:
    cargo_bin, toolchain = tmp_path / ".cargo" / "bin", tmp_path / ".rustup" / "toolchains"
    real = toolchain / "stable-x86_64-unknown-linux-gnu" / "bin" / "rustc"
    for folder in (cargo_bin, real.parent):
        folder.mkdir(parents=True)
    for tool in (cargo_bin / "rustup", real):
        tool.write_text("#!/bin/sh\n")
        tool.chmod(0o755)
    (cargo_bin / "rustc").symlink_to("rustup")
    (tmp_path / ".rustup" / "settings.toml").write_text(
        'default_toolchain = "stable-x86_64-unknown-linux-gnu"\n')
    assert home_rustc(f"{cargo_bin}:/usr/bin") == str(real)
    assert home_rustc("/usr/bin:/bin") is None  # a system rustc is found as before

