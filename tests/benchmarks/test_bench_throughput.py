"""benchmarks/perf/bench_throughput.py on a few real APPS samples: it runs and prints agreement."""

from __future__ import annotations

import re
import subprocess  # nosec B404 - runs our own benchmark script
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "perf" / "bench_throughput.py"
DATA = ROOT.parent / "shared" / "data" / "apps_train_coderl5.jsonl"
PRIME_CODE = ROOT / ".cache" / "verl" / "verl" / "utils" / "reward_score" / "prime_code"
LIMIT = 3
REWARDKIT = ("rewardkit compute_score cisq_grpo", "rewardkit compute_score_async cisq_grpo",
             "rewardkit compute_score pass_rate", "rewardkit compute_score_async pass_rate",
             "rewardkit Sandbox.run_many")


@pytest.fixture(scope="module")
def printed() -> str:
    if not DATA.exists():
        pytest.skip(f"the real APPS file is absent ({DATA}): only a development checkout has ../shared")
    done = subprocess.run([sys.executable, str(SCRIPT), "--limit", str(LIMIT), "--rounds", "1"],
                          capture_output=True, text=True, timeout=300, check=False)  # nosec B603
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def agreement(printed: str, ours: str, theirs: str) -> tuple[int, int, int]:
    """(all-passed verdicts identical, pass rates identical, samples) printed for ours vs theirs."""
    found = re.search(rf"{re.escape(ours)} vs {re.escape(theirs)}: all-passed verdict identical on "
                      r"(\d+)/(\d+), pass rate identical on (\d+)/\d+", printed)
    assert found, printed
    return int(found[1]), int(found[3]), int(found[2])


def test_rewardkit_paths_agree_and_are_timed(printed: str) -> None:
    assert f"workload: {LIMIT} samples" in printed
    assert "drift reference (fixed loop" in printed
    for name in REWARDKIT:
        assert re.search(rf"{re.escape(name)}\s+[\d.]+ samples/s", printed), printed
    if "verl prime_code: skipped" in printed:
        for name in REWARDKIT[:-1]:
            assert agreement(printed, name, REWARDKIT[-1]) == (LIMIT, LIMIT, LIMIT)


def test_verdicts_agree_with_verl_prime_code(printed: str) -> None:
    if not PRIME_CODE.is_dir():
        pytest.skip("the verl wheel is not installed in .cache/verl (make .cache/verl/.stamp)")
    for name in REWARDKIT:
        assert agreement(printed, name, "verl prime_code per sample") == (LIMIT, LIMIT, LIMIT)
    assert re.search(r"rewardkit compute_score pass_rate\s+[\d.]+x \(rounds", printed), printed
