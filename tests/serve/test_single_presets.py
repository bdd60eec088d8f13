"""One component is selectable by name wherever a preset is: rewards, verl's reward function, the
CLI, the service's /score and /openrlhf, and RemoteReward."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from serve_helpers import Service

from rewardkit import rewards
from rewardkit.cli import main
from rewardkit.client import RemoteReward
from rewardkit.rewards import PRESETS, verl

TESTS = {"mode": "stdio", "cases": [{"input": "2\n", "output": "4\n"}, {"input": "3\n", "output": "6\n"}]}
RIGHT = "```python\nprint(int(input()) * 2)\n```"
HALF = "```python\nn = int(input())\nprint(4 if n == 2 else n)\n```"


def test_every_component_is_a_preset() -> None:
    assert {"binary", "pass_rate", "rlef", "quality", "efficiency", "code_block_format"} <= set(PRESETS)
    reward = PRESETS["efficiency"]("memory", noise_floor=0.0)
    assert [c.name for c, _ in reward.components] == ["efficiency_memory"] and reward.weights == [1.0]


def test_verl_takes_a_component_as_its_preset() -> None:
    scored = verl.compute_score("apps", HALF, {"inputs": ["2\n", "3\n"], "outputs": ["4\n", "6\n"]},
                                preset="pass_rate")
    assert scored["score"] == 0.5 and scored["pass_rate"] == 0.5


def test_the_cli_scores_with_a_component(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = tmp_path / "records.jsonl"
    records.write_text("".join(json.dumps({"completion": c, "tests": TESTS}) + "\n" for c in (RIGHT, HALF)))
    assert main(["score", "--jsonl", str(records), "--preset", "binary"]) == 0
    assert [json.loads(line)["value"] for line in capsys.readouterr().out.splitlines()] == [1.0, 0.0]


def test_the_service_and_its_clients_score_with_a_component(service: Service, http: httpx.Client) -> None:
    answer = http.post("/score", json={"preset": "pass_rate", "completions": [RIGHT, HALF],
                                       "columns": {"tests": [TESTS, TESTS]}})
    assert answer.status_code == 200, answer.text
    assert answer.json()["rewards"] == [1.0, 0.5]
    assert http.get("/presets/binary").json()["components"] == {"binary": 1.0}
    with RemoteReward(service.url, "binary", token=service.token) as remote:
        assert remote([RIGHT, HALF], tests=[TESTS, TESTS]) == [1.0, 0.0]
    assert rewards.pass_rate()([RIGHT, HALF], tests=[TESTS, TESTS]) == [1.0, 0.5]
