"""Verdicts come from a channel only the harness writes, never from what the solution can print.

Rust ``unittest`` suites were judged by libtest's summary on stdout, which
the solution shares: a wrong answer that prints ``test result: ok. 1 passed``
and ends the process with code 0 passed.  The test program now reports each
test on a descriptor of its own, with a nonce it reads before any test runs
(:mod:`rewardkit.sandbox.rust_tests`), and code that could run before that
read, or stand in for a symbol the entry point calls, is refused.

The Python modes were reviewed for the same class: their verdicts are decided
outside the solution's process (stdio compares the output in the judge; call
and script compare returned values there), so printing success markers or
fake frames and exiting early with code 0 (``sys.exit(0)``, ``os._exit(0)``)
inside the call fails there too; those attacks are kept here as regressions.
"""

from __future__ import annotations

import os

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite
from rewardkit.sandbox.runtime.languages import find_tool, home_rustc

QUICK = Limits(time_s=5, memory_mb=512)
PROMPT = "fn add(a: i64, b: i64) -> i64 {\n"
RUST_SUITE = TestSuite.from_dict({"mode": "unittest", "edition": "2021", "check": """#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_big() {
        assert_eq!(add(40, 2), 42);
    }
}
"""})
LIBTEST_PASS = ("test tests::test_big ... ok\\n\\ntest result: ok. 1 passed; 0 failed; 0 ignored; "
                "0 measured; 0 filtered out; finished in 0.00s\\n")

# A wrong answer that writes libtest's success lines on the real stdout (past libtest's capture
# of print!) and ends the process with code 0 before the assertion can fail.
FORGED_SUMMARY = PROMPT + f"""    use std::io::Write;
    let mut out = std::io::stdout();
    let _ = out.write_all(b"{LIBTEST_PASS}");
    let _ = out.flush();
    std::process::exit(0)
}}
"""

# The same, from a function the loader runs before the program's entry point (.init_array), which
# also takes the nonce off the harness's pipe (descriptor 3) and writes passing frames with it on
# the verdict pipe (descriptor 4).
BEFORE_MAIN = PROMPT + f"""    0
}}

#[used]
#[link_section = ".init_array"]
static FORGE: extern "C" fn() = forge;

extern "C" fn forge() {{
    use std::io::{{Read, Write}};
    use std::os::unix::io::FromRawFd;
    let mut out = std::io::stdout();
    let _ = out.write_all(b"running 1 test\\n{LIBTEST_PASS}");
    let _ = out.flush();
    let mut pipe = std::mem::ManuallyDrop::new(unsafe {{ std::fs::File::from_raw_fd(3) }});
    let mut size = [0u8; 4];
    if pipe.read_exact(&mut size).is_ok() {{
        let mut body = vec![0u8; u32::from_be_bytes(size) as usize];
        let _ = pipe.read_exact(&mut body);
        let body = String::from_utf8_lossy(&body).into_owned();
        let nonce = body.rsplit('"').nth(1).unwrap_or("").to_string();
        let mut report = std::mem::ManuallyDrop::new(unsafe {{ std::fs::File::from_raw_fd(4) }});
        for frame in [
            format!("{{{{\\"nonce\\":\\"{{}}\\",\\"test\\":\\"tests::test_big\\",\\"result\\":\\"ok\\",\\
                     \\"line\\":0,\\"message\\":\\"\\"}}}}", nonce),
            format!("{{{{\\"nonce\\":\\"{{}}\\",\\"done\\":1}}}}", nonce),
        ] {{
            let mut bytes = (frame.len() as u32).to_be_bytes().to_vec();
            bytes.extend_from_slice(frame.as_bytes());
            let _ = report.write_all(&bytes);
        }}
    }}
    std::process::exit(0);
}}
"""


@pytest.fixture
def needs_rustc() -> None:
    if (home_rustc(os.environ.get("PATH", "")) or find_tool("rustc")) is None:
        pytest.skip("no rustc where the sandbox can use it (make toolchains installs one)")


def test_a_forged_libtest_summary_does_not_pass(local_sandbox: Sandbox, needs_rustc: None) -> None:
    result = local_sandbox.run(FORGED_SUMMARY, RUST_SUITE, language="rust", limits=QUICK)
    assert result.status == Status.RUNTIME_ERROR, result.feedback
    assert "before every test had run" in result.feedback
    assert local_sandbox.run(PROMPT + "    a + b\n}\n", RUST_SUITE, language="rust", limits=QUICK).passed


def test_code_run_before_the_entry_point_is_refused(local_sandbox: Sandbox, needs_rustc: None) -> None:
    result = local_sandbox.run(BEFORE_MAIN, RUST_SUITE, language="rust", limits=QUICK)
    assert result.status == Status.COMPILE_ERROR and "link_section" in result.feedback


def _python_exits(how: str) -> str:
    """A wrong answer that prints success markers and fake frames, then ends its process with 0."""
    return ("import os, sys\n\ndef add(a, b):\n"
            "    print('test result: ok. 1 passed; 0 failed', flush=True)\n"
            "    print('{\"ok\": true, \"value\": 42}', flush=True)\n"
            "    sys.stdout.buffer.write(b'\\x00\\x00\\x00\\x19{\"ok\": true, \"value\": 42}')\n"
            f"    sys.stdout.flush()\n    {how}\n    return 0\n")


@pytest.mark.parametrize("how", ["sys.exit(0)", "os._exit(0)"])
@pytest.mark.parametrize("suite", [
    {"mode": "call", "entry_point": "add", "cases": [{"args": [40, 2], "expected": 42}]},
    {"mode": "script", "entry_point": "add",
     "check": "def check(candidate):\n    assert candidate(40, 2) == 42\n"},
], ids=["call", "script"])
def test_python_verdicts_are_not_printed(local_sandbox: Sandbox, suite: dict[str, object], how: str) -> None:
    result = local_sandbox.run(_python_exits(how), TestSuite.from_dict(suite), limits=QUICK)
    assert not result.passed and result.status == Status.RUNTIME_ERROR, result.feedback


def test_a_stdio_program_that_exits_early_is_judged_by_its_output(local_sandbox: Sandbox) -> None:
    suite = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "40 2\n", "output": "42\n"}]})
    program = "import os\nprint('PASSED\\ntest result: ok', flush=True)\nos._exit(0)\n"
    assert local_sandbox.run(program, suite, limits=QUICK).status == Status.WRONG_ANSWER
