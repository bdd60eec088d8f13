"""The service's routes over real HTTP give what rewardkit gives in this process."""

from __future__ import annotations

import json

import httpx
from serve_helpers import MAX_BATCH, Service, problem_batch

from rewardkit import __version__
from rewardkit.analyzers import analyze_many
from rewardkit.rewards import Engine, afterburner, cisq_grpo
from rewardkit.sandbox import Sandbox, TestSuite

STDIO = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{2 * n}\n"} for n in (1, 5, 40)]}


def test_health_is_open_and_says_what_runs(service: Service) -> None:
    health = httpx.get(f"{service.url}/health").json()
    assert health["status"] == "ok" and health["version"] == __version__
    assert health["sandbox"]["backend"] == "local" and health["sandbox"]["workers"] == 2
    assert health["max_batch"] == MAX_BATCH and health["auth"] is True
    assert "cisq_grpo" in health["presets"]


def test_openapi_describes_the_routes(http: httpx.Client) -> None:
    doc = http.get("/openapi.json").json()
    assert {"/health", "/score", "/run", "/analyze", "/openrlhf", "/presets/{preset}"} <= set(doc["paths"])
    schemas = doc["components"]["schemas"]
    assert {"completions", "columns", "preset", "objective"} <= set(schemas["ScoreRequest"]["properties"])
    assert set(schemas["ScoreResponse"]["properties"]) == {"rewards", "components", "info"}
    assert "HTTPBearer" in doc["components"]["securitySchemes"]
    assert "413" in doc["paths"]["/score"]["post"]["responses"]


def test_score_equals_the_in_process_reward(http: httpx.Client, engine: Engine) -> None:
    completions, columns = problem_batch()
    answer = http.post("/score", json={"preset": "cisq_grpo", "completions": completions,
                                       "columns": columns})
    assert answer.status_code == 200, answer.text
    data = answer.json()
    local = cisq_grpo(engine=engine).evaluate(completions, columns)
    assert data["rewards"] == [r.value for r in local]
    assert len(set(data["rewards"])) > 3  # right, wrong and invalid completions differ
    for name, values in data["components"].items():
        assert values == [r.components[name] for r in local]
    assert data["info"] == json.loads(json.dumps([r.info for r in local]))


def test_score_with_a_baseline_preset(http: httpx.Client, engine: Engine) -> None:
    """afterburner times code: its format and transition are exact, efficiency a number in [-1, 1]."""
    completions, columns = problem_batch()
    data = http.post("/score", json={"preset": "afterburner", "objective": "memory",
                                     "completions": completions, "columns": columns}).json()
    local = afterburner("memory", engine=engine).evaluate(completions, columns)
    assert list(data["components"]) == ["afterburner_format", "transition", "efficiency_memory"]
    for name in ("afterburner_format", "transition"):
        assert data["components"][name] == [r.components[name] for r in local]
    assert all(-1 <= v <= 1 for v in data["components"]["efficiency_memory"])


def test_conversational_completions_score_as_their_text(http: httpx.Client) -> None:
    text = "```python\nprint(int(input()) * 2)\n```"
    columns = {"tests": [STDIO, STDIO]}
    plain = http.post("/score", json={"completions": [text, text], "columns": columns}).json()
    chat = http.post("/score", json={"completions": [[{"role": "assistant", "content": text}]] * 2,
                                     "columns": columns}).json()
    assert chat["rewards"] == plain["rewards"] and plain["components"]["pass_rate"] == [1.0, 1.0]


def test_presets_lists_components_and_weights(http: httpx.Client) -> None:
    answer = http.get("/presets/quality_efficiency", params={"objective": "integral"}).json()
    assert answer["name"] == "quality_efficiency"
    assert answer["components"] == {"afterburner_format": 0.1, "transition": 0.35,
                                    "efficiency_integral": 0.3, "quality": 0.25}


def test_run_equals_a_local_run(http: httpx.Client, sandbox: Sandbox) -> None:
    wrong = "print(int(input()) + 2)"
    data = http.post("/run", json={"code": wrong, "tests": STDIO}).json()
    local = sandbox.run(wrong, TestSuite.from_dict(STDIO)).to_dict()
    same = ("status", "passed", "tests_passed", "tests_total", "pass_rate", "feedback", "failed_case")
    assert {k: data[k] for k in same} == {k: local[k] for k in same}
    assert data["status"] == "wrong_answer"

    timed = http.post("/run", json={"code": "print(int(input()) * 2)", "tests": json.dumps(STDIO),
                                    "limits": {"time_s": 2}, "repeats": 2}).json()
    assert timed["status"] == "passed" and timed["repeats"] == 2 and timed["time_s"] > 0


def test_analyze_equals_local_reports(http: httpx.Client) -> None:
    codes = ["import os\nos.system(input())\n", '"""Fine."""\n\nVALUE = 1\n']
    data = http.post("/analyze", json={"codes": codes}).json()
    assert data["reports"] == [r.to_dict() for r in analyze_many(codes)]
    profile = {"severity": {"bandit:*": "off"}}
    quiet = http.post("/analyze", json={"codes": codes[:1], "profile": profile}).json()["reports"][0]
    assert quiet == analyze_many(codes[:1], profile)[0].to_dict()
    assert not any(f["tool"] == "bandit" for f in quiet["findings"])
