"""verl's functions over HTTP (``rewardkit.client``), called the way verl's reward loop calls them:
one sample per call, a chunk's calls at once, in threads or as coroutines (see
tests/rewards/test_verl.py for the in-process module and how verl calls it)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from serve_helpers import Service, free_port, problem_batch

from rewardkit import client
from rewardkit.benchmarks.perf.verl_calls import verl_manager, verl_wrap
from rewardkit.rewards import ConfigError, Engine, cisq_grpo
from rewardkit.rewards.verl import verl_result


def chunk() -> list[tuple[str, Any, dict[str, Any]]]:
    """16 samples of three problems (right, wrong, no code, duplicates), as verl hands them."""
    completions, columns = problem_batch()
    return [(text, tests, {"baseline_code": base, "index": i})
            for i, (text, tests, base) in enumerate(zip(completions, columns["tests"],
                                                        columns["baseline_code"], strict=True))][:16]


@pytest.fixture
def requests(service: Service) -> Iterator[Callable[..., list[int]]]:
    """``watch(**reward_kwargs)``: the sizes of the ``/score`` requests the client for these
    kwargs sends from now on; its gathering window is made long enough for a slow machine."""
    undo: list[Callable[[], None]] = []

    def watch(**reward_kwargs: Any) -> list[int]:
        scorer = client.remote_scorer(url=service.url, token=service.token, **reward_kwargs)
        sizes: list[int] = []

        def hook(request: httpx.Request) -> None:
            if request.url.path == "/score":
                sizes.append(len(json.loads(request.content)["completions"]))

        hooks, window = scorer.remote._http.event_hooks["request"], scorer.coalescer.window
        hooks.append(hook)
        scorer.coalescer.window = 1.0
        undo.append(lambda: (hooks.remove(hook), setattr(scorer.coalescer, "window", window)))
        return sizes

    yield watch
    for step in undo:
        step()


@pytest.mark.parametrize("name", ["compute_score", "compute_score_async"])
def test_a_chunk_of_per_sample_calls_is_one_request(name: str, service: Service, engine: Engine,
                                                    requests: Callable[..., list[int]]) -> None:
    raw = getattr(client, name)
    samples = chunk()
    sizes = requests()
    results = verl_manager(verl_wrap(raw, url=service.url, token=service.token), samples)
    assert sizes == [len(samples)]
    completions = [text for text, _, _ in samples]
    columns = {"tests": [t for _, t, _ in samples],
               "baseline_code": [i["baseline_code"] for _, _, i in samples]}
    assert results == [verl_result(r) for r in cisq_grpo(engine=engine).evaluate(completions, columns)]


def test_max_batch_splits_the_requests(service: Service, requests: Callable[..., list[int]]) -> None:
    samples = chunk()
    sizes = requests(max_batch=5)
    results = verl_manager(verl_wrap(client.compute_score, url=service.url, token=service.token,
                                     max_batch=5), samples)
    assert sorted(sizes) == [1, 5, 5, 5] and all(isinstance(r, dict) for r in results)


def test_reward_kwargs_over_http(service: Service, requests: Callable[..., list[int]]) -> None:
    samples = chunk()[:4]
    requests(preset="afterburner", objective="memory")
    results = verl_manager(verl_wrap(client.compute_score_async, url=service.url, token=service.token,
                                     preset="afterburner", objective="memory"), samples)
    assert {tuple(r) for r in results} == {("score", "afterburner_format", "transition",
                                            "efficiency_memory", "rewardkit_fault")}
    assert client.compute_score_float("mini", *samples[0], url=service.url, token=service.token) == \
        client.compute_score("mini", *samples[0], url=service.url, token=service.token)["score"]
    with pytest.raises(ConfigError, match=r"no option 'format_penalty'.*url, preset, objective"):
        client.compute_score("mini", *samples[0], url=service.url, format_penalty=0.1)
    wrong = verl_manager(verl_wrap(client.compute_score, url=service.url, token=service.token,
                                   preset="best"), samples)
    assert all(isinstance(r, ValueError) and "unknown preset 'best'" in str(r) for r in wrong)


def test_a_bad_sample_fails_alone(service: Service, requests: Callable[..., list[int]]) -> None:
    samples = chunk()[:6]
    samples[3] = (samples[3][0], {"mode": "stdio", "cases": "none"}, samples[3][2])
    requests()
    results = verl_manager(verl_wrap(client.compute_score, url=service.url, token=service.token), samples)
    assert results[3]["pass_rate"] == 0.0  # its tests' fault: it scores lowest, alone
    assert [isinstance(r, dict) for r in results] == [True] * 6


def test_an_unreachable_service_fails_every_caller_at_once() -> None:
    """Every call of the chunk raises, saying why; none waits for another's retries."""
    samples = chunk()[:8]
    dead = f"http://127.0.0.1:{free_port()}"
    for raw in (client.compute_score, client.compute_score_async):
        results = verl_manager(verl_wrap(raw, url=dead, retries=1, backoff=0.01), samples)
        assert all(isinstance(r, client.ServiceUnavailable) and "verl needs a number" in str(r)
                   for r in results), results
