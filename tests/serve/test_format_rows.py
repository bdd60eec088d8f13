"""The service's /score reads every competitive-programming format from the row's own columns."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "formats"))
from competitive_rows import CALL_RIGHT, CALL_WRONG, ROWS, STDIO_RIGHT, STDIO_WRONG


def test_score_reads_each_format(http: httpx.Client) -> None:
    completions: list[str] = []
    rows: list[dict[str, object]] = []
    for row, functional in ROWS.values():
        completions += [CALL_RIGHT, CALL_WRONG] if functional else [STDIO_RIGHT, STDIO_WRONG]
        rows += [row, row]
    names = sorted({key for row in rows for key in row})
    body = {"preset": "cisq_grpo", "completions": completions,
            "columns": {name: [row.get(name) for row in rows] for name in names}}
    answer = http.post("/score", json=body)
    assert answer.status_code == 200, answer.text
    passed = answer.json()["components"]["pass_rate"]
    assert passed[0::2] == [1.0] * len(ROWS) and all(p is not None and p < 1.0 for p in passed[1::2])
    row, _ = ROWS["code_contests"]
    public = http.post("/score", json={"completions": [STDIO_RIGHT], "format": "code_contests_public",
                                      "columns": {k: [v] for k, v in row.items()}})
    assert public.status_code == 200 and public.json()["components"]["pass_rate"] == [1.0]


def test_a_malformed_row_scores_lowest_with_its_reason(http: httpx.Client) -> None:
    nested: list[object] = [0]
    for _ in range(300):
        nested = [nested]
    bad = {"mode": "call", "entry_point": "f", "cases": [{"args": [nested], "expected": 1}]}
    good = {"mode": "call", "entry_point": "f", "cases": [{"args": [1], "expected": 1}]}
    code = "```python\ndef f(x):\n    return 1\n```"
    tests = [good, bad, {"mode": "psychic"}, "{nope"]
    answer = http.post("/score", json={"completions": [code] * 4, "columns": {"tests": tests}})
    assert answer.status_code == 200, answer.text
    assert answer.json()["components"]["pass_rate"] == [1.0, 0.0, 0.0, 0.0]
    reasons = [info.get("reason") for info in answer.json()["info"]]
    assert reasons[0] is None and "'args' cannot be used" in reasons[1]
    assert "test mode" in reasons[2] and "not valid JSON" in reasons[3]
