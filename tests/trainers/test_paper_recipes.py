"""Issue 15, recipes: the Afterburner Table 2 ablations and per-preset GRPO settings follow their papers.

* Afterburner (seed 000/001), Table 2 and section 3.1 / Figure 2 / F.3: the
  prompt's inputs are the problem, the instruction, the original code and
  the original performance (``Passed / Time / Memory / Integral``), the
  Monolith "execution feedback".  "Remove Feedback" drops that performance
  (and rewardkit's failure text, which is feedback too); "Remove Original
  Code" drops the code and keeps the performance.
* GRPO settings per preset: the CISQ quality paper (seed 002, section 3.2:
  eps_low 0.2, eps_high 0.28, beta 0.001, the 1/|o_i| per-sequence mean of
  its equation 1) for ``cisq_grpo``; Afterburner's appendix E.5 (16
  generations, temperature 1.0, no KL, lr 1e-6) for ``afterburner`` and
  ``quality_efficiency``.
"""

from __future__ import annotations

import os

# Never reach a hub: set before any Hugging Face module reads these at import.
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from rewardkit.benchmarks.embedded import load_mini
from rewardkit.sandbox import Sandbox
from rewardkit.trainers.afterburner import optimize
from rewardkit.trainers.datasets import answer_text
from rewardkit.trainers.generators import Prompt, ReplayGenerator
from rewardkit.trainers.optimize import build_parser
from rewardkit.trainers.prompts import afterburner_prompt

if TYPE_CHECKING:
    from tiny_lm import TinyLM

CODE = "def count_pairs(nums, target):\n    return 0\n"
FAILED = {"passed": False, "status": "wrong_answer", "time_s": 0.01234, "peak_memory_kb": 9876,
          "integral_kb_s": 54.321}
PASSED = {**FAILED, "passed": True, "status": "passed"}
WHY = "test 3: expected 2, got 0"
NUMBERS = ("0.01234", "9876", "54.32")


def user(prompt: Prompt | None) -> str:
    assert isinstance(prompt, list)
    return prompt[-1]["content"]


# -- 1. the Table 2 ablations ------------------------------------------------------------------------
@pytest.mark.parametrize("measured", [FAILED, PASSED])
def test_the_prompt_with_feedback_shows_the_measurements_and_the_failure(measured: dict[str, Any]) -> None:
    text = afterburner_prompt("Count pairs.", "time", "python", CODE, measured, WHY)
    assert all(number in text for number in NUMBERS) and "## Original performance" in text
    assert (WHY in text) is (not measured["passed"])
    assert CODE.strip() in text


@pytest.mark.parametrize("measured", [FAILED, PASSED])
def test_no_feedback_leaves_out_every_measurement_and_the_failure(measured: dict[str, Any]) -> None:
    text = afterburner_prompt("Count pairs.", "time", "python", CODE, measured, WHY, execution_feedback=False)
    assert not any(number in text for number in NUMBERS)
    for word in ("Original performance", "Passed", "Time:", "Memory", "Integral", WHY, "Why it failed"):
        assert word not in text, word
    assert CODE.strip() in text and "## Problem\nCount pairs." in text  # the rest is the paper's template


def test_no_original_leaves_out_the_code_and_keeps_the_feedback() -> None:
    text = afterburner_prompt("Count pairs.", "time", "python", None, FAILED, WHY)
    assert CODE.strip() not in text and "(empty)" in text
    assert all(number in text for number in NUMBERS) and WHY in text


def test_the_loop_sends_the_ablation_prompts(sandbox: Sandbox) -> None:
    problem = next(p for p in load_mini() if p.problem_id == "mini/count-pairs")
    prompts = {}
    for flags in ({}, {"feedback": False}, {"show_original": False}):
        generator = ReplayGenerator([answer_text(CODE, "again")])
        trajectory, = optimize(problem, generator, iterations=1, original_code=CODE, sandbox=sandbox,
                               progress=False, **flags)
        prompts[tuple(flags)] = (user(generator.prompts[0]), trajectory.steps[0])
    full, start = prompts[()]
    assert "Passed: no" in full and "## Why it failed" in full and start.feedback.strip() in full
    ablated, start = prompts[("feedback",)]
    assert CODE.strip() in ablated
    assert "Passed" not in ablated and "## Why it failed" not in ablated
    assert start.feedback.strip() not in ablated
    assert "Time:" not in ablated and "Memory:" not in ablated and "Integral:" not in ablated
    no_code, _ = prompts[("show_original",)]
    assert CODE.strip() not in no_code and "Passed: no" in no_code and "## Why it failed" in no_code


def test_the_flags_say_what_they_leave_out() -> None:
    helps = {action.dest: action.help or "" for action in build_parser()._actions}
    assert all(word in helps["no_feedback"] for word in ("time", "memory", "fail"))
    assert "Table 2" in helps["no_feedback"] and "Table 2" in helps["no_original"]


# -- 2. per-preset GRPO settings ---------------------------------------------------------------------
AFTERBURNER = {"learning_rate": 1e-6, "num_generations": 16, "temperature": 1.0, "beta": 0.0}
CISQ = {"epsilon": 0.2, "epsilon_high": 0.28, "beta": 0.001, "loss_type": "grpo"}


def test_one_table_holds_every_preset_s_settings() -> None:
    from rewardkit.rewards import PRESETS, SINGLES
    from rewardkit.trainers import grpo

    assert set(grpo.SETTINGS) == set(PRESETS) - set(SINGLES)  # a single component trains as afterburner
    assert grpo.SETTINGS["cisq_grpo"].items() >= CISQ.items()
    for preset in ("afterburner", "quality_efficiency"):
        assert grpo.SETTINGS[preset].items() >= AFTERBURNER.items()
        assert grpo.SETTINGS[preset].get("epsilon_high") in (None, 0.2)


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize(("preset", "expected"), [("cisq_grpo", CISQ), ("afterburner", AFTERBURNER),
                                                  ("quality_efficiency", AFTERBURNER)])
def test_the_built_trainer_carries_its_paper_s_settings(tiny_lm: TinyLM, tmp_path: Path, preset: str,
                                                        expected: dict[str, Any]) -> None:
    from rewardkit.trainers import grpo

    rows = [{"prompt": [{"role": "user", "content": "Count pairs."}]}] * 2
    trainer = grpo.build_trainer(str(tiny_lm.path), rows, preset, "time", tmp_path, max_steps=0,
                                 report_to="none", use_cpu=True, bf16=False, save_strategy="no")
    args = trainer.args
    assert {key: getattr(args, key) for key in expected} == expected
    if preset != "cisq_grpo":
        assert args.epsilon_high in (None, 0.2) and args.epsilon == 0.2  # Verl's symmetric clip
    overridden = grpo.build_trainer(str(tiny_lm.path), rows, preset, "time", tmp_path, max_steps=0,
                                    report_to="none", use_cpu=True, bf16=False, save_strategy="no", beta=0.05)
    assert overridden.args.beta == 0.05  # a keyword still wins


def test_train_grpo_passes_its_preset(sandbox: Sandbox, tmp_path: Path) -> None:
    """``train grpo --preset cisq_grpo`` builds with the preset's table row (no keyword masks it)."""
    from rewardkit.trainers import train

    seen: dict[str, Any] = {}

    class Recipe:
        @staticmethod
        def build_trainer(model: str, rows: Any, preset: str, objective: str, out: Any, engine: Any,
                          **overrides: Any) -> None:
            seen.update(preset=preset, overrides=overrides)

    args = train.build_parser().parse_args(["grpo", "--model", str(tmp_path), "--out", str(tmp_path / "out"),
                                        "--preset", "cisq_grpo"])
    train.build(args, Recipe, [], sandbox)  # type: ignore[arg-type]
    assert seen["preset"] == "cisq_grpo"
    assert not set(seen["overrides"]) & {"beta", "epsilon", "epsilon_high", "loss_type", "learning_rate",
                                          "temperature", "num_generations"}
