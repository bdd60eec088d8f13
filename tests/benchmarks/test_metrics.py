"""Every benchmark metric of SPEC §4.7 against hand-computed values."""

from __future__ import annotations

import doctest
import math
from collections.abc import Callable
from fractions import Fraction

import pytest

from rewardkit.benchmarks import metrics
from rewardkit.rewards import formulas

REFS = [10.0, 20.0, 30.0, 40.0]
DPS_REFS = [57.0, 100.0, 20.0, 98.0, 60.0, 58.0]
CLUSTERS = [[100.0, 98.0], [60.0, 58.0, 57.0], [20.0]]  # cluster_references(DPS_REFS), see below


def test_docstring_examples_hold() -> None:
    failures, _ = doctest.testmod(metrics)
    assert failures == 0


# --- Pass@k -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 2, 0.7),  # 1 - C(3,2)/C(5,2) = 1 - 3/10
        (10, 3, 1, 0.3),  # k = 1: c/n = 3/10
        (10, 0, 5, 0.0),  # no pass: 1 - C(10,5)/C(10,5) = 0
        (10, 10, 10, 1.0),  # all pass: n - c = 0 < k
        (4, 3, 2, 1.0),  # n - c = 1 < k = 2: every pair holds a pass
        (1, 1, 1, 1.0),  # n - c = 0 < 1
        (200, 1, 100, 0.5),  # 1 - C(199,100)/C(200,100) = 1 - 100/200
    ],
)
def test_pass_at_k_hand_values(n: int, c: int, k: int, expected: float) -> None:
    assert metrics.pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_k_matches_exact_binomials() -> None:
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
                assert metrics.pass_at_k(n, c, k) == pytest.approx(float(exact), abs=1e-12)


def test_pass_at_k_is_stable_for_large_n() -> None:
    # C(2000, 1000) overflows a float; the product form does not.
    # n=2000, c=1, k=1000: 1 - C(1999,1000)/C(2000,1000) = 1 - (2000-1000)/2000 = 0.5
    assert metrics.pass_at_k(2000, 1, 1000) == pytest.approx(0.5, abs=1e-12)
    # n=2000, c=2, k=1000: 1 - (1000·999)/(2000·1999) = 1 - 999/3998
    assert metrics.pass_at_k(2000, 2, 1000) == pytest.approx(1 - 999 / 3998, abs=1e-12)


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [(3, 1, 4, "k <= n"), (3, 1, 0, "k >= 1"), (3, 4, 1, "0 <= c <= n"), (3, -1, 1, "0 <= c <= n")],
)
def test_pass_at_k_rejects_bad_arguments(n: int, c: int, k: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        metrics.pass_at_k(n, c, k)


# --- Venus percentile rank, Beyond and B/M/W/F --------------------------------------------------------


def test_percentile_rank_is_the_reward_formula() -> None:
    assert metrics.percentile_rank is formulas.percentile_rank
    # bisect_left([10,20,30,40], 20) = 1 (the tie is beaten): 1 - 1/4
    assert metrics.percentile_rank(20.0, REFS) == 0.75


def test_beyond_mixed_samples() -> None:
    samples = [(True, 10.0), (True, 25.0), (True, 45.0), (False, None)]
    # PR: 10 -> 1 - 0/4 = 1; 25 -> 1 - 2/4 = 0.5; 45 -> 1 - 4/4 = 0; failure 0
    # (1 + 0.5 + 0 + 0) / 4 = 0.375
    assert metrics.beyond(samples, REFS) == 0.375


def test_beyond_ties_count_as_beaten() -> None:
    # PR(20) = 1 - 1/4 = 0.75, PR(40) = 1 - 3/4 = 0.25: (0.75 + 0.25) / 2 = 0.5
    assert metrics.beyond([(True, 20.0), (True, 40.0)], REFS) == 0.5


def test_beyond_all_pass_and_none_pass() -> None:
    # all pass and beat every reference: (1 + 1) / 2 = 1
    assert metrics.beyond([(True, 1.0), (True, 5.0)], REFS) == 1.0
    # none pass: 0 / 3
    assert metrics.beyond([(False, None), (False, 1.0), (False, None)], REFS) == 0.0


def test_beyond_failures_ignore_their_value() -> None:
    # the failed sample's value 1.0 would have PR 1; it counts 0: (0.5 + 0) / 2
    assert metrics.beyond([(True, 25.0), (False, 1.0)], REFS) == 0.25


@pytest.mark.parametrize("function", [metrics.beyond, metrics.bmwf])
def test_beyond_and_bmwf_guards(function: Callable[..., object]) -> None:
    with pytest.raises(ValueError, match="no passing reference"):
        function([(True, 1.0)], [])
    with pytest.raises(ValueError, match="no samples"):
        function([], REFS)
    with pytest.raises(ValueError, match="no measured value"):
        function([(True, None)], REFS)


@pytest.mark.parametrize(
    ("passed", "rank", "expected"),
    [
        (True, 1.0, "B"),  # PR 1: at least as good as the best reference
        (True, 0.5, "M"),
        (True, 0.25, "M"),
        (True, 0.0, "W"),  # PR 0: worse than every reference
        (False, None, "F"),
        (False, 1.0, "F"),  # a failure is F whatever its rank
    ],
)
def test_bmwf_indicators(passed: bool, rank: float | None, expected: str) -> None:
    assert metrics.bmwf_indicators(passed, rank) == {name: float(name == expected) for name in "BMWF"}


def test_bmwf_indicators_need_a_rank_when_passing() -> None:
    with pytest.raises(ValueError, match="needs its percentile rank"):
        metrics.bmwf_indicators(True, None)


def test_bmwf_mixed_samples() -> None:
    samples = [(True, 10.0), (True, 5.0), (True, 25.0), (True, 40.0), (True, 41.0), (False, None)]
    # PR: 10 -> 1 (ties the best: B); 5 -> 1 (B); 25 -> 0.5 (M); 40 -> 0.25 (ties the worst: M);
    # 41 -> 0 (W); failure (F).  B = 2/6, M = 2/6, W = 1/6, F = 1/6
    assert metrics.bmwf(samples, REFS) == pytest.approx({"B": 2 / 6, "M": 2 / 6, "W": 1 / 6, "F": 1 / 6})


def test_bmwf_all_pass_and_none_pass() -> None:
    # all pass at PR 1: B = 2/2
    assert metrics.bmwf([(True, 1.0), (True, 10.0)], REFS) == {"B": 1.0, "M": 0.0, "W": 0.0, "F": 0.0}
    # none pass: F = 2/2
    assert metrics.bmwf([(False, None), (False, None)], REFS) == {"B": 0.0, "M": 0.0, "W": 0.0, "F": 1.0}


def test_bmwf_single_reference() -> None:
    # one reference 20: PR(20) = 1 - 0/1 = 1 (B), PR(21) = 1 - 1/1 = 0 (W); no M is possible
    assert metrics.bmwf([(True, 20.0), (True, 21.0)], [20.0]) == {"B": 0.5, "M": 0.0, "W": 0.5, "F": 0.0}


# --- Mercury Beyond@K ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rt", "min_rt", "max_rt", "expected"),
    [
        (20.0, 10.0, 50.0, 0.75),  # (50 - 20) / (50 - 10) = 30/40
        (10.0, 10.0, 50.0, 1.0),  # ties the fastest reference: 40/40
        (5.0, 10.0, 50.0, 1.0),  # clamped up to 10: 40/40
        (50.0, 10.0, 50.0, 0.0),  # ties the slowest: 0/40
        (60.0, 10.0, 50.0, 0.0),  # clamped down to 50: 0/40
        (10.0, 10.0, 10.0, 1.0),  # min = max, ties: 1
        (9.0, 10.0, 10.0, 1.0),  # min = max, faster: 1
        (11.0, 10.0, 10.0, 0.0),  # min = max, slower: 0
    ],
)
def test_runtime_score(rt: float, min_rt: float, max_rt: float, expected: float) -> None:
    assert metrics.runtime_score(rt, min_rt, max_rt) == expected


def test_beyond_at_k_mixed_samples() -> None:
    runtimes = [20.0, 5.0, 60.0, None]
    passed = [True, True, True, False]
    # min 10, max 50: 20 -> (50-20)/40 = 0.75; 5 -> clamp 10 -> 40/40 = 1; 60 -> clamp 50 -> 0; fail 0
    # best of the first K (the Mercury authors' max(beyonds[:K])): K = 4 and K = 2: 1.0
    assert metrics.beyond_at_k(runtimes, passed, 10.0, 50.0, 4) == 1.0
    assert metrics.beyond_at_k(runtimes, passed, 10.0, 50.0, 2) == 1.0
    # K = 1: 0.75
    assert metrics.beyond_at_k(runtimes, passed, 10.0, 50.0, 1) == 0.75
    # never lower for a larger K, as in every row of Mercury's Table 4
    assert metrics.beyond_at_k([60.0, 30.0, 10.0], [True] * 3, 10.0, 50.0, 1) == 0.0
    assert metrics.beyond_at_k([60.0, 30.0, 10.0], [True] * 3, 10.0, 50.0, 2) == 0.5
    assert metrics.beyond_at_k([60.0, 30.0, 10.0], [True] * 3, 10.0, 50.0, 3) == 1.0


def test_beyond_at_k_all_and_none_pass() -> None:
    # 10 -> 1, 30 -> (50-30)/40 = 0.5: the best is 1
    assert metrics.beyond_at_k([10.0, 30.0], [True, True], 10.0, 50.0, 2) == 1.0
    assert metrics.beyond_at_k([30.0, 40.0], [True, True], 10.0, 50.0, 2) == 0.5
    # failures score 0 whatever their runtime
    assert metrics.beyond_at_k([10.0, None], [False, False], 10.0, 50.0, 2) == 0.0


def test_beyond_at_k_equal_min_and_max() -> None:
    # min = max = 10: at or under 10 scores 1 (ties the best reference), over scores 0
    assert metrics.beyond_at_k([10.0, 9.0, 11.0], [True, True, True], 10.0, 10.0, 3) == 1.0
    assert metrics.beyond_at_k([11.0, 12.0], [True, True], 10.0, 10.0, 2) == 0.0


@pytest.mark.parametrize(
    ("runtimes", "passed", "min_rt", "max_rt", "k", "message"),
    [
        ([1.0], [True], 1.0, 2.0, 2, "k <= number of samples"),
        ([1.0], [True], 1.0, 2.0, 0, "1 <= k"),
        ([1.0, 2.0], [True], 1.0, 2.0, 1, "2 runtimes but 1 pass flags"),
        ([1.0], [True], 3.0, 2.0, 1, "min_rt <= max_rt"),
        ([1.0], [True], math.nan, math.nan, 1, "finite"),
        ([None], [True], 1.0, 2.0, 1, "no runtime"),
    ],
)
def test_beyond_at_k_rejects_bad_arguments(
    runtimes: list[float | None], passed: list[bool], min_rt: float, max_rt: float, k: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        metrics.beyond_at_k(runtimes, passed, min_rt, max_rt, k)


def test_mean_beyond_at_k_over_tasks() -> None:
    tasks = [
        # refs 10..50: 20 -> 30/40 = 0.75, fail 0: best 0.75
        ([20.0, None], [True, False], [10.0, 30.0, 50.0]),
        # refs 2..4: 3 -> (4-3)/2 = 0.5, 2 -> 1: best 1
        ([3.0, 2.0], [True, True], [4.0, 2.0]),
    ]
    # (0.75 + 1) / 2 = 0.875 over the first two; over the first one (0.75 + 0.5) / 2
    assert metrics.mean_beyond_at_k(tasks, 2) == 0.875
    assert metrics.mean_beyond_at_k(tasks, 1) == 0.625


def test_mean_beyond_at_k_guards() -> None:
    with pytest.raises(ValueError, match="task 1 has no passing reference"):
        metrics.mean_beyond_at_k([([1.0], [True], [1.0]), ([1.0], [True], [])], 1)
    with pytest.raises(ValueError, match="at least one task"):
        metrics.mean_beyond_at_k([], 1)


# --- EvalPerf DPS -------------------------------------------------------------------------------------


def test_cluster_references_splits_at_relative_gaps() -> None:
    # sorted slowest first: 100, 98, 60, 58, 57, 20; drops over 10% of the slower value:
    # 100->98: 2 <= 10 (same); 98->60: 38 > 9.8 (split); 60->58: 2 <= 6; 58->57: 1 <= 5.8;
    # 57->20: 37 > 5.7 (split)
    assert metrics.cluster_references(DPS_REFS) == CLUSTERS
    # rel_gap 0.5: only 57->20 (37 > 28.5) splits; 98->60 (38 <= 49) does not
    assert metrics.cluster_references(DPS_REFS, rel_gap=0.5) == [
        [100.0, 98.0, 60.0, 58.0, 57.0],
        [20.0],
    ]


def test_cluster_references_edge_cases() -> None:
    assert metrics.cluster_references([5.0]) == [[5.0]]
    # equal values and zeros never split (0 - 0 > 0.1 * 0 is false)
    assert metrics.cluster_references([3.0, 3.0, 0.0, 0.0]) == [[3.0, 3.0], [0.0, 0.0]]
    with pytest.raises(ValueError, match="at least one reference"):
        metrics.cluster_references([])


@pytest.mark.parametrize(
    ("value", "expected_dps", "expected_norm"),
    [
        # clusters, slowest first: [100, 98], [60, 58, 57], [20]; cumulative shares 2/6, 5/6, 6/6
        (59.0, 5 / 6, 2 / 3),  # beats cluster 1's slowest (60): (2 + 3) / 6 refs, (1 + 1) / 3 clusters
        (60.0, 5 / 6, 2 / 3),  # ties cluster 1's slowest member: matched, same as above
        (57.5, 5 / 6, 2 / 3),  # inside cluster 1 (slower than 57): still matches cluster 1
        (20.0, 1.0, 1.0),  # ties the fastest cluster: 6 / 6, 3 / 3
        (1.0, 1.0, 1.0),  # faster than everything
        (99.0, 2 / 6, 1 / 3),  # matches only the slowest cluster: 2 / 6 refs, 1 / 3 clusters
        (101.0, 0.0, 0.0),  # slower than every cluster
    ],
)
def test_dps_and_dps_norm(value: float, expected_dps: float, expected_norm: float) -> None:
    assert metrics.dps(value, DPS_REFS) == pytest.approx(expected_dps)
    assert metrics.dps_norm(value, DPS_REFS) == pytest.approx(expected_norm)


def test_dps_rel_gap_changes_the_clusters() -> None:
    # rel_gap 0.5: clusters [100, 98, 60, 58, 57], [20]; 59 matches cluster 0 (slowest member 100):
    # DPS 5/6, DPS_norm 1/2
    assert metrics.dps(59.0, DPS_REFS, rel_gap=0.5) == pytest.approx(5 / 6)
    assert metrics.dps_norm(59.0, DPS_REFS, rel_gap=0.5) == pytest.approx(1 / 2)


def test_dps_single_reference() -> None:
    # one cluster [10]: at or under 10 scores 1/1, over scores 0
    assert (metrics.dps(10.0, [10.0]), metrics.dps_norm(10.0, [10.0])) == (1.0, 1.0)
    assert (metrics.dps(11.0, [10.0]), metrics.dps_norm(11.0, [10.0])) == (0.0, 0.0)


def test_dps_guards() -> None:
    for function in (metrics.dps, metrics.dps_norm):
        with pytest.raises(ValueError, match="at least one reference"):
            function(1.0, [])


# --- Bootstrap ----------------------------------------------------------------------------------------


def test_bootstrap_constant_problems_have_a_point_interval() -> None:
    # every draw of problem 0 is 0.5 and of problem 1 is 1.0: each replicate is (0.5 + 1) / 2 = 0.75
    assert metrics.bootstrap([[0.5] * 16, [1.0] * 16]) == (0.75, 0.75, 0.75)


def test_bootstrap_applies_the_metric_to_problem_scores() -> None:
    # problem scores are constant 1 and 3; metric max gives 3 in every replicate
    assert metrics.bootstrap([[1.0] * 4, [3.0] * 4], metric=max) == (3.0, 3.0, 3.0)


def test_bootstrap_is_deterministic_for_a_seed() -> None:
    values = [[float(i % 3), float(i % 5), 1.0, 0.0] * 4 for i in range(20)]
    assert metrics.bootstrap(values, seed=7) == metrics.bootstrap(values, seed=7)
    assert metrics.bootstrap(values, seed=7) != metrics.bootstrap(values, seed=8)


def test_bootstrap_interval_contains_the_mean_and_narrows_with_more_problems() -> None:
    # each problem: eight evaluations at 0 and eight at 1, so the grand mean is 0.5
    problem = [0.0] * 8 + [1.0] * 8
    mean10, low10, high10 = metrics.bootstrap([problem] * 10)
    mean100, low100, high100 = metrics.bootstrap([problem] * 100)
    assert low10 <= mean10 <= high10
    assert low100 <= mean100 <= high100
    assert mean10 == pytest.approx(0.5, abs=0.05)
    assert mean100 == pytest.approx(0.5, abs=0.02)
    # a replicate's standard error is sqrt(0.25 / (4 · problems)): ten times the problems,
    # about sqrt(10) ≈ 3.2 times narrower
    assert high100 - low100 < (high10 - low10) / 2


def test_bootstrap_guards() -> None:
    with pytest.raises(ValueError, match="at least one problem"):
        metrics.bootstrap([])
    with pytest.raises(ValueError, match="at least one value per problem"):
        metrics.bootstrap([[1.0], []])
    with pytest.raises(ValueError, match="k >= 1"):
        metrics.bootstrap([[1.0]], k=0)
    with pytest.raises(ValueError, match="replicates >= 1"):
        metrics.bootstrap([[1.0]], replicates=0)


# --- summarise ----------------------------------------------------------------------------------------


def test_summarise() -> None:
    problems = [
        # pass@1 = 1/2; PR(1 | [2]) = 1, so Beyond = (1 + 0) / 2 = 0.5; one B, one F
        ([(True, 1.0), (False, None)], [2.0]),
        # pass@1 = 2/2; PR(3) = 0 (W), PR(1) = 1 (B): Beyond = (0 + 1) / 2 = 0.5
        ([(True, 3.0), (True, 1.0)], [2.0]),
    ]
    # pass@1 (0.5 + 1) / 2 = 0.75; Beyond (0.5 + 0.5) / 2 = 0.5; pooled over 4 samples: B 2, W 1, F 1
    assert metrics.summarise(problems) == {
        "pass@1": 0.75,
        "beyond": 0.5,
        "B": 0.5,
        "M": 0.0,
        "W": 0.25,
        "F": 0.25,
    }


def test_summarise_needs_problems() -> None:
    with pytest.raises(ValueError, match="at least one problem"):
        metrics.summarise([])
