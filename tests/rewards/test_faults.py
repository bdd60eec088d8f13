"""A sample whose run or analysis hit an infrastructure fault is left out whole, by every component
function TRL calls (TRL drops a row only when all of them return None); a completion that defeats
the analysis is no fault: it scores the lowest quality.

The faults are real: the sandbox's or the analyzers' worker processes are killed while they work.
"""

from __future__ import annotations

from typing import Any

import pytest
from killer import killing

from rewardkit import rewards
from rewardkit.analyzers import clear_cache
from rewardkit.rewards import Engine, Reward
from rewardkit.sandbox import Limits, Sandbox

TESTS = {"mode": "stdio", "cases": [{"input": "2 3\n", "output": "5\n"}]}
PLAIN = "a, b = map(int, input().split())\nprint(a + b)\n"
BASELINE = {"passed": True, "time_s": 0.05, "peak_memory_kb": 10_000, "integral_kb_s": 500}


def answer(code: str) -> str:
    return f"<thinking>add</thinking>\n<solution>\n```python\n{code}```\n</solution>"


def trl_calls(reward: Reward, completions: list[Any], **columns: Any) -> dict[str, list[float | None]]:
    """What TRL gets from ``reward.functions()``: each function called on the batch in turn."""
    return {f.__name__: f(completions, **columns) for f in reward.functions()}


def test_a_sandbox_fault_leaves_every_component_out() -> None:
    with killing("runtime.worker"), Sandbox(workers=1, limits=Limits(time_s=2)) as doomed:
        reward = rewards.quality_efficiency("time", engine=Engine(sandbox=doomed))
        columns = {"tests": [TESTS], "baseline_metrics": [BASELINE]}
        per_function = trl_calls(reward, [answer(PLAIN)], **columns)
        values = reward([answer(PLAIN)], **columns)
        [result] = reward.score([{"completion": answer(PLAIN), "tests": TESTS,
                                  "baseline_metrics": BASELINE}])
    assert per_function == {"afterburner_format": [None], "transition": [None],
                            "efficiency_time": [None], "quality": [None]}
    assert values == [None] and result.value is None
    assert set(result.components.values()) == {None}
    assert result.info["transition"]["status"] == "sandbox_error"


def test_an_analysis_fault_leaves_every_component_out(engine: Engine) -> None:
    reward = rewards.cisq_grpo(engine=engine)
    code = PLAIN + "# an analysis fault\n"  # a source no cache has seen
    clear_cache()
    with killing("rewardkit.analyzers.analysis_worker"):
        per_function = trl_calls(reward, [answer(code)], tests=[TESTS])
        [result] = reward.score([{"completion": answer(code), "tests": TESTS}])
    assert per_function == {"code_block_format": [None], "pass_rate": [None], "quality": [None]}
    assert result.value is None and set(result.components.values()) == {None}
    assert "analysis worker killed by SIGKILL" in str(result.info["quality"]["tool_errors"])
    healthy = trl_calls(reward, [answer(code)], tests=[TESTS])  # faults are not cached
    assert healthy["pass_rate"] == [1.0] and healthy["quality"][0] is not None


@pytest.mark.usefixtures("engine")
def test_code_that_defeats_the_analysis_scores_the_lowest_quality(engine: Engine) -> None:
    """A program that passes but blinds the tools (a 2,000-term expression in dead code, or its
    body hidden in exec) is scored, with quality 0 or what its hidden code earns: never more."""
    deep = PLAIN + "if False:\n    print(" + " + ".join(["a"] * 2000) + ")\n"
    hidden = f"exec({PLAIN!r})\n"
    reward = rewards.cisq_grpo(engine=engine)
    plain, blinding, hiding = reward.score([{"completion": answer(c), "tests": TESTS}
                                            for c in (PLAIN, deep, hidden)])
    assert plain.components["pass_rate"] == blinding.components["pass_rate"] == 1.0
    assert hiding.components["pass_rate"] == 1.0
    assert blinding.components["quality"] == 0.0 and blinding.value is not None
    assert hiding.components["quality"] is not None
    assert hiding.components["quality"] < plain.components["quality"]
    assert blinding.value < plain.value and hiding.value < plain.value  # type: ignore[operator]
