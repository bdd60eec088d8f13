"""Many clients at once: every answer is its own request's, nothing is lost or mixed up.

64 requests, at most 8 in flight, each a different problem (its own expected
output) with its completions in a different order.  The baseline fails, so
``afterburner``'s efficiency is 0 and every reward is exact: 0.2·format +
0.5·transition.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from serve_helpers import Service

from rewardkit.rewards import WEIGHTS, formulas

REQUESTS, IN_FLIGHT = 64, 8


def request(i: int) -> tuple[dict[str, Any], list[bool]]:
    """Request ``i`` and, per completion, whether it passes."""
    right = f"print({i})"
    group = [(f"<thinking>{i}</thinking>\n<solution>\n```python\n{right}\n```\n</solution>", True),
             (f"<thinking>{i}</thinking>\n<solution>\n```python\nprint({i + 1})\n```\n</solution>", False),
             (right, True)]
    group = group[i % 3:] + group[:i % 3]
    tests = {"mode": "stdio", "cases": [{"input": "", "output": f"{i}\n"}]}
    body = {"preset": "afterburner", "completions": [text for text, _ in group],
            "columns": {"tests": [tests] * 3, "baseline_code": ["print(-1)"] * 3}}
    return body, [passes for _, passes in group]


def expected(body: dict[str, Any], passes: list[bool]) -> list[float]:
    weights = WEIGHTS["afterburner"]
    return [weights["afterburner_format"] * formulas.afterburner_format(text)
            + weights["transition"] * formulas.transition(False, passed)
            for text, passed in zip(body["completions"], passes, strict=True)]


def test_concurrent_clients_get_their_own_answers(service: Service) -> None:
    local = threading.local()
    clients: list[httpx.Client] = []
    in_flight, most = 0, 0
    lock = threading.Lock()

    def send(i: int) -> tuple[int, httpx.Response]:
        nonlocal in_flight, most
        if not hasattr(local, "client"):  # one connection per client thread
            local.client = service.client()
            clients.append(local.client)
        with lock:
            in_flight += 1
            most = max(most, in_flight)
        try:
            return i, local.client.post("/score", json=request(i)[0])
        finally:
            with lock:
                in_flight -= 1

    with ThreadPoolExecutor(IN_FLIGHT) as pool:
        answers = dict(pool.map(send, range(REQUESTS)))
    for client in clients:
        client.close()

    assert sorted(answers) == list(range(REQUESTS)) and most > 1
    for i, answer in answers.items():
        assert answer.status_code == 200, answer.text
        body, passes = request(i)
        data = answer.json()
        assert data["rewards"] == expected(body, passes), i
        assert data["components"]["efficiency_time"] == [0.0, 0.0, 0.0]
        for info, passed in zip(data["info"], passes, strict=True):
            if not passed:  # the feedback names this request's own expected output
                assert f"Expected:\n{i}\n" in info["transition"]["feedback"], (i, info)
