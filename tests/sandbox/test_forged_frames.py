"""A solution that writes its own frames on the reply pipe is at fault, and is told what it did.

The module process answers the worker on fd 4.  A solution can write there
itself: a frame that is not JSON, not an object, or nested deeper than any
value can be is a runtime error that names the forged reply (it was an
"output limit exceeded" before); a frame larger than the reply cap is still
the output limit's.
"""

from __future__ import annotations

import os

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite

CALL = TestSuite.from_dict({"mode": "call", "entry_point": "f",
                            "cases": [{"args": [], "expected": 1}, {"args": [], "expected": 1}]})
SCRIPT = TestSuite.from_dict({"mode": "script", "entry_point": "f",
                              "check": "def check(candidate):\n    assert candidate() == 1\n"})
QUICK = Limits(time_s=5, memory_mb=512, output_kb=1024)


def _frame(body: bytes) -> str:
    """Python source for a frame (length header, then ``body``) as a bytes literal."""
    return repr(len(body).to_bytes(4, "big") + body)


FORGED = {
    "not-json": _frame(b"hello"),
    "not-an-object": _frame(b"[1]"),
    "nested-too-deep": _frame(b"[" * 400 + b"]" * 400),
}
WHERE = {
    "at-load": "import os\nos.write(4, {frame})\ndef f():\n    return 1\n",
    "in-a-call": "import os\ndef f():\n    os.write(4, {frame})\n    return 1\n",
}


@pytest.mark.parametrize("suite", [CALL, SCRIPT], ids=["call", "script"])
@pytest.mark.parametrize("where", sorted(WHERE))
@pytest.mark.parametrize("forged", sorted(FORGED))
def test_a_forged_reply_frame_is_a_runtime_error(sandbox: Sandbox, suite: TestSuite, where: str,
                                                 forged: str) -> None:
    result = sandbox.run(WHERE[where].format(frame=FORGED[forged]), suite, limits=QUICK)
    assert result.status == Status.RUNTIME_ERROR, (result.status, result.feedback[:300])
    assert "reply that is not a frame" in result.feedback, result.feedback[:300]
    assert sandbox.run("def f():\n    return 1\n", suite, limits=QUICK).passed  # the worker serves on


@pytest.mark.parametrize("suite", [CALL, SCRIPT], ids=["call", "script"])
def test_a_forged_frame_over_the_cap_is_still_an_output_overrun(sandbox: Sandbox,
                                                                suite: TestSuite) -> None:
    header = repr((1 << 30).to_bytes(4, "big"))
    result = sandbox.run(f"import os\nos.write(4, {header})\ndef f():\n    return 1\n", suite, limits=QUICK)
    assert result.status == Status.OUTPUT_EXCEEDED, (result.status, result.feedback[:300])


@pytest.mark.docker
@pytest.mark.skipif(os.environ.get("REWARDKIT_SKIP_DOCKER") == "1",
                    reason="REWARDKIT_SKIP_DOCKER=1: docker backend tests skipped on request")
def test_the_docker_backend_names_a_forged_frame_too() -> None:
    with Sandbox(backend="docker", workers=1, limits=QUICK) as sb:
        result = sb.run(WHERE["in-a-call"].format(frame=FORGED["nested-too-deep"]), CALL)
        assert result.status == Status.RUNTIME_ERROR, (result.status, result.feedback[:300])
        assert "reply that is not a frame" in result.feedback, result.feedback[:300]
