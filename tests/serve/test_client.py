"""``RemoteReward`` behaves like the in-process reward; verl's functions over HTTP; faults."""

from __future__ import annotations

import importlib.util
import logging
from typing import Any

import httpx
import pytest
from serve_helpers import Service, free_port, problem_batch

from rewardkit import client
from rewardkit.client import RemoteReward, ServiceUnavailable, compute_score, compute_score_batch
from rewardkit.rewards import Engine, quality_efficiency, verl
from rewardkit.rewards.presets import cisq_grpo


class Metrics:
    """Stands in for TRL's ``log_metric``."""

    def __init__(self) -> None:
        self.logged: dict[str, float] = {}

    def __call__(self, name: str, value: float) -> None:
        self.logged[name] = value


def trl_kwargs(columns: dict[str, list[Any]], metrics: Metrics) -> dict[str, Any]:
    """What TRL passes a reward besides the completions: columns and its own objects."""
    size = len(columns["tests"])
    return {**columns, "prompts": ["p"] * size, "completion_ids": [[1, 2]] * size,
            "trainer_state": object(), "log_metric": metrics, "log_extra": lambda *a: None,
            "unused_column": [{1, 2}] * size}  # not a column rewards read, not JSON: stays here


@pytest.fixture
def remote(service: Service) -> Any:
    with RemoteReward(service.url, "cisq_grpo", token=service.token) as reward:
        yield reward


def test_like_the_local_reward(remote: RemoteReward, engine: Engine) -> None:
    completions, columns = problem_batch()
    local = cisq_grpo(engine=engine)
    remote_metrics, local_metrics = Metrics(), Metrics()
    values = remote(completions, **trl_kwargs(columns, remote_metrics))
    assert remote.__name__ == local.__name__ == "cisq_grpo"
    assert values == local(completions, **trl_kwargs(columns, local_metrics))
    assert remote_metrics.logged == local_metrics.logged
    assert {"rewardkit/quality", "rewardkit/status/passed"} <= set(remote_metrics.logged)

    results = remote.results(completions, **columns)
    assert [r.to_dict() for r in results] == [r.to_dict() for r in local.evaluate(completions, columns)]
    samples = [{"completion": text, **{key: column[i] for key, column in columns.items()}}
               for i, text in enumerate(completions)]
    assert [r.to_dict() for r in remote.score(samples)] == [r.to_dict() for r in results]


def test_conversational_completions(remote: RemoteReward, engine: Engine) -> None:
    completions, columns = problem_batch()
    chat = [[{"role": "assistant", "content": text}] for text in completions]
    assert remote(chat, **columns) == cisq_grpo(engine=engine)(chat, **columns)


def test_component_functions_share_one_request(service: Service, engine: Engine) -> None:
    completions, columns = problem_batch()
    local = quality_efficiency("memory", engine=engine)
    with RemoteReward(service.url, "quality_efficiency", "memory", token=service.token) as remote:
        sent: list[str] = []
        remote._http.event_hooks["request"].append(lambda request: sent.append(request.url.path))
        functions = remote.functions()
        assert [f.__name__ for f in functions] == [f.__name__ for f in local.functions()]
        assert remote.weights == local.weights
        by_name = {f.__name__: f(completions, **columns) for f in functions}
        assert sent == ["/presets/quality_efficiency", "/score"]
    expected = local.evaluate(completions, columns)
    for name in ("afterburner_format", "transition", "quality"):  # efficiency is a fresh measurement
        assert by_name[name] == [r.components[name] for r in expected]


def test_unreachable_service_gives_none_and_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    completions, columns = problem_batch()
    dead = RemoteReward(f"http://127.0.0.1:{free_port()}", retries=2, backoff=0.01)
    with caplog.at_level(logging.WARNING, "rewardkit.client"):
        assert dead(completions, **columns) == [None] * len(completions)
    assert "unreachable" in caplog.text and "failed 3 times" in caplog.text
    with pytest.raises(ServiceUnavailable):
        dead.results(completions, **columns)
    with pytest.raises(ServiceUnavailable):  # verl needs numbers: no batch of made-up zeros
        compute_score_batch(["mini"], ["print(1)"], [columns["tests"][0]], url=dead.url, retries=0)
    dead.close()


def test_rejected_requests_raise_with_the_service_s_message(service: Service) -> None:
    completions, columns = problem_batch()
    with RemoteReward(service.url, "cisq_grpo", token="wrong") as impostor, \
            pytest.raises(ValueError, match=r"HTTP 401.*wrong token"):
        impostor(completions, **columns)
    with RemoteReward(service.url, "best", token=service.token) as unknown, \
            pytest.raises(ValueError, match="unknown preset 'best'"):
        unknown(completions, **columns)
    with RemoteReward(service.url, token=service.token) as remote:
        with pytest.raises(ValueError, match="'tests' column"):
            remote(completions)
        with pytest.raises(ValueError, match="column 'tests' cannot be sent as JSON"):
            remote(completions, tests=[object()] * len(completions))


def test_verl_functions_over_http(service: Service, engine: Engine,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    completions, columns = problem_batch()
    infos = [{"baseline_code": code, "index": i} for i, code in enumerate(columns["baseline_code"])]
    monkeypatch.setenv(client.URL_ENV, service.url)
    monkeypatch.setenv(client.TOKEN_ENV, service.token)
    scores = compute_score_batch(["mini"] * len(completions), completions, columns["tests"], infos)
    expected = [verl.verl_result(r) for r in cisq_grpo(engine=engine).evaluate(completions, columns)]
    assert scores == expected
    assert compute_score("mini", completions[0], columns["tests"][0], infos[0]) == scores[0]
    one = compute_score("mini", completions[1], columns["tests"][1], url=service.url, preset="afterburner",
                        extra_info={"baseline_code": columns["baseline_code"][1]})
    assert -1 <= one["score"] <= 1 and "transition" in one
    with pytest.raises(ValueError, match=client.URL_ENV):
        monkeypatch.delenv(client.URL_ENV)
        compute_score("mini", "x", columns["tests"][0])
    assert httpx.get(service.url + "/health").status_code == 200


@pytest.mark.parametrize("module", [client, verl])
def test_verl_can_load_the_file_by_its_path(module: Any, service: Service) -> None:
    """verl imports ``custom_reward_function.path`` as a module of its own, outside the package."""
    spec = importlib.util.spec_from_file_location("custom_module", module.__file__)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    assert callable(loaded.compute_score) and callable(loaded.compute_score_batch)
    if module is client:
        _, columns = problem_batch()
        scores = loaded.compute_score_batch(["mini"], ["print(1)"], columns["tests"][:1], url=service.url,
                                            token=service.token)
        assert len(scores) == 1 and 0 <= scores[0]["score"] <= 1


def test_verl_functions_over_http_take_the_fault_policy(service: Service) -> None:
    completions, columns = problem_batch()
    options = {"url": service.url, "token": service.token}
    scored = compute_score("mini", completions[0], columns["tests"][0], fault="raise", **options)
    assert scored["rewardkit_fault"] == 0.0 and "score" in scored
    batch = compute_score_batch(["mini"], completions[:1], columns["tests"][:1], fault=-1.0, **options)
    assert batch == [scored]
    with pytest.raises(ValueError, match="cannot drop a sample"):
        compute_score("mini", completions[0], columns["tests"][0], fault="skip", **options)
