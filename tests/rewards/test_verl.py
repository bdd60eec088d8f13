"""verl's custom reward function in-process, called the way verl's current source calls it
(:mod:`verl_calls`)."""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from rewardkit.benchmarks.perf.verl_calls import verl_manager, verl_wrap
from rewardkit.rewards import ConfigError, Engine, RewardResult, afterburner, cisq_grpo, verl
from rewardkit.rewards.verl import compute_score, compute_score_batch

FAULT_KEY = "rewardkit_fault"

TESTS = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{n * (n + 1) // 2}\n"}
                                    for n in (3, 100, 1000)]}
FAST = "n = int(input())\nprint(n * (n + 1) // 2)\n"
SLOW = "n = int(input())\ntotal = 0\nfor i in range(n + 1):\n    total += i\nprint(total)\n"
WRONG = "n = int(input())\nprint(n)\n"


def block(code: str) -> str:
    return f"```python\n{code}```"


def grpo_batch(marker: str) -> list[tuple[str, Any, dict[str, Any]]]:
    """16 samples as a GRPO step hands them: 2 prompts x 8 completions, duplicates in each
    group; ``marker`` makes the code new to every cache.  (solution, ground truth, extra info)."""
    samples = []
    for prompt in range(2):
        group = [FAST, FAST, FAST, SLOW, SLOW, WRONG, FAST, None]
        for code in group:
            text = f"I cannot solve this {marker}." if code is None else block(f"# {marker} {prompt}\n{code}")
            samples.append((text, json.dumps(TESTS), {"index": prompt, "split": "train"}))
    return samples


def distinct_runs(samples: list[tuple[str, Any, dict[str, Any]]]) -> int:
    return len({text for text, _, _ in samples})  # the same tests throughout


@pytest.fixture
def gathering() -> Iterator[Callable[..., verl._Scorer]]:
    """The scorer for some reward_kwargs, with a window long enough that a slow machine still
    starts all of a chunk's threads within it; the window is put back afterwards."""
    touched: list[tuple[verl._Scorer, float]] = []

    def get(**reward_kwargs: Any) -> verl._Scorer:
        run = verl.scorer(**reward_kwargs)
        touched.append((run, run.coalescer.window))
        run.coalescer.window = 1.0
        return run

    yield get
    for run, window in touched:
        run.coalescer.window = window


# -- per-sample calls are gathered into one engine batch ---------------------------------------
@pytest.mark.parametrize("name", ["compute_score", "compute_score_async"])
def test_a_chunk_of_per_sample_calls_is_one_engine_batch(name: str,
                                                         gathering: Callable[..., verl._Scorer]) -> None:
    raw = getattr(verl, name)
    run = gathering()
    samples = grpo_batch(uuid.uuid4().hex)
    executions, batches = run.reward.engine.executions, run.coalescer.batches
    results = verl_manager(verl_wrap(raw), samples)
    assert run.coalescer.batches - batches == 1
    assert run.reward.engine.executions - executions == distinct_runs(samples)  # each code once
    expected = compute_score_batch(["mini"] * len(samples), [s for s, _, _ in samples],
                                   [t for _, t, _ in samples], [i for _, _, i in samples])
    assert results == expected
    assert results[0]["pass_rate"] == 1.0 and results[5]["pass_rate"] == 0.0
    assert results[7]["pass_rate"] == 0.0


def test_calls_from_a_small_thread_pool_still_run_each_code_once(
        gathering: Callable[..., verl._Scorer]) -> None:
    """Fewer threads than samples (verl's pool on a small machine): several batches, each
    code still run once, every caller answered."""
    run = gathering()
    samples = grpo_batch(uuid.uuid4().hex)
    executions = run.reward.engine.executions
    results = verl_manager(verl_wrap(compute_score), samples, threads=3)
    assert all(isinstance(r, dict) for r in results)
    assert run.reward.engine.executions - executions == distinct_runs(samples)


def test_a_bad_sample_fails_alone_and_nobody_waits_forever(gathering: Callable[..., verl._Scorer]) -> None:
    gathering()
    samples = grpo_batch(uuid.uuid4().hex)[:6]
    samples[2] = (samples[2][0], {"mode": "stdio", "cases": []}, {})  # malformed tests
    for raw in (verl.compute_score, verl.compute_score_async):
        results = verl_manager(verl_wrap(raw), samples)
        assert results[2]["pass_rate"] == 0.0  # its tests' fault: it scores lowest, alone
        assert [isinstance(r, dict) for r in results] == [True] * 6


# -- reward_kwargs ---------------------------------------------------------------------------------
def test_reward_kwargs_choose_the_preset_and_its_options(engine: Engine,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong answer against a passing baseline: afterburner's transition penalty, a value no
    other preset gives (and no fresh timing in it)."""
    got = verl_wrap(compute_score, preset="afterburner", objective="memory")(
        data_source="mini", solution_str=block(WRONG), ground_truth=TESTS, extra_info={"baseline_code": SLOW})
    [want] = afterburner("memory", engine=engine).evaluate([block(WRONG)],
                                                           {"tests": [TESTS], "baseline_code": [SLOW]})
    [cisq] = cisq_grpo(engine=engine).evaluate([block(WRONG)], {"tests": [TESTS]})
    assert want.value != cisq.value
    assert got["score"] == pytest.approx(want.value)
    assert set(got) == {"score", "afterburner_format", "transition", "efficiency_memory", FAULT_KEY}
    assert verl.reward_for(preset="afterburner", objective="memory") is \
        verl.reward_for(preset="afterburner", objective="memory", reward_router_address="ignored")

    monkeypatch.setenv(verl.PRESET_ENV, "afterburner")  # the fallback when reward_kwargs name none
    assert verl.reward_for().__name__ == "afterburner"
    assert verl.reward_for(preset="cisq_grpo").__name__ == "cisq_grpo"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"preset": "best"}, r"unknown preset 'best'.*afterburner, .*cisq_grpo, .*quality_efficiency"),
    ({"objective": "time"}, r"preset 'cisq_grpo' has no option 'objective'.*format_penalty"),
    ({"preset": "afterburner", "objective": "speed"}, "unknown objective 'speed'"),
    ({"limits": {"time_s": -1}}, "time_s must be a positive number"),
    ({"limits": {"seconds": 1}}, "seconds"),
])
def test_a_wrong_reward_kwarg_fails_at_the_first_call(kwargs: dict[str, Any], message: str) -> None:
    for raw in (verl.compute_score, verl.compute_score_float, verl.compute_score_async):
        function = verl_wrap(raw, **kwargs)
        with pytest.raises(ConfigError, match=message):
            out = function(data_source="mini", solution_str="x", ground_truth=TESTS)
            if inspect.iscoroutine(out):
                asyncio.run(out)
    with pytest.raises(ConfigError, match=message):
        compute_score_batch(["mini"], ["x"], [TESTS], **kwargs)


# -- verl's dict form -----------------------------------------------------------------------------
def test_the_dict_form_is_the_reward_and_its_components(engine: Engine) -> None:
    texts = [block(FAST), block(WRONG), "no code"]
    results = [compute_score("mini", text, TESTS) for text in texts]
    expected = cisq_grpo(engine=engine).evaluate(texts, {"tests": [TESTS] * 3})
    for got, want in zip(results, expected, strict=True):
        assert got == {"score": pytest.approx(want.value), **want.components, FAULT_KEY: 0.0}
        assert all(type(v) is float for v in got.values())  # numbers only, as verl logs them
    assert len({tuple(r) for r in results}) == 1  # the same keys for every sample
    assert verl.compute_score_float("mini", texts[0], TESTS) == results[0]["score"]


def test_a_fault_is_zero_everywhere_and_flagged(caplog: pytest.LogCaptureFixture) -> None:
    fault = RewardResult(None, {"code_block_format": None, "pass_rate": None, "quality": None},
                         {"pass_rate": {"status": "sandbox_error"}})
    with caplog.at_level("WARNING", "rewardkit.rewards"):
        assert verl.verl_result(fault) == {"score": 0.0, "code_block_format": 0.0, "pass_rate": 0.0,
                                      "quality": 0.0, FAULT_KEY: 1.0}
    assert "verl gets 0.0" in caplog.text


def test_verl_loads_the_module_by_path_or_by_name() -> None:
    """``path: pkg://rewardkit.rewards.verl`` imports the package's module; a file path loads a
    module of its own, outside the package (verl/utils/import_utils.py, load_module)."""
    spec = importlib.util.spec_from_file_location("custom_module_1", verl.__file__)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    assert inspect.iscoroutinefunction(verl_wrap(loaded.compute_score_async))
    assert not inspect.iscoroutinefunction(verl_wrap(loaded.compute_score))
    assert loaded.compute_score("mini", block(FAST), TESTS)["pass_rate"] == 1.0


def test_verl_s_own_code_ground_truth() -> None:
    """verl's prime/APPS data: ``{"inputs": [...], "outputs": [...]}`` (stdio), with ``fn_name``
    for call-based problems, as a JSON string; passed through as the tests column."""
    stdio = json.dumps({"inputs": ["3\n", "100\n"], "outputs": ["6\n", "5050\n"]})
    assert compute_score("apps", block(FAST), stdio)["pass_rate"] == 1.0
    assert compute_score("apps", block(WRONG), stdio)["pass_rate"] == 0.0
    call = json.dumps({"fn_name": "add", "inputs": [[1, 2], [3, 4]], "outputs": [3, 7]})
    assert compute_score("apps", block("def add(a, b):\n    return a + b\n"), call)["pass_rate"] == 1.0
