"""The feedback a model is shown holds its own code's frames, never those of rewardkit's harness."""

from __future__ import annotations

import os

import pytest

from rewardkit.sandbox import ExecutionResult, Sandbox, Status, TestSuite

NESTED = ("def inner(x):\n"
          "    return 1 // (x - x)\n"
          "\n"
          "def helper(x):\n"
          "    return inner(x)\n")
CALL = TestSuite.from_dict({"mode": "call", "entry_point": "add",
                            "cases": [{"args": [1, 2], "expected": 3}]})
SCRIPT = TestSuite.from_dict({"mode": "script", "entry_point": "add",
                              "check": "def check(candidate):\n    assert candidate(1, 2) == 3\n"})
STDIO = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "1 2\n", "output": "3\n"}]})
SOLUTIONS = {
    "call": (NESTED + "\ndef add(a, b):\n    return helper(a)\n", CALL),
    "script": (NESTED + "\ndef add(a, b):\n    return helper(a)\n", SCRIPT),
    "stdio": (NESTED + "\na, b = map(int, input().split())\nprint(helper(a))\n", STDIO),
}
HARNESS_MARKS = ("rewardkit", "harness", "runtime", "<frozen", "<string>", "serve_module", "run_program")


def shown(result: ExecutionResult) -> str:
    """Everything of a run a model may be shown."""
    return f"{result.feedback}\n{result.to_dict().get('stderr') or ''}"


def assert_no_harness(text: str) -> None:
    for mark in HARNESS_MARKS:
        assert mark not in text, f"{mark!r} in the feedback:\n{text}"


@pytest.mark.parametrize("mode", sorted(SOLUTIONS))
def test_a_runtime_error_shows_only_the_solutions_frames(sandbox: Sandbox, mode: str) -> None:
    code, suite = SOLUTIONS[mode]
    result = sandbox.run(code, suite)
    assert result.status == Status.RUNTIME_ERROR, result.feedback
    text = shown(result)
    assert_no_harness(text)
    assert 'File "solution.py", line 5, in helper' in text and "return inner(x)" in text, text
    assert 'File "solution.py", line 2, in inner' in text and "return 1 // (x - x)" in text, text
    assert "ZeroDivisionError: integer division or modulo by zero" in text, text


def test_an_error_while_loading_shows_the_library_frames_the_solution_called(sandbox: Sandbox) -> None:
    result = sandbox.run('import json\n\ndef add(a, b):\n    return a + b\n\njson.loads("{")\n', CALL)
    assert result.status == Status.RUNTIME_ERROR, result.feedback
    assert_no_harness(result.feedback)
    assert 'File "solution.py", line 6, in <module>' in result.feedback, result.feedback
    assert "json" + os.sep + "decoder.py" in result.feedback, result.feedback  # what the solution called
    assert "JSONDecodeError" in result.feedback


def test_a_syntax_error_shows_the_offending_line(sandbox: Sandbox) -> None:
    for suite in (CALL, STDIO):
        result = sandbox.run("def add(a, b)\n    return a + b\n", suite)
        assert result.status == Status.COMPILE_ERROR, result.feedback
        assert_no_harness(result.feedback)
        assert 'File "solution.py", line 1' in result.feedback, result.feedback
        assert "def add(a, b)\n" in result.feedback and "SyntaxError: expected ':'" in result.feedback


@pytest.mark.parametrize("mode", ["call", "stdio"])
def test_a_recursion_error_is_summarised(sandbox: Sandbox, mode: str) -> None:
    """Mutual recursion, which Python's own "[Previous line repeated]" does not fold."""
    code = "def ping(n):\n    return pong(n)\n\ndef pong(n):\n    return ping(n)\n\n"
    code += "def add(a, b):\n    return ping(a)\n" if mode == "call" else "print(ping(1))\n"
    result = sandbox.run(code, CALL if mode == "call" else STDIO)
    assert result.status == Status.RUNTIME_ERROR, result.feedback
    text = shown(result)
    assert_no_harness(text)
    feedback = result.feedback
    assert feedback.count('File "solution.py"') <= 20 and "more frames ..." in feedback, feedback
    assert "RecursionError: maximum recursion depth exceeded" in feedback


def test_chained_exceptions_keep_both_parts(sandbox: Sandbox) -> None:
    code = ("def add(a, b):\n    try:\n        return {}[a]\n"
            "    except KeyError as exc:\n        raise ValueError('no such key') from exc\n")
    result = sandbox.run(code, CALL)
    assert_no_harness(result.feedback)
    assert "KeyError: 1" in result.feedback and "ValueError: no such key" in result.feedback
    assert "direct cause" in result.feedback


@pytest.mark.docker
@pytest.mark.skipif(os.environ.get("REWARDKIT_SKIP_DOCKER") == "1", reason="REWARDKIT_SKIP_DOCKER=1")
def test_in_a_container_too() -> None:
    """The exec'd harness in a container (boot code, runtime mount) shows no frames of its own."""
    with Sandbox(backend="docker", workers=1) as sandbox:
        for mode in ("call", "stdio"):
            code, suite = SOLUTIONS[mode]
            result = sandbox.run(code, suite)
            assert result.status == Status.RUNTIME_ERROR, result.feedback
            assert_no_harness(shown(result))
            assert 'File "solution.py", line 2, in inner' in result.feedback, result.feedback
