"""Rewards end to end: real sandbox runs and analyses, hand-checked arithmetic."""

from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import statistics
import threading
import time
from typing import Any

import psutil
import pytest
from identical import identical_scores, wrap
from killer import children_with

from rewardkit import rewards
from rewardkit.analyzers import QualityReport, ToolError, analyze
from rewardkit.rewards import ConfigError, Engine
from rewardkit.rewards.components import quality
from rewardkit.rewards.engine import View
from rewardkit.rewards.extract import completion_text
from rewardkit.rewards.verl import compute_score, compute_score_batch
from rewardkit.sandbox import Limits, Sandbox

TESTS = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{n * (n + 1) // 2}\n"}
                                    for n in (3, 100, 1_000_000)]}
FAST = "n = int(input())\nprint(n * (n + 1) // 2)\n"
SLOW = "n = int(input())\ntotal = 0\nfor i in range(n + 1):\n    total += i\nprint(total)\n"
PARTIAL = "n = int(input())\nprint(6 if n == 3 else 5050 if n == 100 else 0)\n"


def test_cisq_grpo_is_the_weighted_sum(engine: Engine) -> None:
    completion = f"Answer:\n```python\n{PARTIAL}```"
    [result] = rewards.cisq_grpo(engine=engine).score([{"completion": completion, "tests": TESTS}])
    scores = analyze(PARTIAL.strip("\n")).by_characteristic
    quality = sum(scores.values()) / 4  # the CISQ paper's average of the four characteristics
    assert result.components == {"code_block_format": 1.0, "pass_rate": pytest.approx(2 / 3),
                                 "quality": pytest.approx(quality)}
    assert result.value == pytest.approx(0.2 * 1.0 + 0.3 * 2 / 3 + 0.5 * quality)


def test_afterburner_transition_and_efficiency(engine: Engine) -> None:
    reward = rewards.afterburner("time", engine=engine)
    baseline = {"passed": True, "time_s": 1.0, "peak_memory_kb": 50_000, "integral_kb_s": 500}
    samples = [
        {"completion": wrap(FAST), "tests": TESTS, "baseline_metrics": baseline},
        {"completion": wrap(PARTIAL), "tests": TESTS, "baseline_metrics": baseline},
        {"completion": wrap(FAST), "tests": TESTS, "baseline_code": PARTIAL},
        {"completion": wrap(PARTIAL), "tests": TESTS, "baseline_code": PARTIAL},
    ]
    fast, wrong, fixed, still_wrong = reward.score(samples)
    e_out = fast.info["efficiency_time"]["e_out"]
    assert e_out < 0.1
    assert fast.components == {"afterburner_format": 1.0, "transition": 0.5,
                               "efficiency_time": pytest.approx(math.tanh((1.0 - e_out) / 1.0))}
    assert fast.value == pytest.approx(0.2 + 0.5 * 0.5 + 0.3 * math.tanh(1.0 - e_out))
    assert wrong.components["transition"] == -1.0 and wrong.components["efficiency_time"] == 0.0
    assert fixed.components["transition"] == 1.0
    assert fixed.components["efficiency_time"] == 0.0  # no passing baseline to compare with
    assert still_wrong.components["transition"] == -0.5


def test_efficiency_separates_fast_from_slow(engine: Engine) -> None:
    reward = rewards.efficiency("time", engine=engine)
    fast, same, renamed = reward(completions=[wrap(FAST), wrap(SLOW), wrap(SLOW + "# same\n")],
                                 tests=[TESTS] * 3, baseline_code=[SLOW] * 3)
    assert fast is not None and fast > 0.5
    assert same == 0.0  # the baseline itself is run once and shared
    if renamed is None or abs(renamed) >= 0.25:
        # a VM host that slows a run for a second at a time: copies measured again, each right
        # after a fresh measurement of the baseline, score 0 in the median
        again = identical_scores("time", engine, SLOW, TESTS)
        assert statistics.median(again) == 0.0, (renamed, again)


def test_rlef_binary_and_percentile(engine: Engine) -> None:
    completions = [wrap(FAST), wrap(PARTIAL), wrap("def broken(:\n")]
    assert rewards.rlef(engine=engine)(completions=completions, tests=[TESTS] * 3) == [1.0, -1.0, -1.2]
    assert rewards.binary(engine=engine)(completions=completions, tests=[TESTS] * 3) == [1.0, 0.0, 0.0]
    refs = [{"time_s": t} for t in (0.0, 10.0, 20.0, 30.0)]
    values = rewards.percentile("time", engine=engine)(
        completions=completions, tests=[TESTS] * 3, reference_metrics=[refs] * 3)
    assert values == [0.75, 0.0, 0.0]  # beats all but the 0.0 reference


def test_quality_per_characteristic(engine: Engine) -> None:
    code = "import subprocess\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n"
    report = analyze(code)
    # gate=None: the code passes none of TESTS, and the gate would score it 0 whatever its findings
    value = rewards.quality("security", gate=None, engine=engine)(completions=[wrap(code + "\n")],
                                                                  tests=[TESTS])
    assert value == [pytest.approx(report.by_characteristic["security"])]
    assert value[0] < 1.0


BAD = [None, 42, "", "x" * 1_000_001, b"\x00\xff\xfe junk", b"\xc3\x28", "def f(:\n  pass",
       "```java\nclass Main {}\n```", [{"role": "assistant", "content": "no code at all {"}]]


def test_bad_completions_get_the_lowest_values_and_a_reason(engine: Engine) -> None:
    reward = rewards.quality_efficiency("time", engine=engine)
    results = reward.score([{"completion": c, "tests": TESTS, "baseline_code": FAST} for c in BAD])
    for completion, result in zip(BAD, results, strict=True):
        assert result.value is not None, completion
        assert result.components["afterburner_format"] == -1.0
        assert result.components["transition"] == -1.0  # pass -> fail
        assert result.components["efficiency_time"] == 0.0
        assert result.components["quality"] < 0.2, (completion, result.components)
        has_reason = "reason" in result.info or result.info["transition"]["status"] != "passed"
        assert has_reason, result.info


def test_configuration_errors_fail_fast(engine: Engine) -> None:
    with pytest.raises(ConfigError, match="tests"):
        rewards.pass_rate(engine=engine)(completions=[wrap(FAST)])
    with pytest.raises(ConfigError, match="objective"):
        rewards.afterburner("speed")
    [bad] = rewards.pass_rate(engine=engine).evaluate([wrap(FAST)], {"tests": ["{not json"]})
    assert bad.value == 0.0 and "not valid JSON" in bad.info["reason"]
    with pytest.raises(ConfigError, match="baseline"):
        rewards.transition(engine=engine)(completions=[wrap(FAST)], tests=[TESTS])
    with pytest.raises(ConfigError, match="one entry per completion"):
        rewards.pass_rate(engine=engine)(completions=[wrap(FAST)] * 2, tests=[TESTS])
    with pytest.raises(ConfigError, match="reference_metrics"):
        rewards.percentile(engine=engine)(completions=[wrap(FAST)], tests=[TESTS])


def test_strict_mode_raises_on_bad_completions(engine: Engine) -> None:
    with pytest.raises(ValueError, match="None"):
        rewards.pass_rate(engine=engine, strict=True)(completions=[None], tests=[TESTS])


def test_one_run_per_distinct_completion_and_cached_across_calls(sandbox: Sandbox) -> None:
    engine = Engine(sandbox=sandbox)
    reward = rewards.quality_efficiency("time", engine=engine)
    group = [wrap(FAST)] * 3 + [wrap(SLOW)] * 3 + [wrap(PARTIAL), "junk"]
    columns = {"tests": [json.dumps(TESTS)] * 8, "baseline_code": [SLOW] * 8}
    first = reward(completions=group, **columns)
    # distinct runs: FAST, SLOW (also the baseline), PARTIAL, and "junk" as code
    assert engine.executions == 4
    again = reward(completions=list(reversed(group)), **columns)
    assert engine.executions == 4 and again == list(reversed(first))
    for function in reward.functions():  # per-component functions share the engine
        function(completions=group, **columns)
    assert engine.executions == 4
    engine.close()  # a sandbox handed in belongs to the caller and stays open
    assert sandbox.run(FAST, TESTS).passed


def test_component_functions_for_trl(engine: Engine) -> None:
    reward = rewards.quality_efficiency("memory", engine=engine)
    functions = reward.functions()
    assert [f.__name__ for f in functions] == ["afterburner_format", "transition",
                                                "efficiency_memory", "quality"]
    assert reward.weights == [0.1, 0.35, 0.3, 0.25]
    columns = {"tests": [TESTS] * 2, "baseline_code": [SLOW] * 2}
    completions = [wrap(FAST), [{"role": "assistant", "content": wrap(PARTIAL)}]]
    per_component = [f(completions, **columns) for f in functions]
    combined = reward(completions, **columns)
    for i in range(2):
        expected = sum(w * values[i] for w, values in zip(reward.weights, per_component, strict=True))
        assert combined[i] == pytest.approx(expected)


def test_trainer_logging_hooks(engine: Engine) -> None:
    metrics: dict[str, list[float]] = {}
    extra: dict[str, list[Any]] = {}
    reward = rewards.cisq_grpo(engine=engine)
    reward([wrap(FAST), wrap(PARTIAL)], tests=[TESTS] * 2,
           log_metric=lambda k, v: metrics.setdefault(k, []).append(v),
           log_extra=lambda k, v: extra.setdefault(k, []).extend(v), trainer_state=object())
    assert extra["rewardkit_status"] == ["passed", "wrong_answer"]
    assert metrics["rewardkit/pass_rate"] == [pytest.approx((1 + 2 / 3) / 2)]
    assert metrics["rewardkit/status/passed"] == [0.5]


def test_async_variant_gives_the_same_values(engine: Engine) -> None:
    reward = rewards.cisq_grpo(engine=engine)
    function = reward.as_async()
    assert function.__name__ == "cisq_grpo"
    values = asyncio.run(function([wrap(FAST), wrap(SLOW)], tests=[TESTS] * 2))
    assert values == reward([wrap(FAST), wrap(SLOW)], tests=[TESTS] * 2)


def test_verl_functions() -> None:
    """verl's dict form (more in test_verl.py)."""
    good = compute_score("mini", f"```python\n{FAST}```", json.dumps(TESTS))
    batch = compute_score_batch(["mini", "mini"], [f"```python\n{FAST}```", "nonsense"],
                                [TESTS, TESTS], [None, {"language": "python"}])
    assert batch[0] == pytest.approx(good) and good["score"] > 0.5
    # no block, no pass: only quality, whose average keeps the clean characteristics' 1.0
    assert batch[1]["score"] < 0.4 < good["score"] - 0.4


def _kill_new_workers(before: set[int], stop: threading.Event) -> None:
    while not stop.is_set():
        for child in children_with("runtime.worker"):
            if child.pid not in before:
                os.kill(child.pid, signal.SIGKILL)
        time.sleep(0.01)


def test_infrastructure_fault_gives_none_not_a_score() -> None:
    before = {p.pid for p in psutil.Process().children()}
    stop = threading.Event()
    killer = threading.Thread(target=_kill_new_workers, args=(before, stop))
    killer.start()
    try:
        with Sandbox(workers=1, limits=Limits(time_s=2)) as doomed:
            reward = rewards.cisq_grpo(engine=Engine(sandbox=doomed))
            values = reward([wrap(FAST)], tests=[TESTS])
            [result] = reward.score([{"completion": wrap(FAST), "tests": TESTS}])
    finally:
        stop.set()
        killer.join()
    assert values == [None]
    assert result.components["pass_rate"] is None
    assert result.info["pass_rate"]["status"] == "sandbox_error"


def test_a_failed_analysis_tool_gives_none_not_a_perfect_score() -> None:
    view = View(FAST, {}, completion_text(FAST), code=FAST)
    view.report = QualityReport.from_findings([], [ToolError("pylint", "timed out after 30 s")])
    value, info = quality().compute(view)
    assert value is None and info == {"tool_errors": [str(ToolError("pylint", "timed out after 30 s"))]}
    view.report = QualityReport.from_findings([])
    assert quality().compute(view)[0] == 1.0
