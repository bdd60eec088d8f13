"""No client can hold the service's capacity: caps per request, turns between requests, a
truthful /health, and a shutdown that ends in-flight work within seconds.

The service here has one sandbox slot, a 4 s bound on a whole suite, 5 s of sandbox time per
request, 50 cases per suite and a 3 s ceiling on any analysis tool.  "Another client" is a
second request sent while the first is being computed; the bound it is held to is the
documented one: a job in progress (at most the suite bound), or one analysis turn.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import httpx
import psutil
import pytest
from killer import command_line
from serve_helpers import Service, start, stop

from rewardkit.benchmarks.perf.serve_load import SLEEPY, busy_for_mypy, one_case, sleepy_batch

SUITE_S, RUN_S, MAX_CASES, TOOL_S, QUEUED = 4, 5, 50, 3, 2
OPTIONS = ("--workers", "1", "--time-limit", "2", "--suite-time-s", str(SUITE_S), "--max-run-s", str(RUN_S),
           "--max-cases", str(MAX_CASES), "--max-tool-s", str(TOOL_S), "--max-queued", str(QUEUED))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    running = start(tmp_path_factory.mktemp("fair") / "service.log", *OPTIONS)
    with running.client() as http:  # start the sandbox and the analysis workers
        assert http.post("/analyze", json={"codes": ["x = 1\n"]}).status_code == 200
        assert http.post("/run", json={"code": "print(1)", "tests": one_case(1)}).status_code == 200
    yield running
    stop(running)


def timed(service: Service, path: str, body: dict[str, Any],
          timeout: float = 60) -> tuple[httpx.Response, float]:
    """The answer to one request from a client of its own, and when it came (monotonic)."""
    with service.client() as http:
        answer = http.post(path, json=body, timeout=timeout)
    return answer, time.monotonic()


def test_a_suite_over_the_case_cap_is_refused(service: Service) -> None:
    tests = {"mode": "stdio", "cases": [{"input": "", "output": "1\n"}] * (MAX_CASES + 1)}
    with service.client() as http:
        answer = http.post("/run", json={"code": "print(1)", "tests": tests})
        assert answer.status_code == 413 and f"at most {MAX_CASES}" in answer.json()["error"]
        scored = http.post("/score", json={"completions": ["print(1)"], "columns": {"tests": [tests]}})
        assert scored.status_code == 413



def test_the_case_cap_holds_for_every_shape_a_suite_is_read_in(service: Service) -> None:
    """verl's ground truth (in ``tests``) and open-r1's ``verification_info`` column are suites too:
    over the cap they are refused as rewardkit's own shape is, not run case by case."""
    over = MAX_CASES + 1
    verl = {"inputs": ["\n"] * over, "outputs": ["1\n"] * over}
    case = {"input": "", "output": "1\n", "type": "stdin_stdout"}
    open_r1 = {"language": "python", "test_cases": [case] * over}
    with service.client() as http:
        for body in ({"columns": {"tests": [verl]}}, {"columns": {"tests": [json.dumps(verl)]}},
                     {"columns": {"verification_info": [open_r1]}}):
            answer = http.post("/score", json={"completions": ["print(1)"], **body})
            assert answer.status_code == 413 and f"{over} cases" in answer.json()["error"], body
        answer = http.post("/run", json={"code": "print(1)", "tests": verl})
        assert answer.status_code == 413
        for label in (json.dumps(open_r1), json.dumps({"verification_info": open_r1}), verl):
            answer = http.post("/openrlhf", json={"query": ["print(1)"], "prompts": [""], "labels": [label]})
            assert answer.status_code == 413, label


def test_one_long_job_holds_a_slot_for_the_suite_bound_only(service: Service) -> None:
    """The issue's case: many cases that each sleep.  The job ends at the suite bound with
    ``timeout``; a request sent meanwhile waits no longer than that."""
    long_suite = {"mode": "stdio", "cases": [{"input": "", "output": "1\n"}] * MAX_CASES}
    with ThreadPoolExecutor(2) as pool:
        sent = time.monotonic()
        hog = pool.submit(timed, service, "/run", {"code": SLEEPY.format(seconds=0.5, value=1),
                                                   "tests": long_suite})
        time.sleep(1.0)
        other_sent = time.monotonic()
        other = pool.submit(timed, service, "/run", {"code": "print(2)", "tests": one_case(2)})
        (hog_answer, hog_done), (other_answer, other_done) = hog.result(), other.result()
    assert hog_answer.json()["status"] == "timeout", hog_answer.text
    assert "whole suite" in hog_answer.json()["feedback"]
    assert hog_done - sent < SUITE_S + 3  # not 50 x 0.5 s
    assert other_answer.json()["status"] == "passed"
    assert other_done - other_sent < SUITE_S + 2


def test_requests_take_turns_job_by_job(service: Service) -> None:
    """A request with many jobs does not keep a later one waiting for all of them: the later
    one gets the next turn.  Meanwhile /health says the sandbox is saturated."""
    samples: list[dict[str, Any]] = []
    done = threading.Event()

    def watch() -> None:
        with service.client() as http:
            while not done.is_set():
                samples.append(http.get("/health").json())
                time.sleep(0.05)

    with ThreadPoolExecutor(3) as pool:
        watcher = pool.submit(watch)
        big: Future[tuple[httpx.Response, float]] = pool.submit(
            timed, service, "/score", sleepy_batch(8, 0.4))
        time.sleep(1.0)
        small_sent = time.monotonic()
        small_answer, small_done = timed(service, "/run", {"code": "print(3)", "tests": one_case(3)})
        big_answer, big_done = big.result()
        done.set()
        watcher.result()
    assert small_answer.json()["status"] == "passed"
    assert small_done - small_sent < 2.0, "the small request waited for the big one's jobs"
    assert big_done > small_done
    assert big_answer.status_code == 200 and big_answer.json()["components"]["pass_rate"] == [1.0] * 8
    assert any(s["saturated"] and s["load"]["run"]["waiting"] >= 1 for s in samples), samples[-3:]


def test_past_the_queue_a_request_is_answered_503_at_once(service: Service) -> None:
    """Two requests compute (twice the one worker), two wait, the rest are turned away at once
    instead of piling up in the server's memory."""
    body = {"code": SLEEPY.format(seconds=0.4, value=4), "tests": {"mode": "stdio", "cases": [
        {"input": "", "output": "4\n"}] * 3}}
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: timed(service, "/run", body), range(8)))
    statuses = sorted(answer.status_code for answer, _ in answers)
    assert statuses.count(200) >= 2 + QUEUED and 503 in statuses, statuses
    refused = next(answer for answer, _ in answers if answer.status_code == 503)
    assert "busy" in refused.json()["error"] and refused.headers["retry-after"] == "1"


def test_a_request_past_its_sandbox_time_keeps_what_ran_and_leaves_out_the_rest(service: Service) -> None:
    """Slow completions must not crash a trainer: the request is answered, samples run within its
    budget keep their scores, the rest have none (a trainer leaves them out)."""
    started = time.monotonic()
    answer, finished = timed(service, "/score", sleepy_batch(16, 0.5))  # ~8 s of jobs, cap 5 s
    assert answer.status_code == 200, answer.text
    scored = answer.json()
    rewards, infos = scored["rewards"], scored["info"]
    assert 0 < sum(r is not None for r in rewards) < 16
    for reward, info in zip(rewards, infos, strict=True):
        if reward is None:
            assert info["pass_rate"]["status"] == "sandbox_error"
            assert f"{RUN_S} s of run time" in info["pass_rate"]["feedback"]
        else:
            assert info["pass_rate"]["status"] == "passed"
    assert finished - started < RUN_S + SUITE_S + 3


def test_work_of_a_client_that_went_away_is_dropped(service: Service) -> None:
    """A client that times out and retries must not leave its first request running: the jobs
    of a request whose client disconnected are not started."""
    with service.client() as http, pytest.raises(httpx.ReadTimeout):
        http.post("/score", json=sleepy_batch(12, 0.45), timeout=1.5)  # ~5.4 s of jobs, none cached
    gone = time.monotonic()
    with service.client() as http:
        while (load := http.get("/health").json()["load"]["run"])["running"] or load["waiting"]:
            assert time.monotonic() - gone < 2.0, f"the abandoned request still runs: {load}"
            time.sleep(0.05)


def test_a_request_past_its_analysis_time_keeps_what_was_analysed(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    short = start(tmp_path_factory.mktemp("analysis-cap") / "service.log", *OPTIONS, "--max-analysis-s", "2")
    try:
        slow = [busy_for_mypy(i) for i in range(6)]
        answer, _ = timed(short, "/analyze", {"codes": slow})
    finally:
        stop(short)
    reports = answer.json()["reports"]
    assert answer.status_code == 200 and len(reports) == 6
    left_out = [r for r in reports if r["errors"]]  # rewards give these no score
    assert left_out and len(left_out) < 6, reports
    assert all("of analysis time" in r["errors"][0]["reason"] for r in left_out)


def test_analysis_turns_and_a_clamped_tool_budget(service: Service) -> None:
    """The issue's case: a profile asking a huge tool budget for sources that keep mypy busy
    for minutes.  The budget is clamped to the service's, and another request's analysis
    waits for one turn, not for the whole request."""
    slow = [busy_for_mypy(i) for i in range(4)]
    profile = {"thresholds": {"tool_timeout_s": 1e6}}
    with ThreadPoolExecutor(2) as pool:
        sent = time.monotonic()
        hog = pool.submit(timed, service, "/analyze", {"codes": slow, "profile": profile}, 120)
        time.sleep(1.0)
        other_sent = time.monotonic()
        other_answer, other_done = timed(service, "/analyze",
                                         {"codes": ["def f(x: int) -> int:\n    return x\n"]})
        hog_answer, hog_done = hog.result()
    assert other_answer.status_code == 200
    reports = hog_answer.json()["reports"]
    assert all(r["score"] == 0.0 for r in reports), reports
    assert all(f"within its {TOOL_S} s budget" in r["findings"][0]["message"] for r in reports)
    assert hog_done - sent < 60
    assert other_done - other_sent < hog_done - sent
    assert other_done - other_sent < 4 * TOOL_S + 5, "the other analysis waited longer than one turn"


@pytest.mark.parametrize("work", ["sandbox", "analysis"])
def test_shutdown_cancels_work_in_flight_and_exits_within_seconds(
        tmp_path_factory: pytest.TempPathFactory, work: str) -> None:
    """The issue's case too: an analysis that keeps mypy busy for minutes, with a tool budget
    as large as the service allows, does not hold the service up once it is told to stop."""
    stopping = start(tmp_path_factory.mktemp("shutdown") / "service.log", *OPTIONS,
                     "--max-run-s", "600", "--max-tool-s", "600")
    server = psutil.Process(stopping.process.pid)
    path, body, mark = ("/score", sleepy_batch(40, 0.5), "runtime.worker") if work == "sandbox" else (
        "/analyze", {"codes": [busy_for_mypy(i) for i in range(4)]}, "rewardkit.analyzers.analysis_worker")
    try:
        with ThreadPoolExecutor(1) as pool:
            busy = pool.submit(_answer_or_error, stopping, path, body)
            deadline = time.monotonic() + 60
            while not [p for p in server.children(recursive=True) if mark in " ".join(command_line(p))]:
                assert time.monotonic() < deadline, f"no {work} worker started"
                time.sleep(0.1)
            time.sleep(2.0)
            left = server.children(recursive=True)
            signalled = time.monotonic()
            stopping.process.send_signal(signal.SIGINT)
            stopping.process.wait(timeout=60)
            exited = time.monotonic() - signalled
            outcome = busy.result(timeout=30)
    finally:
        if stopping.process.poll() is None:
            stop(stopping)
    assert exited < 10, f"the service took {exited:.1f} s to stop"
    assert outcome in ("503", "disconnected"), outcome
    _, alive = psutil.wait_procs(left, timeout=5)
    assert not alive, f"the service left processes behind: {[p.pid for p in alive]}"


def _answer_or_error(service: Service, path: str, body: dict[str, Any]) -> str:
    try:
        answer, _ = timed(service, path, body, timeout=120)
    except httpx.TransportError:
        return "disconnected"
    return str(answer.status_code)
