"""The embedded benchmark: its shape, every reference passes, a wrong answer fails everywhere."""

from __future__ import annotations

from collections import Counter

from rewardkit.benchmarks.embedded import SPECS, load_mini
from rewardkit.benchmarks.embedded.spec import build
from rewardkit.benchmarks.problem import Problem
from rewardkit.sandbox import Sandbox


def test_shape_of_the_embedded_benchmark() -> None:
    assert len(SPECS) >= 24 and len({s.slug for s in SPECS}) == len(SPECS)
    assert Counter(s.difficulty for s in SPECS) == {"easy": 8, "medium": 8, "hard": 8}
    assert all(len(s.references) >= 6 for s in SPECS)
    assert sum(s.stdio is not None for s in SPECS) >= 6 and any(s.verify for s in SPECS)
    problems = load_mini()
    modes = Counter(p.tests.mode for p in problems)
    assert modes["stdio"] >= 6 and modes["call"] >= 12 and modes["script"] >= 1  # script = verify
    # seeded: building the specs again (not load_mini's cached copies) writes the same suites
    assert [p.to_dict() for p in problems] == [p.to_dict() for spec in SPECS for p in build(spec)]


def _wrong(problem: Problem) -> str:
    """A program in the problem's form that returns nothing useful."""
    entry = problem.starter_code.split("def ", 1)[1].split("(", 1)[0]
    stub = f"def {entry}(*args):\n    return None\n"
    if problem.tests.mode == "stdio":
        return problem.starter_code.replace(problem.starter_code.split("\n\n\n", 1)[0], stub, 1)
    return stub


def test_every_reference_passes_and_a_wrong_answer_fails(sandbox: Sandbox) -> None:
    problems = load_mini()
    jobs = [(r.code, p.tests, p.language) for p in problems for r in p.references]
    labels = [(p.problem_id, r.label) for p in problems for r in p.references]
    results = sandbox.run_many(jobs + [(_wrong(p), p.tests, p.language) for p in problems])
    failing = [(label, r.status.value, r.feedback[:200])
               for label, r in zip(labels, results, strict=False) if not r.passed]
    assert failing == []
    assert not any(r.passed for r in results[len(jobs):])
