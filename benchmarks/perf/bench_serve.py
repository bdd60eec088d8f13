"""Reward service benchmark: ``/score`` requests per second beside the in-process call.

The batch is small, as a trainer with a remote reward sends it: 8 completions
of one problem (``cisq_grpo``: format, pass rate, quality), 10 stdio tests,
correct, wrong, crashing and code-less answers.  Each figure is printed next
to the reference measured in the same run, the same batch scored by the
reward in this process on a sandbox of the same size:

1. cached: the same batch again, so runs and analyses come from the caches
   and what remains is the call itself; over HTTP that is JSON, the network
   stack and the event loop, i.e. the per-request overhead of the service;
2. uncached: a new batch each time (the completions differ by a comment), so
   every completion is run and analysed;
3. four clients at once against one service (one client in-process).

Run: ``python benchmarks/perf/bench_serve.py`` (``make bench`` runs it).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from rewardkit.benchmarks.perf.serve_load import start_service
from rewardkit.rewards import Engine, cisq_grpo
from rewardkit.sandbox import Sandbox

WORKERS = 2
CLIENTS = 4
CACHED_SECONDS = 3.0
UNCACHED_ROUNDS = 4
TESTS = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{n * (n + 1) // 2}\n"}
                                    for n in (1, 2, 3, 10, 99, 100, 1000, 4321, 10**5, 10**6)]}


def batch(variant: int) -> tuple[list[str], dict[str, list[Any]]]:
    """8 completions (distinct for each ``variant``) and their tests column."""
    tag = f"# attempt {variant}\n"
    fast = tag + "n = int(input())\nprint(n * (n + 1) // 2)"
    slow = tag + "n = int(input())\nprint(sum(range(n + 1)))"
    completions = [f"```python\n{fast}\n```", f"Sure:\n```python\n{slow}\n```", fast, slow,
                   f"```python\n{tag}print(int(input()))\n```", f"```python\n{tag}print(1 / 0)\n```",
                   f"```python\n{tag}n = int(input())\nprint(n * n // 2)\n```", "I would use a formula."]
    return completions, {"tests": [TESTS] * len(completions)}


def per_second(call: Callable[[int], object], *, seconds: float = 0.0, rounds: int = 0,
               clients: int = 1) -> float:
    """Calls per second of ``call(i)``, ``clients`` at a time, for ``seconds`` or ``rounds`` calls."""
    done = 0
    start = time.perf_counter()

    def keep_calling(worker: int) -> int:
        count = 0
        while (seconds and time.perf_counter() - start < seconds) or (rounds and count < rounds):
            call(worker * 1000 + count)
            count += 1
        return count

    with ThreadPoolExecutor(clients) as pool:
        done = sum(pool.map(keep_calling, range(clients)))
    return done / (time.perf_counter() - start)


def measure() -> dict[str, float]:
    """Requests (or calls) per second of each variant."""
    figures: dict[str, float] = {}
    fresh = iter(range(1, 10**6))
    with Sandbox(workers=WORKERS) as sandbox:
        reward = cisq_grpo(engine=Engine(sandbox=sandbox))
        same = batch(0)

        def local_fresh(_: int) -> None:
            completions, columns = batch(next(fresh))
            reward(completions, **columns)

        reward(same[0], **same[1])  # warm: worker processes, analysis pool, caches
        local_fresh(0)
        figures["local cached"] = per_second(lambda _: reward(same[0], **same[1]), seconds=CACHED_SECONDS)
        figures["local uncached"] = per_second(local_fresh, rounds=UNCACHED_ROUNDS)

    process, url = start_service("--workers", str(WORKERS))
    try:
        clients: dict[int, httpx.Client] = {}  # one connection per client thread

        def post(body: dict[str, Any], call: int) -> None:
            if call // 1000 not in clients:
                clients[call // 1000] = httpx.Client(base_url=url, timeout=120)
            clients[call // 1000].post("/score", json=body).raise_for_status()

        def body(variant: int) -> dict[str, Any]:
            completions, columns = batch(variant)
            return {"preset": "cisq_grpo", "completions": completions, "columns": columns}

        cached = body(0)
        post(cached, 0)
        post(body(next(fresh)), 0)
        figures["http cached"] = per_second(lambda i: post(cached, i), seconds=CACHED_SECONDS)
        figures["http cached x4"] = per_second(lambda i: post(cached, i), seconds=CACHED_SECONDS,
                                               clients=CLIENTS)
        figures["http uncached"] = per_second(lambda i: post(body(next(fresh)), i), rounds=UNCACHED_ROUNDS)
        figures["http uncached x4"] = per_second(lambda i: post(body(next(fresh)), i),
                                                 rounds=UNCACHED_ROUNDS // 2, clients=CLIENTS)
        for http in clients.values():
            http.close()
    finally:
        process.terminate()
        process.wait(timeout=30)
    return figures


def main() -> None:
    """Print requests per second of /score next to the in-process call, and the HTTP overhead."""
    print(f"service benchmark on {os.cpu_count()} cores, python {sys.version.split()[0]}, "
          f"{WORKERS} sandbox workers on both sides")
    completions, _ = batch(0)
    print(f"batch: {len(completions)} completions of one problem, {len(TESTS['cases'])} stdio tests, "
          "preset cisq_grpo")
    f = measure()
    print(f"{'':28}{'in-process':>12}{'HTTP /score':>14}{f'HTTP, {CLIENTS} clients':>18}")
    print(f"{'cached (same batch again)':28}{f['local cached']:>10.1f}/s{f['http cached']:>12.1f}/s"
          f"{f['http cached x4']:>16.1f}/s")
    print(f"{'uncached (new completions)':28}{f['local uncached']:>10.2f}/s{f['http uncached']:>12.2f}/s"
          f"{f['http uncached x4']:>16.2f}/s")
    overhead_ms = (1 / f["http cached"] - 1 / f["local cached"]) * 1000
    share = overhead_ms / (1000 / f["local uncached"])
    print(f"HTTP overhead per request: {overhead_ms:.1f} ms ({share:.1%} of an uncached batch's time)")


if __name__ == "__main__":
    main()
