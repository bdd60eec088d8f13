"""The quality component's aggregate: the CISQ paper's average of the four characteristics, or 1/(1+W)."""

from __future__ import annotations

from statistics import mean
from typing import Any

import pytest

from rewardkit import rewards
from rewardkit.analyzers import analyze_many
from rewardkit.benchmarks.embedded import SPECS
from rewardkit.rewards import ConfigError, Engine
from rewardkit.rewards.components import CHARACTERISTICS, quality
from rewardkit.sandbox import Sandbox
from rewardkit.scoring import ScoreError, make_reward

# The CISQ paper's Figure 5, "With Quality Reward" (its layout restored)
FIGURE_5_WITH_QUALITY = """\
def solution(data: list[int]) -> int:
    if not data:
        return 0
    n = len(data)
    a, b = 0, 1
    fib_indices = set()
    while a < n:
        fib_indices.add(a)
        a, b = b, a + b
    current_sum = sum(data[i] for i in fib_indices)
    return current_sum
"""
# the same as vulture reports it on its own: the harness's entry point counts as unused
VULTURE_AS_IS = {"thresholds": {"vulture_report_interface": True}}
TESTS = {"mode": "call", "entry_point": "solution",
         "cases": [{"args": [[1, 2, 3, 4, 5, 6]], "expected": 1 + 2 + 3 + 4 + 6}]}


def answer(code: str) -> str:
    return f"```python\n{code}```"


def quality_of(code: str, profile: Any = None, **options: Any) -> float | None:
    engine = Engine(analyze=lambda codes: analyze_many(codes, profile))
    [value] = rewards.quality(engine=engine, **options)(completions=[answer(code)])
    return value


def test_figure_5_scores_the_mean_of_its_characteristics() -> None:
    # maintainability has two infos (no module, no function docstring): 1/(1+1.0); the rest clean
    assert quality_of(FIGURE_5_WITH_QUALITY, aggregate="mean") == pytest.approx((0.5 + 1 + 1 + 1) / 4)
    assert quality_of(FIGURE_5_WITH_QUALITY, aggregate="total") == pytest.approx(0.5)
    assert quality_of(FIGURE_5_WITH_QUALITY) == pytest.approx(0.5)  # the component's default
    # with vulture's unused-function on the entry point, as before the profile review: 0.400 total
    assert quality_of(FIGURE_5_WITH_QUALITY, VULTURE_AS_IS, aggregate="total") == pytest.approx(0.4)
    assert quality_of(FIGURE_5_WITH_QUALITY, VULTURE_AS_IS, aggregate="mean") == pytest.approx(0.85)


def test_embedded_references_score_in_the_papers_range() -> None:
    codes = [code for spec in SPECS for code in spec.references.values()]
    reports = analyze_many(codes)
    assert not any(report.errors for report in reports)
    averages = [mean(report.by_characteristic[c] for c in CHARACTERISTICS) for report in reports]
    totals = [report.score for report in reports]
    # the paper's validation quality is 0.77-0.89 on this scale; 1/(1+W) sits far below it
    assert 0.77 <= mean(averages) <= 0.89 and min(averages) > 0.7
    assert mean(totals) < 0.45


def test_cisq_grpo_uses_the_mean_by_default(sandbox: Sandbox) -> None:
    engine = Engine(sandbox=sandbox)
    [paper] = rewards.cisq_grpo(engine=engine).score([{"completion": answer(FIGURE_5_WITH_QUALITY),
                                                       "tests": TESTS}])
    [total] = rewards.cisq_grpo(engine=engine, quality_aggregate="total").score(
        [{"completion": answer(FIGURE_5_WITH_QUALITY), "tests": TESTS}])
    assert paper.components == {"code_block_format": 1.0, "pass_rate": 1.0, "quality": pytest.approx(0.875)}
    assert paper.value == pytest.approx(0.2 + 0.3 + 0.5 * 0.875)
    assert total.components["quality"] == pytest.approx(0.5)
    # rewardkit score's preset builder passes the choice on
    [scored] = make_reward("cisq_grpo", engine=engine, quality_aggregate="total").score(
        [{"completion": answer(FIGURE_5_WITH_QUALITY), "tests": TESTS}])
    assert scored.components == total.components


def test_bad_aggregates_fail_fast() -> None:
    with pytest.raises(ConfigError, match="unknown quality aggregate 'median'"):
        quality(aggregate="median")
    with pytest.raises(ConfigError, match="not both"):
        quality("security", aggregate="mean")
    with pytest.raises(ConfigError, match="unknown quality aggregate"):
        rewards.cisq_grpo(quality_aggregate="average")
    with pytest.raises(ScoreError, match="unknown quality aggregate"):
        make_reward("cisq_grpo", quality_aggregate="average")
    with pytest.raises(ScoreError, match="'afterburner' has no quality aggregate"):
        make_reward("afterburner", quality_aggregate="mean")


def test_quality_efficiency_keeps_the_total_and_takes_the_mean(sandbox: Sandbox) -> None:
    engine = Engine(sandbox=sandbox)
    record = {"completion": answer(FIGURE_5_WITH_QUALITY), "tests": TESTS,
              "baseline_metrics": {"passed": True, "time_s": 1.0, "peak_memory_kb": 1e6,
                                   "integral_kb_s": 1e6}}
    [total] = rewards.quality_efficiency(engine=engine).score([record])
    [paper] = rewards.quality_efficiency(engine=engine, quality_aggregate="mean").score([record])
    assert total.components["quality"] == pytest.approx(0.5)
    assert paper.components["quality"] == pytest.approx(0.875)


def test_score_command_takes_the_aggregate(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from rewardkit.cli import main

    solution, tests = tmp_path / "solution.md", tmp_path / "tests.json"
    solution.write_text(answer(FIGURE_5_WITH_QUALITY))
    tests.write_text(json.dumps(TESTS))
    quality_by_choice = {}
    for choice in ("mean", "total"):
        assert main(["score", str(solution), "--tests", str(tests), "--quality-aggregate", choice,
                     "--format", "json"]) == 0
        quality_by_choice[choice] = json.loads(capsys.readouterr().out)["components"]["quality"]
    assert quality_by_choice == {"mean": pytest.approx(0.875), "total": pytest.approx(0.5)}
    assert main(["score", str(solution), "--tests", str(tests), "--preset", "afterburner",
                 "--quality-aggregate", "mean"]) == 2
    assert "--quality-aggregate applies to cisq_grpo, quality_efficiency" in capsys.readouterr().err
