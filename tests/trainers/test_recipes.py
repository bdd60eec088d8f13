"""The training recipes: data builders on measured embedded problems, and a few real TRL steps each.

The tiny model (:mod:`tiny_lm`, the ``tiny_lm`` fixture) is built once; the problems' references are
measured once in the session's sandbox (one run each), with the reference
cache in a temporary folder.
"""

from __future__ import annotations

import os

# Never reach a hub: set before any Hugging Face module reads these at import.
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")

import json
import math
from pathlib import Path
from typing import Any

import pytest
from peft import PeftModel
from tiny_lm import ANSWERS, TinyLM, longest_answer_tokens

from rewardkit.benchmarks.embedded import load_mini
from rewardkit.benchmarks.problem import Problem, Reference
from rewardkit.benchmarks.references import measure_references
from rewardkit.rewards import WEIGHTS, Engine, formulas
from rewardkit.sandbox import Sandbox, TestSuite
from rewardkit.trainers import dpo, grpo, sft
from rewardkit.trainers.datasets import (
    answer_text,
    cold_start_filter,
    dpo_rows,
    grpo_rows,
    sft_rows,
)
from rewardkit.trainers.precision import precision
from rewardkit.trainers.prompts import SYSTEM_PROMPT
from rewardkit.trainers.train import main

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]

IDS = ("mini/count-pairs", "mini/missing-number/stdio", "mini/first-unique-char")
MARGIN = 0.05  # the builders' default
# What every trainer here runs with: tiny batches on the CPU, no reports.
SMALL = {"max_steps": 2, "logging_steps": 1, "report_to": "none", "bf16": False, "use_cpu": True,
         "save_strategy": "no", "seed": 0, "gradient_accumulation_steps": 1}


@pytest.fixture(scope="module")
def problems(sandbox: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> list[Problem]:
    """Three embedded problems with their references measured (one run each, cache kept aside)."""
    chosen = [p for p in load_mini() if p.problem_id in IDS]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("REWARDKIT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        measure_references(chosen, sandbox, progress=False)
    return chosen


def time_of(problem: Problem, code: str) -> float:
    """The measured time of the reference with this code."""
    return float(next(r for r in problem.references if r.code.strip() == code.strip()).metrics["time_s"])


def solution_code(text: str) -> str:
    """The code inside an Afterburner answer's fenced block."""
    return text.split("```python\n", 1)[1].split("\n```", 1)[0]


def original_code(prompt: list[dict[str, str]]) -> str:
    """The original solution a conversational Afterburner prompt shows."""
    return prompt[-1]["content"].split("## Original solution\n```python\n", 1)[1].split("\n```", 1)[0]


def logged(trainer: Any, key: str) -> dict[int, float]:
    return {entry["step"]: entry[key] for entry in trainer.state.log_history if key in entry}


# -- builders -----------------------------------------------------------------------------------------
def test_grpo_rows_show_the_slowest_reference(problems: list[Problem]) -> None:
    rows = grpo_rows(problems, "time")
    assert [row["problem_id"] for row in rows] == [p.problem_id for p in problems]
    for problem, row in zip(problems, rows, strict=True):
        assert set(row) == {"prompt", "tests", "baseline_code", "baseline_metrics", "language", "problem_id",
                            "objective"}
        slowest = max(problem.passing_references(), key=lambda r: r.metrics["time_s"])
        assert row["baseline_code"] == slowest.code
        metrics = json.loads(row["baseline_metrics"])
        assert metrics["passed"] is True and metrics["time_s"] == slowest.metrics["time_s"]
        assert TestSuite.from_dict(json.loads(row["tests"])).to_dict() == problem.tests.to_dict()
        assert (row["language"], row["objective"]) == ("python", "time")
        system, user = row["prompt"]
        assert system == {"role": "system", "content": SYSTEM_PROMPT}
        assert original_code(row["prompt"]) == slowest.code.rstrip()
        assert "time-efficient" in user["content"] and problem.statement.strip() in user["content"]


def test_grpo_rows_standard_format_and_empty_original(problems: list[Problem]) -> None:
    rows = grpo_rows(problems[:1], "memory", original=lambda problem: None, conversational=False)
    (row,) = rows
    assert row["prompt"].startswith(SYSTEM_PROMPT)
    assert "(empty)" in row["prompt"] and "memory-efficient" in row["prompt"]
    assert (row["baseline_code"], json.loads(row["baseline_metrics"])) == ("", {"passed": False})


def test_builders_measure_references_that_are_not_measured(sandbox: Sandbox, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REWARDKIT_CACHE_DIR", str(tmp_path))
    [problem] = [p for p in load_mini() if p.problem_id == IDS[0]]  # a fresh copy: nothing measured
    assert not problem.measured
    [row] = grpo_rows([problem], sandbox=sandbox)
    assert problem.measured and json.loads(row["baseline_metrics"])["passed"] is True
    assert list((tmp_path / "references").rglob("*.json"))  # measured here, and cached
    with pytest.raises(ValueError, match="original"):
        grpo_rows([], original="fastest")


def test_sft_pairs_go_from_slower_to_faster(problems: list[Problem]) -> None:
    rows = sft_rows(problems, "time", per_problem=3)
    assert rows == sft_rows(problems, "time", per_problem=3)  # drawn with a fixed seed
    by_id = {p.problem_id: p for p in problems}
    for problem_id in IDS:
        mine = [row for row in rows if row["problem_id"] == problem_id]
        assert len(mine) == 3
        assert len({(original_code(r["prompt"]), r["completion"][0]["content"]) for r in mine}) == 3
    for row in rows:
        problem = by_id[row["problem_id"]]
        (message,) = row["completion"]
        assert message["role"] == "assistant"
        assert formulas.afterburner_format(message["content"]) == 1.0
        slower, faster = original_code(row["prompt"]), solution_code(message["content"])
        assert time_of(problem, slower) > (1 + MARGIN) * time_of(problem, faster)
    plain = sft_rows(problems, "time", conversational=False)
    assert all(isinstance(row["prompt"], str) and isinstance(row["completion"], str) for row in plain)


def test_dpo_triples_rank_chosen_middle_rejected(problems: list[Problem]) -> None:
    rows = dpo_rows(problems, "time", per_problem=2)
    assert len(rows) == 2 * len(IDS)
    by_id = {p.problem_id: p for p in problems}
    for row in rows:
        assert set(row) == {"prompt", "chosen", "rejected", "problem_id", "objective"}
        problem = by_id[row["problem_id"]]
        chosen, rejected = row["chosen"][0]["content"], row["rejected"][0]["content"]
        assert formulas.afterburner_format(chosen) == formulas.afterburner_format(rejected) == 1.0
        best, middle = time_of(problem, solution_code(chosen)), time_of(problem, original_code(row["prompt"]))
        worst = time_of(problem, solution_code(rejected))
        assert best <= middle <= worst and worst > (1 + MARGIN) * best


def test_builders_skip_problems_without_enough_passing_references() -> None:
    metrics = {"passed": True, "time_s": 1.0, "peak_memory_kb": 10.0, "integral_kb_s": 10.0}
    suite = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "1\\n"}]})
    problem = Problem("toy", "Print 1.", suite,
                      references=[Reference("print(1)", "a", metrics),
                                  Reference("print(1 )", "b", {**metrics, "time_s": 1.01}),
                                  Reference("x", "broken", {"passed": False})])
    assert sft_rows([problem]) == dpo_rows([problem]) == []  # the one pair is within the margin
    assert len(sft_rows([problem], margin=0.0)) == 1


def test_cold_start_filter_keeps_the_afterburner_format() -> None:
    nested = "<thinking>a<thinking>b</thinking></thinking><solution>x</solution>"
    twice = "<thinking>a</thinking><solution>x</solution><solution>y</solution>"
    texts = [*ANSWERS, nested, twice, answer_text("print(1)", "one line")]
    assert cold_start_filter(texts) == [*ANSWERS[:3], ANSWERS[5], texts[-1]]


# -- trainers -----------------------------------------------------------------------------------------
def test_grpo_trains_and_logs_every_component(tiny_lm: TinyLM, problems: list[Problem], sandbox: Sandbox,
                                              tmp_path: Path) -> None:
    trainer = grpo.build_trainer(
        str(tiny_lm.path), grpo_rows(problems), "quality_efficiency", "time", tmp_path,
        Engine(sandbox=sandbox), **{**SMALL, "save_strategy": "steps", "save_steps": 2},
        per_device_train_batch_size=4, num_generations=4,
        max_completion_length=longest_answer_tokens(tiny_lm.tokenizer))
    args = trainer.args
    assert (args.learning_rate, args.temperature, args.beta, args.lr_scheduler_type) == (
        1e-6, 1.0, 0.0, "constant")  # the seed's defaults stay where not overridden
    assert args.reward_weights == list(WEIGHTS["quality_efficiency"].values())
    trainer.train()
    assert trainer.state.global_step == 2
    names = [f.__name__ for f in trainer.reward_funcs]
    assert names == ["afterburner_format", "transition", "efficiency_time", "quality"]
    for name in names:
        assert set(logged(trainer, f"rewards/{name}/mean")) == {1, 2}, name
    assert any(key.startswith("rewardkit/status/") for entry in trainer.state.log_history for key in entry)
    assert (tmp_path / "checkpoint-2" / "model.safetensors").exists()


def test_grpo_refuses_a_mismatched_objective_or_preset(tiny_lm: TinyLM, problems: list[Problem]) -> None:
    rows = grpo_rows(problems[:1], "time")
    with pytest.raises(ValueError, match="objective"):
        grpo.build_trainer(str(tiny_lm.path), rows, objective="memory")
    with pytest.raises(ValueError, match="preset"):
        grpo.build_trainer(str(tiny_lm.path), rows, preset="nonesuch")


@pytest.mark.parametrize("lora_r", [None, 4])
def test_sft_trains_on_pairs(tiny_lm: TinyLM, problems: list[Problem], tmp_path: Path,
                             lora_r: int | None) -> None:
    trainer = sft.build_trainer(str(tiny_lm.path), sft_rows(problems), tmp_path, lora_r=lora_r,
                                per_device_train_batch_size=2, max_length=None, **SMALL)
    assert (trainer.args.learning_rate, trainer.args.warmup_steps) == (3e-5, 200)
    assert isinstance(trainer.model, PeftModel) == (lora_r is not None)
    trainer.train()
    assert trainer.state.global_step == 2
    losses = logged(trainer, "loss")
    assert set(losses) == {1, 2} and all(math.isfinite(loss) for loss in losses.values())


def test_dpo_trains_on_triples(tiny_lm: TinyLM, problems: list[Problem], tmp_path: Path) -> None:
    trainer = dpo.build_trainer(str(tiny_lm.path), dpo_rows(problems), tmp_path,
                                per_device_train_batch_size=2, max_length=None, **SMALL)
    assert (trainer.args.beta, trainer.args.loss_type, trainer.args.learning_rate) == (0.1, ["sigmoid"], 4e-5)
    trainer.train()
    assert trainer.state.global_step == 2
    assert set(logged(trainer, "rewards/margins")) == {1, 2}


def test_precision_is_bf16_only_where_cuda_supports_it() -> None:
    import torch

    assert precision({}) == {"bf16": torch.cuda.is_available() and torch.cuda.is_bf16_supported()}
    assert precision({"use_cpu": True}) == {"bf16": False}
    assert precision({"fp16": True}) == precision({"bf16": True}) == {}  # the caller's choice stands


# -- command line -------------------------------------------------------------------------------------
def test_train_command_end_to_end(tiny_lm: TinyLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("REWARDKIT_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "sft"
    code = main(["sft", "--model", str(tiny_lm.path), "--dataset", "mini", "--limit", "2", "--out", str(out),
                 "--max-steps", "1", "--save-steps", "1", "--repeats", "1"])
    assert code == 0, capsys.readouterr().err
    assert (out / "checkpoint-1").is_dir()
    assert (out / "model.safetensors").exists() and (out / "tokenizer.json").exists()
    assert "2 rows, 1 steps" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    ([], "required"),
    (["ppo", "--model", "m", "--out", "o"], "invalid choice"),
    (["grpo", "--model", "m", "--out", "o", "--lora-r", "4"], "unrecognized arguments"),
    (["sft", "--model", "m", "--out", "o", "--max-steps", "0"], "must be 1 or more"),
    (["dpo", "--model", "m", "--out", "o", "--dataset", "no/such/file.jsonl"], "neither a dataset name"),
])
def test_train_command_bad_usage(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err
