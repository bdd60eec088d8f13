"""Competitive-programming rows judged from their own columns: pass_rate, ``score --jsonl``, bad rows."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib
from pathlib import Path

import pytest
from competitive_rows import (
    CALL_RIGHT,
    CALL_WRONG,
    ROWS,
    STDIO_RIGHT,
    STDIO_WRONG,
    lcb_compressed,
)

from rewardkit import rewards
from rewardkit.cli import main
from rewardkit.rewards import ConfigError, Engine
from rewardkit.sandbox import Sandbox, SuiteError, formats


@pytest.fixture(scope="module")
def engine(sandbox: Sandbox) -> Engine:
    return Engine(sandbox=sandbox)


def _batch() -> tuple[list[str], dict[str, list[object]], list[str]]:
    """Every row twice (right, wrong answer), as TRL passes a batch: completions and columns."""
    completions: list[str] = []
    rows: list[dict[str, object]] = []
    for row, functional in ROWS.values():
        completions += [CALL_RIGHT, CALL_WRONG] if functional else [STDIO_RIGHT, STDIO_WRONG]
        rows += [row, row]
    names = sorted({key for row in rows for key in row})
    return completions, {name: [row.get(name) for row in rows] for name in names}, list(ROWS)


def test_each_format_is_judged_from_its_own_columns(engine: Engine) -> None:
    completions, columns, names = _batch()
    values = rewards.pass_rate(engine=engine)(completions=completions, **columns)
    for index, name in enumerate(names):
        right, wrong = values[2 * index], values[2 * index + 1]
        assert (right, name) == (1.0, name) and wrong is not None and wrong < 1.0, name


def test_named_format_and_the_public_code_contests_tests(engine: Engine) -> None:
    row, _ = ROWS["code_contests"]
    assert len(formats.read(row).suite) == 3 and len(formats.read(row, "code_contests_public").suite) == 1
    reward = rewards.pass_rate(engine=engine, format="code_contests_public")
    assert reward(completions=[STDIO_RIGHT], **{k: [v] for k, v in row.items()}) == [1.0]
    with pytest.raises(ConfigError, match="unknown test format"):
        rewards.pass_rate(engine=engine, format="nope")
    with pytest.raises(ConfigError, match="reads the columns public_test_cases"):
        rewards.pass_rate(engine=engine, format="livecodebench")(completions=[STDIO_RIGHT], **{
            k: [v] for k, v in row.items()})


def test_code_contests_compares_whitespace_tokens(engine: Engine) -> None:
    row = {"public_tests": {"input": ["1\n"], "output": ["1 2\n3\n"]},
           "private_tests": {"input": [], "output": []}}
    spaced = "```python\ninput()\nprint('1   2 3')\n```"
    assert rewards.pass_rate(engine=engine)(completions=[spaced], **{k: [v] for k, v in row.items()}) == [1.0]


def test_a_row_no_format_reads_fails_at_the_first_call(engine: Engine) -> None:
    with pytest.raises(ConfigError, match=r"columns: problem\).*livecodebench \(public_test_cases"):
        rewards.pass_rate(engine=engine)(completions=[STDIO_RIGHT], problem=["add two numbers"])


def test_a_malformed_row_scores_lowest_alone(engine: Engine) -> None:
    good, _ = ROWS["livecodebench stdin"]
    bad = {**good, "private_test_cases": "bm90IHpsaWI="}  # base64 of text that is not zlib
    results = rewards.pass_rate(engine=engine).evaluate(
        [STDIO_RIGHT, STDIO_RIGHT], {k: [good[k], bad[k]] for k in good})
    assert results[0].value == 1.0 and results[1].value == 0.0
    assert "neither JSON nor base64 of zlib-compressed pickled JSON" in results[1].info["reason"]


class _Boom:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("touch " + str(_Boom.marker),))

    marker = Path("/nonexistent")


def test_a_malicious_pickle_is_refused_and_runs_nothing(tmp_path: Path) -> None:
    _Boom.marker = tmp_path / "pwned"
    payload = base64.b64encode(zlib.compress(pickle.dumps(_Boom()))).decode()
    row = {"public_test_cases": "[]", "private_test_cases": payload, "metadata": "{}"}
    with pytest.raises(SuiteError, match=r"name posix\.system; only plain data"):
        formats.read(row)
    assert not _Boom.marker.exists()
    assert formats.livecodebench.decode_private(lcb_compressed([{"input": "1"}])) == [{"input": "1"}]


def test_a_compressed_field_past_the_size_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formats.livecodebench, "MAX_DECOMPRESSED", 1000)
    row = {"public_test_cases": "[]", "metadata": "{}",
           "private_test_cases": lcb_compressed([{"input": "1" * 5000, "output": "1", "testtype": "stdin"}])}
    with pytest.raises(SuiteError, match="decompresses to more than"):
        formats.read(row)


def test_score_jsonl_reads_every_format(tmp_path: Path) -> None:
    records = tmp_path / "records.jsonl"
    lines = []
    for name, (row, functional) in ROWS.items():
        for tag, completion in (("right", CALL_RIGHT if functional else STDIO_RIGHT),
                                ("wrong", CALL_WRONG if functional else STDIO_WRONG)):
            lines.append(json.dumps({"id": f"{name}/{tag}", "completion": completion, **row}))
    records.write_text("\n".join(lines) + "\n")
    out = tmp_path / "scores.jsonl"
    assert main(["score", "--jsonl", str(records), "--out", str(out), "--preset", "cisq_grpo"]) == 0
    for result in map(json.loads, out.read_text().splitlines()):
        assert result["error"] is None, result
        passed = result["components"]["pass_rate"]
        assert passed == 1.0 if result["id"].endswith("right") else passed < 1.0, result
    contests = tmp_path / "contests.jsonl"
    contests.write_text("\n".join(line for line in lines if '"code_contests/' in line) + "\n")
    assert main(["score", "--jsonl", str(contests), "--out", str(out), "--test-format",
                 "code_contests_public"]) == 0
    right, wrong = map(json.loads, out.read_text().splitlines())
    assert right["components"]["pass_rate"] == 1.0 and wrong["components"]["pass_rate"] == 0.0


def test_a_malformed_row_scores_lowest_on_the_efficiency_presets(engine: Engine) -> None:
    """A row's unusable tests are the row's fault: transition and efficiency score their lowest,
    never None (the infrastructure's), though no baseline can be measured on them."""
    good, _ = ROWS["livecodebench stdin"]
    bad = {**good, "private_test_cases": "bm90IHpsaWI="}
    reward = rewards.afterburner(objective="time", engine=engine)
    completion = f"<thinking>double it</thinking>\n<solution>\n{STDIO_RIGHT}\n</solution>"
    baseline = "n = int(input())\nprint(n + n)\n"
    result = reward.evaluate([completion], {**{k: [bad[k]] for k in bad}, "baseline_code": [baseline]})[0]
    assert result.components["transition"] == -1.0 and result.components["efficiency_time"] == 0.0
    assert result.value is not None
