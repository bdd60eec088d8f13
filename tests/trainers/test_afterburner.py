"""The Afterburner loop on embedded problems, in the real sandbox, with replayed and tiny-model completions.

One batched run covers the three greedy outcomes at once: a fail→pass
upgrade (count-pairs), rejected regressions (missing-number: slower, then
wrong) and a clearly faster code accepted (count-pairs/stdio).
"""

from __future__ import annotations

import os

# Never reach a hub: set before any Hugging Face module reads these at import.
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from rewardkit.benchmarks.embedded import load_mini
from rewardkit.benchmarks.problem import Problem
from rewardkit.benchmarks.references import measure_references
from rewardkit.sandbox import Sandbox, TestSuite
from rewardkit.trainers.afterburner import (
    GenerationFailed,
    Trajectory,
    iteration_metrics,
    judge,
    optimize,
    problem_key,
)
from rewardkit.trainers.datasets import answer_text
from rewardkit.trainers.generators import Prompt, ReplayGenerator, Sampling
from rewardkit.trainers.optimize import main

IDS = ("mini/count-pairs", "mini/missing-number", "mini/count-pairs/stdio")
WRONG = {"mini/count-pairs": "def count_pairs(nums, target):\n    return 0\n",
         "mini/missing-number": "def missing_number(nums):\n    return -1\n"}


def answer(code: str) -> str:
    """A completion in the Afterburner format."""
    return answer_text(code, "try this")


def reference(problem: Problem, label: str) -> str:
    """The code of the reference whose label starts with ``label``."""
    return next(r.code for r in problem.references if r.label.startswith(label))


def content(prompt: Prompt | None) -> str:
    """The user message of a chat prompt (after the system prompt)."""
    assert isinstance(prompt, list) and prompt[0]["role"] == "system"
    return prompt[-1]["content"]


class CountingReplay(ReplayGenerator):
    """A replay generator that also records how many prompts each call had."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[int] = []

    def generate(self, prompts: Any, sampling: Sampling | None = None, **options: Any) -> list[str]:
        self.calls.append(len(prompts))
        return super().generate(prompts, sampling, **options)


@pytest.fixture(scope="module")
def problems() -> dict[str, Problem]:
    return {p.problem_id: p for p in load_mini() if p.problem_id in IDS}


@pytest.fixture(scope="module")
def run(problems: dict[str, Problem], sandbox: Sandbox) -> tuple[list[Trajectory], CountingReplay]:
    """Two iterations on three problems, every outcome fixed by the replayed codes."""
    pairs, missing, stdio = (problems[i] for i in IDS)
    pool = {pairs.problem_id: [answer(reference(pairs, "hash map")), answer(WRONG[pairs.problem_id])],
            missing.problem_id: [answer(reference(missing, "naive")), answer(WRONG[missing.problem_id])],
            stdio.problem_id: [answer(reference(stdio, "hash map")), answer(reference(stdio, "naive"))]}
    originals = {pairs.problem_id: WRONG[pairs.problem_id], missing.problem_id: reference(missing, "sum"),
                 stdio.problem_id: reference(stdio, "naive")}
    generator = CountingReplay(pool, key=problem_key(list(problems.values())))
    trajectories = optimize([pairs, missing, stdio], generator, iterations=2, original_code=originals,
                            sandbox=sandbox, progress=False)
    return trajectories, generator


def by_id(trajectories: list[Trajectory]) -> dict[str, Trajectory]:
    return {t.problem_id: t for t in trajectories}


def test_a_failing_original_is_replaced_by_the_first_passing_code(run: Any,
                                                                   problems: dict[str, Problem]) -> None:
    trajectory = by_id(run[0])["mini/count-pairs"]
    start, fixed, broken = trajectory.steps
    assert not start.passed and start.reason == "original, fails (wrong_answer)"
    assert fixed.passed and fixed.accepted and fixed.reason == "first passing"
    assert not broken.accepted and broken.reason.startswith("fails") and broken.best_iteration == 1
    assert trajectory.best_code == reference(problems["mini/count-pairs"], "hash map").strip("\n")
    assert [s.values["pass@1"] for s in trajectory.steps] == [0.0, 1.0, 1.0]
    # the failure's feedback reached the prompt that fixed it
    assert "## Why it failed" in content(fixed.prompt) and start.feedback.strip() in content(fixed.prompt)


def test_a_slower_or_failing_candidate_never_replaces_a_passing_code(run: Any,
                                                                     problems: dict[str, Problem]) -> None:
    trajectory = by_id(run[0])["mini/missing-number"]
    start, slow, wrong = trajectory.steps
    assert start.passed and slow.passed and not wrong.passed
    assert not slow.accepted and slow.reason.startswith("slower by")
    assert not wrong.accepted and wrong.reason == "fails (wrong_answer)"
    assert [s.best_iteration for s in trajectory.steps] == [0, 0, 0]
    assert trajectory.best_code == reference(problems["mini/missing-number"], "sum")
    assert trajectory.best_metrics == start.metrics


def test_a_clearly_faster_code_is_accepted_and_beyond_t_rises(run: Any) -> None:
    trajectory = by_id(run[0])["mini/count-pairs/stdio"]
    start, fast, slow = trajectory.steps
    assert fast.accepted and fast.reason.startswith("faster by")
    # 5x faster on a steady machine; each is one run, so a margin for a slow spell on the fast one
    assert fast.metrics["time_s"] < start.metrics["time_s"] / 1.5
    assert not slow.accepted and slow.reason.startswith("slower by")
    assert trajectory.steps[-1].best_iteration == 1
    assert fast.values["beyond_t"] > start.values["beyond_t"]


def test_every_iteration_is_recorded_and_batched(run: Any) -> None:
    trajectories, generator = run
    assert [t.problem_id for t in trajectories] == list(IDS)
    assert generator.calls == [3, 3]  # originals given: no call for iteration 0; one call per iteration
    for trajectory in trajectories:
        assert [s.iteration for s in trajectory.steps] == [0, 1, 2]
        assert trajectory.steps[0].accepted and trajectory.steps[0].prompt is None
        assert all(s.text.startswith("<thinking>") and s.prompt is not None for s in trajectory.steps[1:])
        data = json.loads(json.dumps(trajectory.to_dict()))
        assert data["best_code"] == trajectory.best_code and len(data["steps"]) == 3
        assert set(data["steps"][1]) >= {"iteration", "code", "text", "metrics", "passed", "accepted",
                                         "reason", "prompt", "best_iteration", "values"}
    rows = iteration_metrics(trajectories)
    assert [r["pass@1"]["value"] for r in rows] == pytest.approx([2 / 3, 1.0, 1.0])
    assert all(r["beyond_t"]["ci95"][0] <= r["beyond_t"]["value"] <= r["beyond_t"]["ci95"][1] for r in rows)
    assert rows[2]["beyond_t"]["value"] > rows[0]["beyond_t"]["value"]


def test_ablations_leave_out_the_original_code_and_the_feedback(problems: dict[str, Problem],
                                                                sandbox: Sandbox) -> None:
    problem = problems["mini/count-pairs"]
    wrong = WRONG[problem.problem_id]
    prompts = {}
    for flags in ({}, {"feedback": False}, {"show_original": False}):
        generator = ReplayGenerator([answer(wrong)])
        optimize(problem, generator, iterations=1, original_code=wrong, sandbox=sandbox, progress=False,
                 **flags)
        prompts[tuple(flags)] = content(generator.prompts[0])
    assert wrong.strip() in prompts[()] and "## Why it failed" in prompts[()]
    assert wrong.strip() in prompts[("feedback",)] and "## Why it failed" not in prompts[("feedback",)]
    assert "Passed:" not in prompts[("feedback",)]  # no feedback: the measured performance goes too
    assert wrong.strip() not in prompts[("show_original",)] and "(empty)" in prompts[("show_original",)]
    assert "Passed: no" in prompts[("show_original",)]  # the metrics stay


def test_a_generator_failure_is_recorded_and_counted(problems: dict[str, Problem], sandbox: Sandbox) -> None:
    pairs, missing = problems["mini/count-pairs"], problems["mini/missing-number"]
    generator = ReplayGenerator({missing.problem_id: [answer(WRONG[missing.problem_id])]},
                                key=problem_key([pairs, missing]))
    trajectories = optimize([pairs, missing], generator, iterations=1, original_code=WRONG, sandbox=sandbox,
                            progress=False)
    step = trajectories[0].steps[1]  # count-pairs has no replay pool: no text
    assert step.code is None and step.metrics == {"passed": False, "status": "no_code"}
    assert not step.accepted and step.reason == "fails (no_code)"
    assert step.feedback.startswith("the generator gave no text: no replay pool")
    assert step.generator_error == "no replay pool for key 'mini/count-pairs'"
    assert trajectories[1].steps[1].generator_error is None
    rows = iteration_metrics(trajectories)
    assert [(row["prompts"], row["generation_failures"]) for row in rows] == [(0, 0), (2, 1)]


def test_a_generator_that_answers_nothing_stops_the_run(problems: dict[str, Problem],
                                                        sandbox: Sandbox) -> None:
    problem = problems["mini/count-pairs"]
    generator = ReplayGenerator({"another problem": ["x"]}, key=problem_key([problem]))
    with pytest.raises(GenerationFailed, match="no text for any of the 1 prompts of iteration 1: "
                                               "1 x no replay pool") as failed:
        optimize(problem, generator, iterations=3, original_code=WRONG[problem.problem_id], sandbox=sandbox,
                 progress=False)
    [trajectory] = failed.value.trajectories  # the iteration done before it
    assert [step.iteration for step in trajectory.steps] == [0]
    with pytest.raises(GenerationFailed, match="iteration 0") as failed:  # no original: before measuring
        optimize(problem, generator, iterations=3, sandbox=sandbox, progress=False)
    assert failed.value.trajectories[0].steps == []


def test_judge_uses_the_measured_noise_floor() -> None:
    def measured(time_s: float, spread: float = 0.05, memory: float = 100_000.0) -> dict[str, Any]:
        return {"passed": True, "status": "passed", "time_s": time_s, "peak_memory_kb": memory,
                "integral_kb_s": time_s * memory, "spread": {"time_s": spread, "peak_memory_kb": 0.0}}

    # floor = 2 * sqrt(0.05^2 + 0.05^2) = 14.1%
    assert judge("time", measured(1.0), measured(0.85)) == (True, "faster by 15%")
    assert judge("time", measured(1.0), measured(0.9)) == (False, "within noise (+10.0%, floor 14.1%)")
    # never below the meter's noise (10% time, 1% or 512 KiB memory) however small the measured spread
    assert judge("time", measured(1.0, 0.0), measured(0.96, 0.0))[0] is False
    assert judge("memory", measured(1.0), measured(1.0, memory=90_000.0)) == (True, "leaner by 10%")
    assert judge("memory", measured(1.0, memory=1000.0), measured(1.0, memory=900.0))[0] is False  # < 512 KiB
    failing = {"passed": False, "status": "wrong_answer"}
    assert judge("time", failing, {"passed": False, "status": "timeout"}) == (False, "fails (timeout)")
    assert judge("time", measured(1.0), {"passed": False, "status": "sandbox_error"})[0] is False


def test_optimize_cli_writes_trajectories_metrics_and_plot(tmp_path: Path, problems: dict[str, Problem],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    pairs, missing = problems["mini/count-pairs"], problems["mini/missing-number"]
    records = [(pairs, answer(WRONG[pairs.problem_id])), (missing, answer(reference(missing, "naive"))),
               (pairs, answer(reference(pairs, "hash map"))), (missing, answer(reference(missing, "sum")))]
    replay = tmp_path / "replay.jsonl"
    replay.write_text("".join(json.dumps({"problem_id": p.problem_id, "text": t}) + "\n" for p, t in records))
    out = tmp_path / "out"
    code = main(["--dataset", "mini", "--problems", f"{pairs.problem_id},{missing.problem_id}",
                 "--generator", "replay", "--replay", str(replay), "--iterations", "1", "--out", str(out),
                 "--workers", "2", "--repeats", "1"])
    assert code == 0, capsys.readouterr().err
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    steps = {json.loads(line)["problem_id"]: json.loads(line)["steps"] for line in lines}
    reasons = [s["reason"] for s in steps[pairs.problem_id]]
    assert reasons == ["generated, fails (wrong_answer)", "first passing"]
    assert steps[missing.problem_id][1]["reason"].startswith("faster by")
    assert "(empty)" in steps[pairs.problem_id][0]["prompt"][-1]["content"]  # the seed's initial generation
    summary = json.loads((out / "iterations.json").read_text())
    assert [row["pass@1"]["value"] for row in summary["iterations"]] == [0.5, 1.0]
    assert set(summary["iterations"][1]) >= {"beyond_t", "beyond_m", "beyond_i"}
    assert (out / "iterations.png").read_bytes()[:4] == b"\x89PNG"
    assert "| 1 | 2 |" in capsys.readouterr().out


def test_optimize_cli_starts_from_given_originals(tmp_path: Path, problems: dict[str, Problem]) -> None:
    pairs = problems["mini/count-pairs"]
    originals = tmp_path / "originals.jsonl"
    records = [{"problem_id": pairs.problem_id, "code": reference(pairs, "naive")},
               {"problem_id": "mini/not-chosen", "code": "x"}]  # not selected: ignored
    originals.write_text("".join(json.dumps(r) + "\n" for r in records))
    replay = tmp_path / "replay.jsonl"
    fast = answer(reference(pairs, "hash map"))
    replay.write_text(json.dumps({"problem_id": pairs.problem_id, "text": fast}))
    out = tmp_path / "out"
    assert main(["--problems", pairs.problem_id, "--generator", "replay", "--replay", str(replay),
                 "--originals", str(originals), "--iterations", "1", "--out", str(out),
                 "--repeats", "1"]) == 0
    steps = json.loads((out / "trajectories.jsonl").read_text())["steps"]
    assert steps[0]["code"].strip() == reference(pairs, "naive").strip()
    assert steps[0]["reason"] == "original, passes" and steps[1]["reason"].startswith("faster by")


@pytest.mark.parametrize(("argv", "message"), [
    (["--generator", "replay"], "needs --replay"),
    (["--generator", "openai", "--model", "m"], "needs --base-url"),
    (["--generator", "local"], "needs --model"),
    (["--generator", "replay", "--replay", "x.jsonl", "--problems", "nope"], "no such problems"),
    (["--generator", "replay", "--replay", "missing.jsonl"], "missing.jsonl"),
    (["--generator", "nonsense"], "invalid choice"),
])
def test_optimize_cli_bad_usage_exits_2(argv: list[str], message: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv, "--out", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_two_iterations_through_the_local_transformers_generator(tmp_path: Path, sandbox: Sandbox) -> None:
    pytest.importorskip("transformers")
    from tiny_lm import PROBLEMS, build, longest_answer_tokens

    from rewardkit.trainers.generators.local import TransformersGenerator

    lm = build(tmp_path / "tiny", steps=0)  # unfitted (fitting is slow on busy CPUs): junk is fine here
    toy = PROBLEMS[0]  # "Read n and print 2*n.", its baseline slow but right
    problem = Problem("toy/double", toy["prompt"], TestSuite.from_dict(toy["tests"]))
    generator = TransformersGenerator(str(lm.path))
    sampling = Sampling(max_new_tokens=longest_answer_tokens(lm.tokenizer), temperature=1.0, seed=0)
    [trajectory] = optimize(problem, generator, iterations=2, original_code=toy["baseline_code"],
                            sandbox=sandbox, sampling=sampling, progress=False)
    assert [s.iteration for s in trajectory.steps] == [0, 1, 2]
    assert generator.last_errors == [None]
    assert all(isinstance(s.text, str) and s.reason for s in trajectory.steps)
    assert all(s.passed for s in trajectory.steps if s.accepted)  # only passing codes become the best
    assert trajectory.best.passed and trajectory.best_code in {s.code for s in trajectory.steps}


def test_later_iterations_rank_the_best_code_among_references_measured_with_it(
        problems: dict[str, Problem], sandbox: Sandbox) -> None:
    """References measured long ago (planted here a thousand times faster than they run) rank only
    the first iteration; from then on the references run in the same rounds as the best code."""
    missing = copy.deepcopy(problems["mini/missing-number"])
    measure_references([missing], sandbox, progress=False)
    for ref in missing.references:
        assert ref.metrics is not None
        ref.metrics = {**ref.metrics, "time_s": ref.metrics["time_s"] / 1000}
    pool = {missing.problem_id: [answer(reference(missing, "naive"))]}
    [trajectory] = optimize([missing], ReplayGenerator(pool, key=problem_key([missing])), iterations=1,
                            original_code={missing.problem_id: reference(missing, "sum")},
                            sandbox=sandbox, progress=False)
    start, step = trajectory.steps
    assert not step.accepted and step.best_iteration == 0  # the best code is the original throughout
    assert start.values["beyond_t"] == 0.0  # slower than every planted figure
    # in its own rounds it ties with itself, a reference, and beats the naive one
    assert step.values["beyond_t"] >= 0.5, step.values
