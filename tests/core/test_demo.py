"""`make demo`: the bundled candidates get the verdicts and rewards their kinds promise."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from rewardkit.demo import demo_solutions, main


def test_demo_runs_and_its_candidates_behave(tmp_path: Path) -> None:
    assert main(str(tmp_path)) == 0
    rows = json.loads((tmp_path / "demo.json").read_text())
    data = resources.files("rewardkit").joinpath("data/demo_solutions.jsonl").read_text()
    kinds = {(c["problem_id"], c["label"]): c["kind"] for c in map(json.loads, data.splitlines())}
    assert len(rows) == len(kinds) == len(demo_solutions()) >= 20
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_kind.setdefault(kinds[row["problem_id"], row["label"]], []).append(row)
    assert all(r["status"] == "passed" for k in ("correct-fast", "correct-slow", "messy-correct")
               for r in by_kind[k])
    assert all(r["status"] == "wrong_answer" for r in by_kind["wrong"])
    assert all(r["status"] not in ("passed", "sandbox_error") for r in by_kind["hostile"])
    assert not Path("/tmp/rewardkit-demo-was-here").exists()
    # rewards order the kinds: fast beats slow beats wrong; messy code loses quality to the clean one
    problems = {r["problem_id"] for r in by_kind["correct-slow"]}
    for problem in problems:
        fast, slow, wrong = (next(r for r in by_kind[k] if r["problem_id"] == problem)
                             for k in ("correct-fast", "correct-slow", "wrong"))
        assert fast["reward"]["value"] > slow["reward"]["value"] > wrong["reward"]["value"]
        # several times faster (5.7x to 25x in one run here); Beyond-T ranks the two among the same
        # references, so it cannot put the slow above the fast, but both may land between the same
        # two references when the machine slows the fast one's runs for a moment
        assert 3 * fast["time_s"] < slow["time_s"]
        assert fast["values"]["beyond_t"] >= slow["values"]["beyond_t"]
    for messy in by_kind["messy-correct"]:
        clean = next(r for r in by_kind["correct-fast"] if r["problem_id"] == messy["problem_id"])
        assert messy["reward"]["components"]["quality"] < clean["reward"]["components"]["quality"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert {"pass@1", "beyond_t", "beyond_m", "beyond_i"} <= set(report["metrics"])
    assert (tmp_path / "report.md").exists() and (tmp_path / "metrics.png").exists()
