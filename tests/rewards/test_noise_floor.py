"""The efficiency noise floor: bounded below by the meter's between-process noise, above by a cap.

Real sandbox runs, measured with ``repeats=3`` as the efficiency presets measure.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest
from steady import steady_scores, wrap

from rewardkit import rewards
from rewardkit.rewards import Engine, Metrics
from rewardkit.rewards.components import (
    DEFAULT_NOISE_FLOOR,
    MEMORY_NOISE_KB,
    NOISE_FLOOR_CAP,
    noise_floor_for,
)
from rewardkit.sandbox import Sandbox

# ~80 ms of CPU time: a Python loop over 1.5 million numbers in all
LOOP = "n = int(input())\ntotal = 0\nfor i in range(n + 1):\n    total += i\nprint(total)\n"
LOOP_TESTS = {"mode": "stdio", "cases": [{"input": "500000\n", "output": f"{500_000 * 500_001 // 2}\n"}] * 3}
# ~40 MB held for ~50 ms
ALLOC = "n = int(input())\nxs = list(range(n + 1))\nprint(sum(xs))\n"
ALLOC_TESTS = {"mode": "stdio",
               "cases": [{"input": "1000000\n", "output": f"{1_000_000 * 1_000_001 // 2}\n"}] * 2}
# ~2 ms: three tiny cases
TINY = "n = int(input())\nprint(n * (n + 1) // 2)\n"
TINY_TESTS = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{n * (n + 1) // 2}\n"}
                                         for n in (3, 100, 1000)]}


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=2, repeats=3) as sb:
        yield sb


@pytest.fixture(scope="module")
def engine(sandbox: Sandbox) -> Engine:
    return Engine(sandbox=sandbox)


def measured(time_s: float, spread: float, memory_kb: float = 50_000.0) -> Metrics:
    return Metrics(True, time_s, memory_kb, time_s * memory_kb,
                   {"time_s": spread, "peak_memory_kb": spread, "integral_kb_s": spread})


def scores(objective: str, engine: Engine, code: str, tests: dict[str, Any],
           copies: list[str]) -> list[float]:
    """The efficiency reward of each copy of ``code`` against ``code`` itself as the baseline."""
    return rewards.efficiency(objective, engine=engine)(
        completions=copies, tests=[tests] * len(copies), baseline_code=[code] * len(copies))


def test_identical_work_scores_exactly_zero(engine: Engine, sandbox: Sandbox) -> None:
    """Every copy scores zero, or, where the host spoiled a measurement, zero in at least four
    of five measurements more, each against a fresh measurement of the baseline, taken while
    the machine held its speed.

    A VM whose host takes its CPUs for a second at a time makes the same program run slower
    for several runs in a row (seen here: a 35 ms loop measured 55-63 ms in 2 to 7 runs of 40
    to 80, in the program's own user time; in CI a copy measured 1.9x its baseline and two of
    five copies more 1.3-1.5x), which no noise floor covers.  A measurement taken in such a
    spell shows as a baseline or a copy that disagrees with itself measured again right after,
    and is not counted.  A floor or a measurement that is wrong for identical work scores it
    non-zero on a steady machine too, and fails.
    """
    for objective, code, tests in (("time", LOOP, LOOP_TESTS), ("memory", ALLOC, ALLOC_TESTS)):
        # each copy differs only in a comment, so each is run (three times) apart from the baseline
        copies = [wrap(f"{code}# copy {k}\n") for k in range(6)]
        for k, value in enumerate(scores(objective, engine, code, tests, copies)):
            if value != 0.0:
                again = steady_scores(objective, sandbox, code, tests, f"copy {k}")
                assert again.count(0.0) >= 4, (objective, k, value, again)


def test_the_floor_never_falls_below_the_meters_noise() -> None:
    # three back-to-back repeats can agree closely; processes still differ by a few percent
    assert noise_floor_for("time", measured(1.0, 0.001), measured(1.0, 0.002)) == DEFAULT_NOISE_FLOOR["time"]
    assert noise_floor_for("time", measured(1.0, 0.0), measured(1.0, 0.0)) == DEFAULT_NOISE_FLOOR["time"]
    # memory noise is a few pages whatever the program holds: large for a small footprint
    small = measured(0.1, 0.0, memory_kb=4000.0)
    assert noise_floor_for("memory", small, small) == pytest.approx(MEMORY_NOISE_KB / 4000.0)
    big = measured(0.1, 0.0, memory_kb=100_000.0)
    assert noise_floor_for("memory", big, big) == DEFAULT_NOISE_FLOOR["memory"]
    # an exact count has no noise
    assert noise_floor_for("instructions", measured(1.0, 0.0), measured(1.0, 0.0)) == 0.0


def test_a_huge_measured_spread_is_capped() -> None:
    # what three repeats of a 2 ms program can report: 20% each, 0.57 uncapped
    noisy = measured(0.002, 0.2)
    assert noise_floor_for("time", noisy, noisy) == NOISE_FLOOR_CAP
    assert noise_floor_for("integral", noisy, measured(0.002, 0.9)) == NOISE_FLOOR_CAP
    # memory's noise is a few pages whatever the program holds: on 800 KiB it is not capped
    tiny = measured(0.1, 0.0, memory_kb=800.0)
    assert noise_floor_for("memory", tiny, tiny) == pytest.approx(512 / 800)
    assert noise_floor_for("memory", measured(0.1, 0.9, memory_kb=1e6), measured(0.1, 0.9)) == NOISE_FLOOR_CAP
    # between the bounds the measured spread decides: 2 * sqrt(0.05^2 + 0.05^2)
    between = noise_floor_for("time", measured(1.0, 0.05), measured(1.0, 0.05))
    assert between == pytest.approx(0.1414, abs=1e-4)


def test_a_2x_improvement_on_a_tiny_program_counts(engine: Engine) -> None:
    reward = rewards.efficiency("time", engine=engine)
    candidate = wrap(TINY)
    [first] = reward.score([{"completion": candidate, "tests": TINY_TESTS,
                             "baseline_metrics": {"passed": True, "time_s": 1.0}}])
    e_out = first.info["efficiency_time"]["e_out"]
    assert 0 < e_out < 0.05
    # a baseline twice as slow whose three repeats spread 30% (a few ms are that noisy)
    baseline = {"passed": True, "time_s": 2 * e_out, "peak_memory_kb": 800.0,
                "integral_kb_s": 2 * e_out * 800.0, "spread": {"time_s": 0.3}}
    [result] = reward.score([{"completion": candidate, "tests": TINY_TESTS, "baseline_metrics": baseline}])
    assert result.info["efficiency_time"]["noise_floor"] == NOISE_FLOOR_CAP
    assert result.components["efficiency_time"] == pytest.approx(math.tanh(0.5), rel=1e-6)
