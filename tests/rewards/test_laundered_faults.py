"""A wrong completion that breaks its own sandbox resources keeps its negative reward."""

from __future__ import annotations

import pytest
from identical import wrap

from rewardkit import rewards
from rewardkit.rewards import Engine

TESTS = {"mode": "stdio", "cases": [{"input": "1\n", "output": "2\n"}] * 2}
# wrong, after filling its work dir (512 MB) under names the build's files have, its input
# file among them, so that nothing is left for the next case's input
FILLS_ITS_SCRATCH = """
import os
try:
    os.rename('.stdin', 'Stdin.class')
except OSError:
    pass
chunk = b'x' * (1 << 20)
try:
    for n in range(64):
        with open(f'Fill{n}.class', 'wb') as handle:
            for _ in range(64):
                handle.write(chunk)
except OSError:
    pass
print(0)
"""


def test_a_wrong_program_that_fills_its_scratch_scores_as_wrong(engine: Engine) -> None:
    """Format +1, pass -> fail -1, no efficiency: 0.2 - 0.5 = -0.30, not None."""
    baseline = {"passed": True, "time_s": 0.01, "peak_memory_kb": 10_000, "integral_kb_s": 100}
    [result] = rewards.afterburner("time", engine=engine).score(
        [{"completion": wrap(FILLS_ITS_SCRATCH), "tests": TESTS, "baseline_metrics": baseline}])
    assert result.value == pytest.approx(-0.30), (result.value, result.info)
    assert result.components["transition"] == -1.0
