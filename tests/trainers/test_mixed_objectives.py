"""GRPO on a mix of efficiency objectives: each row's ``objective`` column picks its own efficiency measure.

The Afterburner seed (000, section 4, DS_GRPO) trains one GRPO run on
prompts (P, I, C, M) whose instruction I is time-, memory- or
integral-efficient, and its efficiency reward (equation 8) compares "the
corresponding performance metric" of I.  ``efficiency(objective="row")``
reads I from each row; these tests compare it, on real sandbox runs, with
the single-objective reward of each row's own objective.
"""

from __future__ import annotations

import os

# Never reach a hub: set before any Hugging Face module reads these at import.
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")

import json
from pathlib import Path
from typing import Any

import pytest

from rewardkit.benchmarks.embedded import load_mini
from rewardkit.benchmarks.problem import Problem
from rewardkit.benchmarks.references import measure_references
from rewardkit.rewards import ConfigError, Engine, afterburner, components, efficiency, quality_efficiency
from rewardkit.sandbox import Sandbox

OBJECTIVES = ("time", "memory", "integral")
TESTS = json.dumps({"mode": "stdio", "cases": [{"input": "21\n", "output": "42\n"}]})
HEAVY = "x = b'x' * 60_000_000\n"  # 60 MB, every page touched
SLOW = "s = 0\nfor i in range(3_000_000):\n    s += i\n"  # a few hundred ms of CPU
ANSWER = "print(int(input()) * 2)\n"
BASELINE = HEAVY + SLOW + ANSWER  # slow and heavy: every candidate below may gain on some objective
CANDIDATES = {"light_fast": ANSWER, "heavy_fast": HEAVY + ANSWER, "light_slow": SLOW + ANSWER}


def fenced(code: str) -> str:
    return f"```python\n{code}```"


def rows(objectives: tuple[str, ...] = OBJECTIVES) -> list[dict[str, Any]]:
    """One record per (objective, candidate): the same problem and baseline, each objective's rows."""
    return [{"completion": fenced(code), "tests": TESTS, "baseline_code": BASELINE, "objective": objective}
            for objective in objectives for code in CANDIDATES.values()]


@pytest.fixture(scope="module")
def engine(sandbox: Sandbox) -> Engine:
    """One engine for every reward here: each code runs once and all rewards read the same measurement."""
    return Engine(sandbox=sandbox)


def test_each_row_is_scored_with_its_own_objective(engine: Engine) -> None:
    samples = rows()
    mixed = [r.value for r in efficiency("row", engine=engine).score(samples)]
    single = {o: [r.value for r in efficiency(o, engine=engine).score(samples)] for o in OBJECTIVES}
    expected = [single[sample["objective"]][i] for i, sample in enumerate(samples)]
    assert mixed == expected
    assert None not in mixed and engine.executions <= 1 + len(CANDIDATES)  # one run per distinct code
    # the routing matters: the heavy but fast candidate gains time, not memory
    by_objective = {(s["objective"], s["completion"]): v for s, v in zip(samples, mixed, strict=True)}
    heavy_fast = fenced(CANDIDATES["heavy_fast"])
    assert by_objective["time", heavy_fast] > 0.5 > 0.2 > by_objective["memory", heavy_fast]


@pytest.mark.parametrize("preset", [afterburner, quality_efficiency])
def test_presets_take_per_row_objectives(engine: Engine, preset: Any) -> None:
    reward = preset(objective="row", engine=engine)
    names = [component.name for component, _ in reward.components]
    assert "efficiency_row" in names and reward.weights == preset(engine=engine).weights
    if preset is quality_efficiency:  # the same efficiency component; the analysis is tested elsewhere
        return
    samples = rows()
    mixed = [r.value for r in reward.score(samples)]
    single = {o: [r.value for r in preset(objective=o, engine=engine).score(samples)] for o in OBJECTIVES}
    assert mixed == [single[s["objective"]][i] for i, s in enumerate(samples)]


BAD_ROWS = {
    "unknown": ({"objective": "speed"}, r"unknown objective 'speed' in the .objective. column.*integral$"),
    "instructions": ({"objective": "instructions"}, r"instruction meter.*objective='instructions'"),
    "missing": ({}, r"'objective' column"),
}


@pytest.mark.parametrize(("column", "message"), list(BAD_ROWS.values()), ids=list(BAD_ROWS))
def test_a_bad_row_objective_is_a_clear_error(engine: Engine, column: dict[str, str], message: str) -> None:
    sample = {"completion": "no code at all", "tests": TESTS, "baseline_code": BASELINE, **column}
    with pytest.raises(ConfigError, match=message):  # even for a completion that would score 0
        efficiency("row", engine=engine).score([sample])


def test_per_row_objectives_refuse_one_upper_bound() -> None:
    with pytest.raises(ConfigError, match="upper"):
        components.efficiency("row", upper=10.0)


# -- a GRPO trainer on the concatenated rows --------------------------------------------------------
@pytest.fixture(scope="module")
def problems(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> list[Problem]:
    """Two embedded problems with their references measured (cache kept aside)."""
    chosen = [p for p in load_mini() if p.problem_id in ("mini/count-pairs", "mini/first-unique-char")]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REWARDKIT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        measure_references(chosen, sandbox, progress=False)
    return chosen


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``python -m rewardkit.trainers.tiny DIR``: an untrained tiny model (junk answers are fine here)."""
    from rewardkit.trainers import tiny

    path = tmp_path_factory.mktemp("tiny-model")
    assert tiny.main([str(path)]) == 0
    return str(path)


SMALL = {"report_to": "none", "bf16": False, "use_cpu": True, "save_strategy": "no", "seed": 0,
         "per_device_train_batch_size": 3, "num_generations": 3, "gradient_accumulation_steps": 1,
         "max_completion_length": 8, "logging_steps": 1}


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_grpo_trains_on_the_three_objectives_concatenated(tiny_model: str, problems: list[Problem],
                                                          sandbox: Sandbox, tmp_path: Path) -> None:
    from rewardkit.trainers import grpo
    from rewardkit.trainers.datasets import grpo_rows

    mixed = [row for objective in OBJECTIVES for row in grpo_rows(problems, objective, sandbox=sandbox)]
    assert {row["objective"] for row in mixed} == set(OBJECTIVES)
    trainer = grpo.build_trainer(tiny_model, mixed, "afterburner", None, tmp_path, Engine(sandbox=sandbox),
                                 max_steps=1, **SMALL)
    names = [f.__name__ for f in trainer.reward_funcs]
    assert names == ["afterburner_format", "transition", "efficiency_row"]
    trainer.train()
    assert trainer.state.global_step == 1

    # TRL's call: columns as keyword lists; the component logs one mean per objective as well
    function = trainer.reward_funcs[names.index("efficiency_row")]
    columns = {key: [row[key] for row in mixed] for key in ("tests", "baseline_metrics", "objective")}
    completions = [[{"role": "assistant", "content": fenced(problems[0].references[0].code + "\n")}]
                   if row["problem_id"] == problems[0].problem_id else "no code" for row in mixed]
    logged: dict[str, float] = {}
    values = function(completions, log_metric=logged.__setitem__, **columns)
    assert set(logged) == {f"rewardkit/efficiency_{o}" for o in OBJECTIVES}
    for objective in OBJECTIVES:
        own = [v for v, row in zip(values, mixed, strict=True) if row["objective"] == objective]
        assert logged[f"rewardkit/efficiency_{objective}"] == pytest.approx(sum(own) / len(own))


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_grpo_objective_comes_from_the_dataset_or_must_agree(tiny_model: str, problems: list[Problem],
                                                             sandbox: Sandbox, tmp_path: Path) -> None:
    from rewardkit.trainers import grpo
    from rewardkit.trainers.datasets import grpo_rows

    memory = grpo_rows(problems[:1], "memory", sandbox=sandbox)
    built = grpo.build_trainer(tiny_model, memory, "afterburner", None, tmp_path, max_steps=0, **SMALL)
    assert [f.__name__ for f in built.reward_funcs][-1] == "efficiency_memory"  # one objective: its own
    with pytest.raises(ValueError, match=r"objective\(s\) \['memory'\].*for 'time'"):
        grpo.build_trainer(tiny_model, memory, objective="time")
    mixed = memory + grpo_rows(problems[:1], "time", sandbox=sandbox)
    with pytest.raises(ValueError, match="objective=None"):
        grpo.build_trainer(tiny_model, mixed, objective="time")
    with pytest.raises(ValueError, match="unknown objective 'speed'"):
        grpo.build_trainer(tiny_model, [{**memory[0], "objective": "speed"}], objective=None)


def test_train_command_mixes_the_three_objectives(tiny_model: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from rewardkit.trainers.train import main

    monkeypatch.setenv("REWARDKIT_CACHE_DIR", str(tmp_path / "cache"))
    code = main(["grpo", "--model", tiny_model, "--dataset", "mini", "--limit", "1", "--objective", "mix",
                 "--preset", "afterburner", "--max-steps", "1", "--num-generations", "2", "--batch-size", "2",
                 "--grad-accum", "1", "--max-completion-length", "16", "--repeats", "1",
                 "--out", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "3 rows, 1 steps" in captured.out  # one prompt per objective, rewarded on its own
