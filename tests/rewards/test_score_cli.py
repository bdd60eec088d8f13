"""`rewardkit score`: one completion as a table or JSON, a JSONL file of records, bad usage.

Real sandbox runs and analyses; ``main`` in process, plus one subprocess for the entry point.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rewardkit.cli import main
from rewardkit.rewards import WEIGHTS

TESTS = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{n * (n + 1) // 2}\n"}
                                    for n in (3, 100, 2000)]}
LAST_CASE = {"mode": "stdio", "cases": TESTS["cases"][-1:]}  # one run per program under valgrind
GOOD = "Here you go:\n```python\nn = int(input())\nprint(n * (n + 1) // 2)\n```\n"
WRONG = "n = int(input())\nprint(n)\n"
SLOW = "n = int(input())\ntotal = 0\nfor i in range(n + 1):\n    total += i\nprint(total)\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    contents = {"tests.json": json.dumps(TESTS), "last_case.json": json.dumps(LAST_CASE), "good.md": GOOD,
                "wrong.py": WRONG, "slow.py": SLOW, "broken.json": "{nope"}
    for name, text in contents.items():
        (tmp_path / name).write_text(text)
    return {name.split(".")[0]: str(tmp_path / name) for name in contents}


def score_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["score", *argv, "--format", "json"]) == 0
    data: dict[str, Any] = json.loads(capsys.readouterr().out)
    return data


def test_table_shows_components_total_and_reasons(files: dict[str, str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", files["good"], "--tests", files["tests"]]) == 0
    out = capsys.readouterr().out
    table = out.split("\n\n")[0].splitlines()
    rows = {line.split()[0]: line.split()[1:] for line in table}
    assert out.startswith("preset cisq_grpo\n")
    assert rows["code_block_format"] == ["0.20", "1.0000"]
    assert rows["pass_rate"] == ["0.30", "1.0000"]
    quality = float(rows["quality"][1])
    assert 0 < quality <= 1
    assert float(rows["total"][0]) == pytest.approx(0.2 + 0.3 + 0.5 * quality, abs=1e-4)
    assert "passed, tests 3/3" in out

    assert main(["score", files["wrong"], "--tests", files["tests"]]) == 0
    out = capsys.readouterr().out
    assert "wrong_answer, tests 0/3" in out and "Expected:" in out  # the run's feedback
    assert "\npass_rate            0.30  0.0000\n" in out


def test_json_output_and_stdin(files: dict[str, str], capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    good = score_json(capsys, files["good"], "--tests", files["tests"])
    assert good["preset"] == "cisq_grpo" and good["objective"] is None
    assert good["weights"] == WEIGHTS["cisq_grpo"]
    assert good["components"]["pass_rate"] == 1.0 and good["components"]["code_block_format"] == 1.0
    assert good["value"] == pytest.approx(sum(good["weights"][k] * v
                                              for k, v in good["components"].items()))
    assert good["info"]["pass_rate"]["status"] == "passed"

    monkeypatch.setattr(sys, "stdin", io.StringIO(WRONG))
    wrong = score_json(capsys, "-", "--tests", files["tests"])
    assert wrong["components"]["pass_rate"] == 0.0  # the lowest value
    assert wrong["components"]["code_block_format"] == 0.0  # raw code, no fenced block
    assert wrong["info"]["pass_rate"]["status"] == "wrong_answer"
    assert wrong["value"] < good["value"]


def test_baseline_decides_the_transition(files: dict[str, str],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--tests", files["tests"], "--preset", "quality_efficiency", "--repeats", "1"]
    fixed = score_json(capsys, files["good"], *common, "--baseline", files["wrong"])
    kept = score_json(capsys, files["good"], *common, "--baseline", files["slow"], "--objective", "time")
    broke = score_json(capsys, files["wrong"], *common, "--baseline", files["slow"])
    assert fixed["components"]["transition"] == 1.0  # fail -> pass
    assert fixed["components"]["efficiency_time"] == 0.0  # no passing baseline to compare with
    assert kept["components"]["transition"] == 0.5  # pass -> pass
    assert kept["info"]["efficiency_time"]["e_in"] > 0
    assert broke["components"]["transition"] == -1.0  # pass -> fail: the lowest
    assert broke["value"] < kept["value"] and broke["value"] < fixed["value"]
    assert kept["objective"] == "time" and set(kept["weights"]) == {
        "afterburner_format", "transition", "efficiency_time", "quality"}

    assert main(["score", files["wrong"], *common, "--baseline", files["slow"]]) == 0
    out = capsys.readouterr().out
    assert "transition" in out and "pass→fail" in out and "baseline  " in out


@pytest.mark.parametrize("repeats", [[], ["--repeats", "1"]])
def test_the_instruction_count_objective_is_measured_with_the_instruction_meter(
        files: dict[str, str], capsys: pytest.CaptureFixture[str], repeats: list[str]) -> None:
    """``--objective instructions`` (offered by the CLI, accepted by the efficiency reward) counts
    instructions: the baseline's loop costs far more than the closed form."""
    scored = score_json(capsys, files["good"], "--tests", files["last_case"], "--preset", "afterburner",
                        "--baseline", files["slow"], "--objective", "instructions", *repeats)
    info = scored["info"]["efficiency_instructions"]
    assert info["e_in"] > 3 * info["e_out"] > 0, info
    assert scored["components"]["efficiency_instructions"] > 0.5


def test_instructions_without_counts_is_a_configuration_error() -> None:
    """A reward given a timing sandbox cannot score the instruction count: it says so at the
    first call instead of leaving every sample out."""
    from rewardkit import rewards
    from rewardkit.rewards import ConfigError, Engine

    reward = rewards.afterburner("instructions", engine=Engine(repeats=1))
    with pytest.raises(ConfigError, match="meter='instructions'"):
        reward.score([{"completion": GOOD, "tests": TESTS, "baseline_code": SLOW}])
    reward.engine.close()


def test_an_instruction_count_is_not_measured_in_rounds() -> None:
    """A count does not follow the host's speed, so the baseline and the candidate run once each,
    not in the interleaved rounds a timed gain needs (under valgrind a round takes seconds)."""
    from rewardkit import rewards
    from rewardkit.rewards import Engine
    from rewardkit.sandbox import Sandbox

    class Unpaired(Sandbox):
        def run_paired(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("an instruction count measured in rounds")

    with Unpaired(workers=1, meter="instructions") as sandbox:
        reward = rewards.afterburner("instructions", engine=Engine(sandbox=sandbox))
        [result] = reward.score([{"completion": GOOD, "tests": LAST_CASE, "baseline_code": SLOW}])
    assert result.components["efficiency_instructions"] > 0.5, result
    assert reward.engine.executions == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{good}", "--tests", "{tests}", "--preset", "nope"], "unknown preset 'nope'"),
        (["{good}", "--tests", "{tests}", "--objective", "memory"], "has no objective"),
        (["{good}", "--tests", "{tests}", "--preset", "afterburner", "--objective", "speed"],
         "invalid choice"),
        (["{good}", "--tests", "missing.json"], "missing.json"),
        (["missing.py", "--tests", "{tests}"], "missing.py"),
        (["{good}", "--tests", "{broken}"], "not valid JSON"),
        (["{good}"], "needs --tests"),
        (["{good}", "--tests", "{tests}", "--preset", "afterburner"], "give --baseline FILE"),
        (["{good}", "--tests", "{tests}", "--language", "cobol"], "unknown language"),
        (["{good}", "--jsonl", "{good}", "--tests", "{tests}"], "either a SOLUTION_FILE or --jsonl"),
        (["--jsonl", "missing.jsonl"], "missing.jsonl"),
        (["--jsonl", "{good}", "--format", "json"], "--format goes with a SOLUTION_FILE"),
        (["{good}", "--tests", "{tests}", "--out", "x.jsonl"], "--out goes with --jsonl"),
    ],
)
def test_bad_usage_exits_2(files: dict[str, str], argv: list[str], message: str,
                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", *(a.format(**files) for a in argv)]) == 2
    captured = capsys.readouterr()
    assert "rewardkit score: " in captured.err and message in captured.err
    assert captured.out == ""


def test_jsonl_scores_every_record_in_order(files: dict[str, str], tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    lines = [
        json.dumps({"id": "good", "completion": GOOD, "tests": TESTS, "note": "extra column"}),
        json.dumps({"id": "wrong", "completion": WRONG, "tests": json.dumps(TESTS)}),
        "",  # blank lines are not records
        json.dumps({"id": "again", "completion": GOOD, "tests": TESTS}),
        '{"id": "cut", "completion": "print(',
        json.dumps({"id": "bad-tests", "completion": GOOD, "tests": {"mode": "stdio", "cases": 3}}),
        json.dumps({"id": "no-tests", "completion": GOOD}),
        json.dumps({"completion": None, "tests": TESTS}),
    ]
    records = tmp_path / "records.jsonl"
    records.write_text("\n".join(lines) + "\n")
    out = tmp_path / "scores.jsonl"
    assert main(["score", "--jsonl", str(records), "--out", str(out), "--batch-size", "3"]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["index"] for r in results] == list(range(7))
    assert [r.get("id") for r in results] == ["good", "wrong", "again", None, "bad-tests", "no-tests",
                                              None]
    good, wrong, again, cut, bad_tests, no_tests, empty = results
    assert good["error"] is None and good["components"]["pass_rate"] == 1.0
    assert wrong["error"] is None and wrong["components"]["pass_rate"] == 0.0
    assert wrong["value"] < good["value"]
    assert (again["value"], again["components"]) == (good["value"], good["components"])
    assert cut["value"] is None and "line 5: not valid JSON" in cut["error"]
    assert bad_tests["value"] is None and "bad tests: 'cases' must be a list" in bad_tests["error"]
    assert no_tests["value"] is None and "no 'tests'" in no_tests["error"]
    assert empty["error"] is None and empty["info"]["reason"] == "completion is None"
    assert empty["value"] == pytest.approx(0.0)  # every component at its lowest: 0
    # progress after each chunk of 3, then the summary; the duplicate shared the first run
    assert "3/7" in captured.err and "6/7" in captured.err
    assert "7/7" in captured.err and "errors=3" in captured.err
    assert "7 records: 4 scored, 3 with errors, 2 sandbox runs" in captured.err


def test_entry_point_reads_jsonl_from_stdin(files: dict[str, str]) -> None:
    records = "".join(json.dumps({"id": i, "completion": code}) + "\n"
                      for i, code in enumerate([GOOD, WRONG]))
    done = subprocess.run([sys.executable, "-m", "rewardkit", "score", "--jsonl", "-",
                           "--tests", files["tests"], "--preset", "quality_efficiency", "--objective",
                           "memory", "--baseline", files["slow"], "--repeats", "1"],
                          input=records, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    good, wrong = (json.loads(line) for line in done.stdout.splitlines())
    assert (good["id"], wrong["id"]) == (0, 1)
    assert good["components"]["transition"] == 0.5 and wrong["components"]["transition"] == -1.0
    assert "efficiency_memory" in good["components"]
    assert good["components"]["quality"] > 0  # analysed in the forkserver pool under `python -m`
    assert "2/2" in done.stderr


def test_a_record_the_checks_miss_fails_alone() -> None:
    from rewardkit.scoring import Scorer, _Line

    with Scorer(tests=TESTS) as scorer:
        good = _Line(0, 1, sample=scorer.prepare({"completion": GOOD}))
        bad = _Line(1, 2, sample={"completion": GOOD})  # unchecked, no tests: the engine refuses
        scorer._score_chunk([good, bad])
    assert good.result is not None and good.result.components["pass_rate"] == 1.0
    assert bad.result is None and bad.error is not None and "'tests' column" in bad.error
