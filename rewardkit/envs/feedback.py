"""What a model is told about a run of its code: short, plain, and never more than it may see.

:func:`feedback_text` turns a sandbox result on the tests the model may see
into a headline and the sandbox's own account of the first failure (input,
expected, got; or the exception, timeout or compile error), without the
harness's traceback frames or paths; :func:`cap` bounds any tool output.
"""

from __future__ import annotations

import re

from ..sandbox import ExecutionResult, Status

MAX_DETAIL = 1500  # characters of sandbox detail quoted in feedback
NO_CODE = "Your answer contained no code to run."
PASSED = "All public tests passed."
HEADLINES = {
    Status.WRONG_ANSWER: "Your code ran but gave a wrong answer on a public test.",
    Status.RUNTIME_ERROR: "Your code raised an exception on a public test.",
    Status.TIMEOUT: "Your code ran out of time on a public test: it is too slow or never stops.",
    Status.MEMORY_EXCEEDED: "Your code ran out of memory on a public test.",
    Status.OUTPUT_EXCEEDED: "Your code printed far more output than expected on a public test.",
    Status.COMPILE_ERROR: "Your code does not compile.",
    Status.SANDBOX_ERROR: "Your code could not be run (an error of the test machine, not of your code).",
}
TRUNCATED = "\n[... cut]"
_HARNESS_FRAMES = re.compile(r'(Traceback \(most recent call last\):\n).*?(?=^\s*File "[^"\n]*solution\.)',
                             re.DOTALL | re.MULTILINE)
_SOLUTION_PATH = re.compile(r"File \"[^\"]*/(solution\.\w+)\"")


def feedback_text(result: ExecutionResult | None) -> str:
    """What the model is told about a run on the public tests (``None``: the answer had no code)."""
    if result is None:
        return NO_CODE
    if result.passed:
        return PASSED
    detail = tidy(result.feedback)
    return HEADLINES[result.status] + (f"\n{detail}" if detail else "")


def tidy(detail: str) -> str:
    """The sandbox's detail without the harness's traceback frames or paths, clipped to its tail."""
    text = _SOLUTION_PATH.sub(r'File "\1"', _HARNESS_FRAMES.sub(r"\1", detail.strip()))
    return text if len(text) <= MAX_DETAIL else "..." + text[-MAX_DETAIL:]


def cap(text: str, chars: int) -> str:
    """``text`` cut to at most ``chars`` characters, saying so where it was cut."""
    if len(text) <= chars:
        return text
    if chars <= len(TRUNCATED):
        return text[:chars]
    return text[:chars - len(TRUNCATED)] + TRUNCATED
