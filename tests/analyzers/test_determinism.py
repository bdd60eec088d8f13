"""Same code, same report: in any batch, in any order, in any process."""

from __future__ import annotations

import random

import pytest

from rewardkit.analyzers import analyze, analyze_many, clear_cache

SNIPPETS = [
    "import os\ndef f(a, b, c, d, e, g):\n    s = ''\n    for x in a:\n        s += x\n    return s\n",
    "import pickle\ndef load(b):\n    return pickle.loads(b)\n",
    "def g(x: int) -> str:\n    return x\n",
    "class Thing:\n    def go(self):\n        while True:\n            pass\n",
    "try:\n    import json\nexcept:\n    pass\n",
    "def h(xs: list[int]) -> int:\n    total = 0\n    for x in xs:\n        total += x\n    return total\n",
]


@pytest.mark.usefixtures("fresh_cache")
def test_batched_equals_one_by_one_in_any_order() -> None:
    alone = [analyze(s) for s in SNIPPETS]
    clear_cache()
    order = list(range(len(SNIPPETS)))
    random.Random(7).shuffle(order)
    batched = analyze_many([SNIPPETS[i] for i in order], workers=2)
    assert [batched[order.index(i)] for i in range(len(SNIPPETS))] == alone
    assert all(r.errors == () for r in alone)
    assert all(r.findings for r in alone[:5])


@pytest.mark.usefixtures("fresh_cache")
def test_duplicates_in_a_batch_get_equal_reports() -> None:
    reports = analyze_many([SNIPPETS[0], SNIPPETS[1], SNIPPETS[0]], workers=1)
    assert reports[0] == reports[2] != reports[1]


@pytest.mark.usefixtures("fresh_cache")
def test_a_blocking_mypy_error_stays_with_its_own_file() -> None:
    """A relative import stops mypy for a whole batch; the others keep their findings."""
    relative, typed = "from . import helpers\nprint(helpers)\n", SNIPPETS[2]
    reports = analyze_many([relative, typed], workers=1)
    assert all(r.errors == () for r in reports)
    assert [f.rule for f in reports[0].findings if f.tool == "mypy"] == ["misc"]
    clear_cache()
    assert reports[1] == analyze(typed)
