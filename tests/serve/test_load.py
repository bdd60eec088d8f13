"""The service under a GRPO-shaped load: no request lost, no answer wrong, no memory growth.

16 clients send 1,280 requests of 4 prompts × 4 completions (the workload of
``benchmarks/perf/serve_load.py``: mostly the 16 batches the service has seen,
each with a hostile program; every 32nd a new completion, every 128th a new
hostile program too) to a service of its own on loopback
(2 sandbox workers, 2 s per test case, a secret in its environment).  Every
answer must be 200, equal the in-process reward's answer to its batch
(rewards, components and info: ``cisq_grpo`` is deterministic), and hold no
trace of the secret.

Memory is read after a warm-up (every seen batch, four times, from 16
clients) and after the 1,280 requests.  The service's process (request
handling, and caches that gain an entry per new completion: 50 here, a few
KiB each) may grow by at most 16 MiB: a leak of 13 KiB per request fails it
(a request's body and answer, as Python objects, take about 36 KiB).  The
service with its sandbox and analysis workers may grow by at most 64 MiB
(they settle in by about 7 MiB): a worker that kept 1.2 MiB per new
completion it runs or analyses fails it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_helpers import Service, start, stop

from rewardkit.benchmarks.perf.serve_load import (
    SECRET,
    SECRET_ENV,
    SERVE_OPTIONS,
    Answer,
    Clients,
    Workload,
    drive,
    local_answer,
    local_reward,
    rss_mb,
)

pytestmark = pytest.mark.slow

CLIENTS, REQUESTS, WORKERS = 16, 1_280, 2
SERVICE_GROWTH_MB, TREE_GROWTH_MB = 16.0, 64.0


@pytest.fixture
def own_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    """A service of this test's own, so that its memory is this load's alone."""
    monkeypatch.setenv(SECRET_ENV, SECRET)
    running = start(tmp_path / "service.log", "--workers", str(WORKERS), *SERVE_OPTIONS)
    yield running
    stop(running)


def test_many_clients_lose_nothing_get_right_answers_and_leak_nothing(own_service: Service) -> None:
    workload = Workload(seed=1, pool=16, new_every=32, hostile_every=4)
    requests = workload.requests(REQUESTS)
    expected: dict[str, Answer] = {}
    reward = local_reward(WORKERS)
    try:
        distinct = list({batch.key: batch for batch in [*workload.pool, *requests]}.values())
        reference = drive(lambda body: local_answer(reward, body), distinct, WORKERS, expected)
    finally:
        reward.engine.sandbox.close()
    assert not reference.lost, reference.lost[:3]

    with Clients(own_service.client) as clients:
        warm = drive(clients.score, workload.pool * 4, CLIENTS, expected)
        before = rss_mb(own_service.process.pid)
        run = drive(clients.score, requests, CLIENTS, expected)
        after = rss_mb(own_service.process.pid)

    for phase in (warm, run):
        assert not phase.lost, phase.lost[:3]
        assert not phase.wrong, phase.wrong[:3]
    assert len(run.latencies) == REQUESTS and workload.fresh == REQUESTS // workload.new_every
    growth, tree_growth = after[0] - before[0], sum(after) - sum(before)
    assert growth < SERVICE_GROWTH_MB, f"the service grew by {growth:.1f} MiB: {before} -> {after}"
    assert tree_growth < TREE_GROWTH_MB, \
        f"the service and its workers grew by {tree_growth:.1f} MiB: {before} -> {after}"
