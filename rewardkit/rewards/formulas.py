"""The reward formulas (format, correctness, efficiency, quality), as plain functions of plain values.

Each is small enough to check by hand; the components in
:mod:`rewardkit.rewards.components` feed them from sandbox runs and analyses.
``quality_score``, ``1 / (1 + W)``, is the one the analyzers score reports with
(:func:`rewardkit.analyzers.report.quality_score`).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence

from ..analyzers.report import quality_score as quality_score
from .extract import fenced_blocks, has_unterminated_fence, same_language

_TAG = r"</?(?:thinking|solution)>"
_AFTERBURNER = re.compile(
    rf"\A\s*<thinking>(?:(?!{_TAG}).)*</thinking>\s*<solution>(?:(?!{_TAG}).)*</solution>\s*\Z",
    re.DOTALL,
)

# Upper clip limits in explicit units (seconds, KiB, KiB·s).
UPPER = {"time": 90.0, "memory": 1_048_576.0, "integral": 94_371_840.0, "instructions": math.inf}


def afterburner_format(text: str) -> float:
    """+1 for exactly one ``<thinking>`` block followed by one ``<solution>`` block, else -1.

    Only whitespace may surround them; no tag may repeat or nest.

    >>> afterburner_format("<thinking>plan</thinking>\\n<solution>print(1)</solution>")
    1.0
    >>> afterburner_format("<thinking>a</thinking><solution>x</solution><solution>y</solution>")
    -1.0
    """
    return 1.0 if _AFTERBURNER.match(text) else -1.0


def code_block_format(text: str, language: str = "python", penalty: float = 0.0) -> float:
    """CISQ paper: 1 for exactly one complete fenced block of the language, 0 for none,
    ``penalty`` for several blocks or an unterminated one.

    >>> code_block_format("```python\\nprint(1)\\n```")
    1.0
    >>> code_block_format("no code here")
    0.0
    >>> code_block_format("```python\\na\\n```\\n```python\\nb\\n```", penalty=-0.5)
    -0.5
    """
    if has_unterminated_fence(text):
        return penalty
    blocks = fenced_blocks(text)
    if len(blocks) > 1:
        return penalty
    if len(blocks) == 1 and same_language(blocks[0][0], language):
        return 1.0
    return 0.0


def transition(baseline_passed: bool, candidate_passed: bool) -> float:
    """Afterburner correctness: +1 fail→pass, +0.5 pass→pass, -0.5 fail→fail, -1 pass→fail.

    >>> transition(False, True), transition(True, True), transition(False, False), transition(True, False)
    (1.0, 0.5, -0.5, -1.0)
    """
    if candidate_passed:
        return 0.5 if baseline_passed else 1.0
    return -1.0 if baseline_passed else -0.5


RLEF_INVALID = -0.2  # RLEF slides: r(s_t, a_t) of an invalid response, at any turn


def rlef(passed: bool, valid: bool) -> float:
    """RLEF reward of a final answer: +1 all tests pass, -1 any fails, and -0.2 more when the
    answer is invalid (no code, no parse, no compile), so invalid never beats wrong.

    A single answer is a one-turn RLEF episode: the -0.2 for invalid code applies at
    any turn, the last included, on top of its -1 (``rewardkit.trainers.rlef``).

    >>> rlef(True, True), rlef(False, True), rlef(False, False)
    (1.0, -1.0, -1.2)
    """
    if not valid:
        return RLEF_INVALID - 1.0
    return 1.0 if passed else -1.0


def efficiency_gain(e_in: float, e_out: float, objective: str = "time", upper: float | None = None,
                    eps: float = 1e-9, noise_floor: float = 0.0, resolution: float = 0.0) -> float:
    """Afterburner efficiency: tanh of the clipped relative improvement.

    ``E_clip = clip(E, 0, upper)``, ``gain = (E_in_clip - E_out_clip) / (E_in_clip + eps)``,
    ``tanh(gain)``; a ``|gain|`` below ``noise_floor`` (relative) or a
    ``|E_in_clip - E_out_clip|`` below ``resolution`` (in the objective's unit) counts as 0.

    >>> round(efficiency_gain(2.0, 1.0), 4)   # twice as fast: tanh(0.5)
    0.4621
    >>> efficiency_gain(1.0, 0.98, noise_floor=0.03)   # 2% is within the noise
    0.0
    >>> efficiency_gain(0.002, 0.001, resolution=0.003)   # 2x, but by less than the timer resolves
    0.0
    >>> round(efficiency_gain(200.0, 0.0), 4)   # the baseline is clipped to 90 s
    0.7616
    """
    limit = UPPER[objective] if upper is None else upper
    e_in_clip = min(max(e_in, 0.0), limit)
    e_out_clip = min(max(e_out, 0.0), limit)
    gain = (e_in_clip - e_out_clip) / (e_in_clip + eps)
    if abs(gain) < noise_floor or abs(e_in_clip - e_out_clip) < resolution:
        return 0.0
    return math.tanh(gain)


def percentile_rank(value: float, references: Sequence[float]) -> float:
    """Venus Beyond: ``1 - bisect_left(sorted(refs), value) / len(refs)``; ties count as beaten.

    >>> percentile_rank(5.0, [1.0, 5.0, 10.0, 20.0])
    0.75
    >>> percentile_rank(0.5, [1.0, 2.0]), percentile_rank(30.0, [1.0, 2.0])
    (1.0, 0.0)
    """
    if not references:
        raise ValueError("percentile_rank needs at least one reference value")
    ordered = sorted(references)
    return 1.0 - bisect_left(ordered, value) / len(ordered)


def quality_mean(by_characteristic: Mapping[str, float]) -> float:
    """CISQ paper's "average score": the mean of the per-characteristic ``1 / (1 + W_c)``.

    >>> quality_mean({"maintainability": 0.4, "security": 1.0, "performance": 1.0, "reliability": 1.0})
    0.85
    """
    if not by_characteristic:
        raise ValueError("quality_mean needs at least one characteristic's score")
    return sum(by_characteristic.values()) / len(by_characteristic)
