"""Reward service under load: GRPO-shaped batches from 1, 4, 16 and 64 concurrent clients.

Each level sends 2,500 requests (10,000 in all) of 4 prompts × 4 completions
(``serve_load.py``: mostly batches the service has seen, every 20th with a
new completion, every 200th with a new hostile program too; each seen batch
holds a hostile program).  Printed per level: requests per second and p50/p99
latency over HTTP, beside the same requests scored in this process by the
same reward from as many threads, on a sandbox with as many workers (2).
Lost requests (no answer, or not 200) and wrong answers (one that differs
from the in-process answer to its batch, or holds the secret put in the
service's environment) must be zero.

Memory: resident size of the service's process, and of the service with its
sandbox and analysis workers, after a warm-up (every seen batch, from 64
clients as well) and after each level.  The growth over the 10,000 requests
must stay under :data:`SERVICE_GROWTH_MB` and :data:`TREE_GROWTH_MB`.

Run: ``python benchmarks/perf/bench_serve_load.py`` (``make bench`` runs it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import httpx

from rewardkit.benchmarks.perf.serve_load import (
    SECRET,
    SECRET_ENV,
    SERVE_OPTIONS,
    Answer,
    Batch,
    Clients,
    Memory,
    Run,
    Workload,
    drive,
    local_answer,
    local_reward,
    rss_mb,
    start_service,
)

WORKERS = 2
LEVELS = (1, 4, 16, 64)
PER_LEVEL = 2_500
# The service's caches gain an entry per new completion (550 here, a few KiB each, within their
# bounds): +2.5 to +3.9 MiB measured.  A leak of 2 KiB per request alone adds 20 MiB.
SERVICE_GROWTH_MB = 20.0
# Its workers settle in (+30 MiB measured, half in the first level); above that, a worker that
# kept 64 KiB per new completion it runs or analyses would pass the bound.
TREE_GROWTH_MB = 64.0


def over_http(url: str, batches: Sequence[Batch], clients: int, expected: dict[str, Answer]) -> Run:
    """``drive`` the service with ``clients`` connections, closed afterwards."""
    with Clients(lambda: httpx.Client(base_url=url, timeout=300)) as connections:
        return drive(connections.score, batches, clients, expected)


def figures(run: Run) -> str:
    """Requests per second, p50 and p99 latency in ms."""
    return f"{run.per_second:>9.1f}/s{run.quantile(0.5) * 1000:>8.1f}{run.quantile(0.99) * 1000:>8.1f}"


def in_process(workload: Workload, plans: dict[int, list[Batch]], expected: dict[str, Answer]) -> list[Run]:
    """Each level's requests scored in this process; their answers become the expected ones."""
    reward = local_reward(WORKERS)
    try:
        drive(lambda body: local_answer(reward, body), workload.pool, 4, expected)
        return [drive(lambda body: local_answer(reward, body), plans[level], level, expected)
                for level in LEVELS]
    finally:
        reward.engine.sandbox.close()


def over_service(workload: Workload, plans: dict[int, list[Batch]], expected: dict[str, Answer]
                 ) -> tuple[list[Run], list[Run], list[tuple[str, Memory]]]:
    """The warm-up's runs, each level's run, and the service's memory after the warm-up and each level."""
    process, url = start_service("--workers", str(WORKERS), *SERVE_OPTIONS, env={SECRET_ENV: SECRET})
    try:
        warm = [over_http(url, workload.pool, 4, expected),
                over_http(url, workload.pool * 4, max(LEVELS), expected)]
        memory = [("after warm-up", rss_mb(process.pid))]
        levels = []
        for level in LEVELS:
            levels.append(over_http(url, plans[level], level, expected))
            memory.append((f"after {level} clients", rss_mb(process.pid)))
        return warm, levels, memory
    finally:
        process.terminate()
        process.wait(timeout=60)


def memory_failures(memory: list[tuple[str, Memory]]) -> list[str]:
    """Print the service's memory at each point and its growth; a failure past a bound."""
    for label, (service, workers) in memory:
        print(f"RSS {label:<18} service {service:6.1f} MiB, with its workers {service + workers:7.1f} MiB")
    (service_before, workers_before), (service_after, workers_after) = memory[0][1], memory[-1][1]
    growth = service_after - service_before
    tree_growth = growth + workers_after - workers_before
    print(f"growth over {PER_LEVEL * len(LEVELS):,} requests: service {growth:+.1f} MiB (bound "
          f"{SERVICE_GROWTH_MB:g}), with its workers {tree_growth:+.1f} MiB (bound {TREE_GROWTH_MB:g})")
    over = growth > SERVICE_GROWTH_MB or tree_growth > TREE_GROWTH_MB
    return ["memory grew past its bound"] if over else []


def main() -> int:
    """Print the figures; 1 if a request was lost or answered wrong, or memory grew past a bound."""
    workload = Workload(seed=0, new_every=20, hostile_every=10)
    plans = {level: workload.requests(PER_LEVEL) for level in LEVELS}
    print(f"service load benchmark on {os.cpu_count()} cores, python {sys.version.split()[0]}, "
          f"{WORKERS} sandbox workers on both sides")
    print(f"{PER_LEVEL * len(LEVELS):,} requests of 4 prompts x 4 completions (cisq_grpo): "
          f"{len(workload.pool)} seen batches repeated, {workload.fresh} new ones "
          f"({workload.fresh // workload.hostile_every} with a new hostile program)")
    expected: dict[str, Answer] = {}
    local = in_process(workload, plans, expected)
    warm, remote, memory = over_service(workload, plans, expected)

    print(f"{'clients':>7}{'in-process':>11}{'p50 ms':>8}{'p99 ms':>8}{'HTTP':>11}{'p50 ms':>8}{'p99 ms':>8}"
          f"{'HTTP/in-process':>17}{'lost':>6}{'wrong':>7}")
    for mine, theirs in zip(local, remote, strict=True):
        print(f"{theirs.clients:>7}{figures(mine)}{figures(theirs)}"
              f"{theirs.per_second / mine.per_second:>16.2f}x{len(theirs.lost):>6}{len(theirs.wrong):>7}")
    failures = memory_failures(memory)
    failures += [f"{kind} ({run.clients} clients): {message}" for run in [*warm, *remote]
                 for kind, messages in (("lost", run.lost), ("wrong", run.wrong)) for message in messages[:3]]
    failures += [f"in-process answers differ ({run.clients} threads): {message}"
                 for run in local for message in run.wrong[:3]]
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
