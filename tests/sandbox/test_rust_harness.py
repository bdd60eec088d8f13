"""unittest mode's own Rust test entry point judges as libtest does: should_panic, ignore,
tests that return a Result, tests in nested modules, a solution with its own ``fn main``."""

from __future__ import annotations

import os

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite, rust_tests
from rewardkit.sandbox.runtime.languages import find_tool, home_rustc

TESTS = """#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_add() {
        assert_eq!(add(40, 2), 42, "{}", "}} a brace in a string {{");
    }

    #[test]
    #[should_panic(expected = "negative")]
    fn test_negative() {
        add(-1, 0);
    }

    #[ignore]
    #[test]
    fn test_ignored() {
        assert!(false);
    }

    #[test]
    fn test_result() -> Result<(), String> {
        if add(2, 2) == 4 { Ok(()) } else { Err(format!("2 + 2 = {}", add(2, 2))) }
    }

    mod inner {
        use super::super::*;
        // #[test] fn not_a_test() {}
        #[test]
        fn deep() {
            assert_eq!(add(0, 0), 0);
        }
    }
}
"""
SUITE = TestSuite.from_dict({"mode": "unittest", "edition": "2021", "check": TESTS})
PROMPT = "fn add(a: i64, b: i64) -> i64 {\n"
RIGHT = PROMPT + "    if a < 0 { panic!(\"negative: {}\", a) }\n    a + b\n}\n\nfn main() {}\n"
QUICK = Limits(time_s=5, memory_mb=512)


@pytest.fixture(autouse=True)
def needs_rustc() -> None:
    if (home_rustc(os.environ.get("PATH", "")) or find_tool("rustc")) is None:
        pytest.skip("no rustc where the sandbox can use it (make toolchains installs one)")


def run(sandbox: Sandbox, code: str) -> object:
    return sandbox.run(code, SUITE, language="rust", limits=QUICK)


def test_the_tests_are_found_in_order_with_their_module_paths() -> None:
    assert rust_tests.test_names(TESTS) == ("tests::test_add", "tests::test_negative", "tests::test_ignored",
                                 "tests::test_result", "tests::inner::deep")


def test_a_right_solution_with_its_own_main_passes(sandbox: Sandbox) -> None:
    result = run(sandbox, RIGHT)
    assert result.status == Status.PASSED, result.feedback


@pytest.mark.parametrize(("body", "said"), [
    ("    a + b\n}\n", "tests::test_negative failed:\ntest did not panic as expected"),
    ("    if a < 0 { panic!(\"below zero\") }\n    a + b\n}\n", "panic did not contain expected string"),
    ("    if a < 0 { panic!(\"negative\") }\n    if a == 2 { 0 } else { a + b }\n}\n",
     "tests::test_result failed:\nError: \"2 + 2 = 0\""),
], ids=["no-panic", "other-panic", "result-err"])
def test_each_kind_of_test_fails_as_libtest_fails_it(sandbox: Sandbox, body: str, said: str) -> None:
    result = run(sandbox, PROMPT + body)
    assert result.status == Status.WRONG_ANSWER and said in result.feedback, result.feedback


def test_a_symbol_of_the_solutions_own_is_refused(sandbox: Sandbox) -> None:
    result = run(sandbox, RIGHT + "#[no_mangle]\npub extern \"C\" fn read() -> isize { 0 }\n")
    assert result.status == Status.COMPILE_ERROR and "no_mangle" in result.feedback
