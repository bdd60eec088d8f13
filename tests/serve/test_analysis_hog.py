"""One request's slow analysis does not hold another's: a source that keeps mypy busy for its
whole budget holds one analysis worker, a one-line /score from another client meanwhile is
answered in a fraction of the hog's time, and a request whose turns were slow yields its turn."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from serve_helpers import Service

from rewardkit.benchmarks.perf.serve_load import busy_for_mypy, one_case
from rewardkit.serve.scheduler import QUANTUM_S, Lane, Ticket


def one_line_score(value: int) -> dict[str, Any]:
    """A cisq_grpo batch of one one-line completion that passes its one case."""
    return {"preset": "cisq_grpo", "completions": [f"```python\nprint({value})\n```"],
            "columns": {"tests": [one_case(value)]}}


def timed(service: Service, path: str, body: dict[str, Any]) -> tuple[httpx.Response, float]:
    """The answer to one request from a client of its own, and its seconds."""
    started = time.monotonic()
    with service.client() as http:
        answer = http.post(path, json=body, timeout=120)
    return answer, time.monotonic() - started


def test_a_one_line_score_does_not_wait_for_another_clients_mypy_hog(service: Service) -> None:
    salt = time.time_ns() % 10**9  # sources and programs no cache of the service has seen
    assert timed(service, "/score", one_line_score(salt))[0].status_code == 200  # warm workers
    with ThreadPoolExecutor(1) as pool, service.client() as http:
        hog = pool.submit(timed, service, "/analyze", {"codes": [busy_for_mypy(salt)]})
        deadline = time.monotonic() + 30
        while not http.get("/health").json()["load"]["analysis"]["running"]:
            assert time.monotonic() < deadline, "the hog's analysis did not start"
            time.sleep(0.05)
        small, small_s = timed(service, "/score", one_line_score(salt + 1))
        hog_answer, hog_s = hog.result()
    (report,) = hog_answer.json()["reports"]
    assert report["score"] == 0.0 and report["findings"][0]["rule"] == "analysis-timeout", report
    assert small.status_code == 200 and small.json()["rewards"][0] is not None, small.text
    assert small_s < hog_s / 2, f"the one-line /score took {small_s:.2f} s beside a {hog_s:.2f} s hog"


def test_a_request_whose_turns_were_slow_yields_to_one_that_waited_less() -> None:
    """A and B wait for the only slot, A first; A's turns took longer than B's by more than the
    quantum, so B goes first."""
    lane = Lane("analysis", 1)
    holder, slow, fresh = (Ticket({"analysis": float("inf")}) for _ in range(3))
    slow.charge("analysis", QUANTUM_S + 0.5)
    order: list[str] = []
    gate = threading.Event()

    def take(name: str, ticket: Ticket, hold: threading.Event | None = None) -> None:
        with lane.turn(ticket):
            order.append(name)
            if hold is not None:
                hold.wait()

    threads = [threading.Thread(target=take, args=("holder", holder, gate))]
    threads[0].start()
    for name, ticket in (("slow", slow), ("fresh", fresh)):
        threads.append(threading.Thread(target=take, args=(name, ticket)))
        threads[-1].start()
        deadline = time.monotonic() + 5
        while lane.load()["waiting"] < len(threads) - 1:
            assert time.monotonic() < deadline
            time.sleep(0.005)
    gate.set()
    for thread in threads:
        thread.join(5)
    assert order == ["holder", "fresh", "slow"]


def test_per_tool_budgets_a_profile_cannot_use_are_refused(http: httpx.Client) -> None:
    answer = http.post("/analyze", json={"codes": ["x = 1\n"],
                                         "profile": {"thresholds": {"tool_budget_s": {"mypy": "9"}}}})
    assert answer.status_code == 400 and "positive number" in answer.json()["error"], answer.text
