"""Fair turns and shutdown of the reward service, on loopback (a service with one sandbox slot).

1. Sandbox lane: a one-job ``/run`` sent while an 8-job ``/score`` is computed, beside the same
   one-job request alone and the 8-job request's own time.
2. Analysis lane: a one-source ``/analyze`` sent while four sources keep mypy busy (their profile
   asks a tool budget of 10^6 s; the service clamps it to 3 s), beside the same request alone.
3. Shutdown: seconds from SIGINT to exit with sandbox or analysis work in flight, and what the
   request in flight was answered (503 means "send it again").
4. Analysis hog, on a service with its default budgets: a one-line ``/score`` sent while another
   client's ``/analyze`` keeps mypy busy (a ~200-byte source that would take minutes), beside
   the same ``/score`` alone, interleaved round by round, and the hog's own seconds.

Run: ``python benchmarks/perf/bench_serve_fairness.py`` (about two minutes).

Part 4 measured 2026-11-28 on a 2-CPU machine shared with other work (medians of 3): the
one-line /score takes 0.08 s alone and 0.48 s beside the hog (most of it an analysis worker's
start), the hog 5.25 s (its 5 s mypy budget).  With one analysis turn at a time and a 30 s
budget, the same run gave 0.08 s alone, 29.48 s beside the hog, and 30.04 s for the hog.
"""

from __future__ import annotations

import signal
import statistics
import subprocess  # nosec B404 - the service under test
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from rewardkit.benchmarks.perf.serve_load import busy_for_mypy, one_case, sleepy_batch, start_service

OPTIONS = ("--workers", "1", "--time-limit", "2", "--suite-time-s", "4", "--max-tool-s", "3")
ROUNDS = 3


def post(url: str, path: str, body: dict[str, Any]) -> tuple[str, float]:
    """The status of one request from a client of its own, and its seconds (the status is
    ``disconnected`` when the service went away first)."""
    started = time.monotonic()
    try:
        status = str(httpx.post(url + path, json=body, timeout=300).status_code)
    except httpx.TransportError:
        status = "disconnected"
    return status, time.monotonic() - started


Request = tuple[str, dict[str, Any]]  # path and body


def beside(url: str, big: Request, small: Request) -> tuple[float, float]:
    """Seconds of ``small`` sent 1 s after ``big``, and of ``big``."""
    with ThreadPoolExecutor(1) as pool:
        hog = pool.submit(post, url, *big)
        time.sleep(1.0)
        _, small_s = post(url, *small)
        return small_s, hog.result()[1]


def lanes() -> None:
    """Each lane: a small request alone, and beside a big one."""
    process, url = start_service(*OPTIONS)
    try:
        post(url, "/analyze", {"codes": ["x = 1\n"]})  # start the analysis workers
        print("lane       small alone   small beside big   big     (median of 3)")
        runs = [("/score", sleepy_batch(8, 0.4 + i / 100)) for i in range(ROUNDS)]
        alone = [post(url, "/run", {"code": f"print({i})", "tests": one_case(i)})[1] for i in range(ROUNDS)]
        pairs = [beside(url, big, ("/run", {"code": f"print({10 + i})", "tests": one_case(10 + i)}))
                 for i, big in enumerate(runs)]
        report("sandbox", alone, pairs)
        source = "def f{}(x: int) -> int:\n    return x\n"
        alone = [post(url, "/analyze", {"codes": [source.format(i)]})[1] for i in range(ROUNDS)]
        pairs = [beside(url, ("/analyze", {"codes": [busy_for_mypy(10 * i + j) for j in range(4)],
                                           "profile": {"thresholds": {"tool_timeout_s": 1e6}}}),
                        ("/analyze", {"codes": [source.format(10 + i)]})) for i in range(ROUNDS)]
        report("analysis", alone, pairs)
    finally:
        process.terminate()
        process.wait(timeout=60)


def report(lane: str, alone: list[float], pairs: list[tuple[float, float]]) -> None:
    """One line: medians of the small request alone, beside the big one, and of the big one."""
    small, big = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
    print(f"{lane:10s} {statistics.median(alone):8.2f} s   {small:12.2f} s   {big:8.2f} s")


def shutdown(work: str, salt: int) -> None:
    """SIGINT to a service busy with ``work``: how soon it exits, and what the request got."""
    process, url = start_service(*OPTIONS, "--max-run-s", "600", "--max-tool-s", "600")
    path, body = ("/score", sleepy_batch(40, 0.5 + salt / 100)) if work == "sandbox" else \
        ("/analyze", {"codes": [busy_for_mypy(1000 + 10 * salt + i) for i in range(4)]})
    with ThreadPoolExecutor(1) as pool:
        in_flight = pool.submit(post, url, path, body)
        time.sleep(8)  # the work is under way
        signalled = time.monotonic()
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
        exited = time.monotonic() - signalled
        print(f"SIGINT with {work:8s} work in flight: exited after {exited:5.2f} s; "
              f"the request was answered {in_flight.result()[0]}")


def one_line_score(value: int) -> Request:
    """A cisq_grpo ``/score`` of one one-line completion that passes its one case."""
    return "/score", {"preset": "cisq_grpo", "completions": [f"```python\nprint({value})\n```"],
                      "columns": {"tests": [one_case(value)]}}


def analysis_hog() -> None:
    """A one-line /score alone and beside another client's mypy hog, interleaved, on a service
    with its default tool budgets."""
    process, url = start_service("--workers", "1")
    try:
        post(url, *one_line_score(0))  # start the sandbox and the analysis workers
        alone, pairs = [], []
        for i in range(ROUNDS):
            alone.append(post(url, *one_line_score(100 + i))[1])
            hog = ("/analyze", {"codes": [busy_for_mypy(2000 + i)]})
            pairs.append(beside(url, hog, one_line_score(200 + i)))
        print(f"{time.strftime('%Y-%m-%d')}: one-line /score alone {statistics.median(alone):.2f} s, "
              f"beside the mypy hog {statistics.median(p[0] for p in pairs):.2f} s, "
              f"the hog {statistics.median(p[1] for p in pairs):.2f} s (medians of {ROUNDS})")
    finally:
        process.terminate()
        process.wait(timeout=60)


def main() -> None:
    """Both lanes, shutdown twice with each kind of work, then the analysis hog."""
    lanes()
    for work in ("sandbox", "analysis"):
        for salt in range(2):
            shutdown(work, salt)
    analysis_hog()


if __name__ == "__main__":
    main()
