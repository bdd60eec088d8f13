"""The bundled examples that `make demo` runs get the verdicts their labels promise."""

from __future__ import annotations

from rewardkit.demo import format_table, load_examples, run_examples
from rewardkit.sandbox import Sandbox


def test_demo_examples_verdicts(sandbox: Sandbox) -> None:
    rows = run_examples(sandbox)
    assert len(rows) == sum(len(p["candidates"]) for p in load_examples())
    for row in rows:
        label = row["candidate"]
        if label.startswith("correct"):
            assert row["status"] == "passed", row
        elif label.startswith("wrong"):
            assert row["status"] == "wrong_answer", row
        else:
            assert label.startswith("hostile") and row["status"] not in ("passed", "sandbox_error"), row
    table = format_table(rows)
    assert "problem" in table and rows[0]["candidate"] in table
    slow = {r["problem"]: r["time_s"] for r in rows if "slow" in r["candidate"]}
    fast = {r["problem"]: r["time_s"] for r in rows if "fast" in r["candidate"]}
    assert all(slow[p] > fast[p] for p in slow)
