"""``RemoteReward`` and the verl functions against a service that is restarted mid-batch.

A real ``rewardkit serve`` runs on a fixed loopback port; it is killed
(SIGKILL) or stopped (SIGTERM) while a batch is in flight, and started again
on the same port after a delay.  Clients reach it through :class:`Relay`, a
TCP relay on loopback that records every HTTP request (the attempts a client
made) and what became of it, and that can play a fault instead of forwarding
one: drop the connection, cut the answer, answer 503, hold the request past
the client's timeout, answer with something that is not a score.

Every sample must come back with exactly the value the in-process reward
computes, or None where the client gave up; never another number.  The
batches use ``afterburner`` with a failing baseline, so every value is exact
(efficiency is 0); one completion sleeps until the time limit, so its batch is
in flight for at least ``TIME_LIMIT_S`` seconds however busy the machine is.
"""

from __future__ import annotations

import json
import logging
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import httpx
import pytest
from serve_helpers import TOKEN, Service, free_port, stop_process

from rewardkit.client import RemoteReward, ServiceUnavailable, compute_score, compute_score_batch
from rewardkit.rewards import RewardResult, afterburner
from rewardkit.rewards.verl import verl_result
from rewardkit.sandbox import Limits, Sandbox

TIME_LIMIT_S = 1.0
RETRIES, BACKOFF_S = 7, 0.25  # up to 31.75 s of waiting: a restart takes 1-2 s here, 4-6 s with the CPUs busy
RESTART_DELAY_S = 0.5
LOOP_BATCHES = (1, 2, 3, 4, 5, 7, 9, 12)  # the batches that are in flight when the service goes down
PLAIN_BATCHES = (6, 8, 10, 11, 20, 21, 30, 31, 40)


# -- batches and their in-process values --------------------------------------------------------------
def batch(i: int) -> tuple[list[str], dict[str, list[Any]]]:
    """Completions for problem ``i`` (print ``i``): right, wrong, right but ill-formatted, and for the
    batches of ``LOOP_BATCHES`` one that sleeps until the time limit."""
    completions = [f"<thinking>{i}</thinking>\n<solution>\n```python\nprint({i})\n```\n</solution>",
                   f"<thinking>{i}</thinking>\n<solution>\n```python\nprint({i + 1})\n```\n</solution>",
                   f"print({i})"]
    if i in LOOP_BATCHES:
        completions.append("<thinking>wait</thinking>\n<solution>\n```python\nimport time\n"
                           "while True:\n    time.sleep(1)\n```\n</solution>")
    tests = {"mode": "stdio", "cases": [{"input": "", "output": f"{i}\n"}]}
    size = len(completions)
    return completions, {"tests": [tests] * size, "baseline_code": ["print(-1)"] * size}


def verl_infos(columns: dict[str, list[Any]]) -> list[dict[str, Any]]:
    return [{"baseline_code": code} for code in columns["baseline_code"]]


@pytest.fixture(scope="module")
def local() -> dict[int, list[RewardResult]]:
    """Every batch's results as the in-process reward computes them, with the service's limits."""
    indices = LOOP_BATCHES + PLAIN_BATCHES
    completions: list[str] = []
    columns: dict[str, list[Any]] = {"tests": [], "baseline_code": []}
    for i in indices:
        texts, cols = batch(i)
        completions += texts
        for key in columns:
            columns[key] += cols[key]
    with Sandbox(workers=len(LOOP_BATCHES), limits=Limits(time_s=TIME_LIMIT_S), repeats=3) as sandbox:
        results = afterburner(sandbox=sandbox).evaluate(completions, columns)
    by_batch, start = {}, 0
    for i in indices:
        size = len(batch(i)[0])
        by_batch[i], start = results[start:start + size], start + size
    assert all(r.value is not None for r in results)
    return by_batch


def values(results: list[RewardResult]) -> list[float | None]:
    return [r.value for r in results]


def by_component(results: list[RewardResult]) -> list[list[float | None]]:
    return [[r.components[name] for r in results] for name in results[0].components]


# -- the service, on a port of its own ----------------------------------------------------------------
class Restartable:
    """``rewardkit serve`` on a fixed port, signalled and started again on that port."""

    def __init__(self, port: int, logs: Path) -> None:
        self.port, self.logs = port, logs
        self.url = f"http://127.0.0.1:{port}"
        self.starts = 0
        self.up_at = 0.0  # when the last start answered /health
        self.process: subprocess.Popen[bytes] | None = None
        self._restarter: threading.Thread | None = None
        self._failure: BaseException | None = None

    @property
    def log(self) -> Path:
        """The log of the running (or last) process."""
        return self.logs / f"service-{self.starts}.log"

    def start(self) -> None:
        """Start the service and wait until ``/health`` answers."""
        self.starts += 1
        command = [sys.executable, "-m", "rewardkit", "serve", "--port", str(self.port), "--token", TOKEN,
                   "--workers", "2", "--time-limit", str(TIME_LIMIT_S), "--log-level", "info",
                   "--access-log"]
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the service exited ({self.process.returncode}): {self.log.read_text()}")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    self.up_at = time.monotonic()
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(f"the service did not answer within 60 s: {self.log.read_text()}")

    def send(self, sig: signal.Signals) -> None:
        assert self.process is not None
        self.process.send_signal(sig)

    def restart_after(self, delay: float) -> None:
        """In the background: wait for the process to end, then ``delay`` seconds, then start again."""
        def again() -> None:
            try:
                assert self.process is not None
                self.process.wait(timeout=60)
                time.sleep(delay)
                self.start()
            except BaseException as exc:  # re-raised by join()
                self._failure = exc

        self._restarter = threading.Thread(target=again, daemon=True)
        self._restarter.start()

    def join(self) -> None:
        """Wait for a restart under way; raise what made it fail."""
        if self._restarter is not None:
            self._restarter.join(timeout=90)
            self._restarter = None
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def ensure_up(self) -> None:
        self.join()
        if self.process is None or self.process.poll() is not None:
            self.start()

    def stop(self) -> None:
        self.join()
        if self.process is not None and self.process.poll() is None:
            stop_process(self.process)


@pytest.fixture(scope="module")
def restartable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Restartable]:
    service = Restartable(free_port(), tmp_path_factory.mktemp("restart"))
    service.start()
    yield service
    service.stop()


@pytest.fixture
def own(restartable: Restartable) -> Restartable:
    """The module's service, running."""
    restartable.ensure_up()
    return restartable


# -- the relay ------------------------------------------------------------------------------------------
@dataclass
class Attempt:
    """One HTTP request through the relay, and what became of it."""

    connection: int
    method: str
    path: str
    batch: int | None  # the batch scored (the expected output of its tests), for /score
    start: float
    end: float = 0.0
    outcome: str = ""  # the status forwarded, or: refused, closed, dropped, cut, held, malformed


def read_message(reader: BinaryIO) -> bytes | None:
    """One HTTP/1.1 message (head, then ``Content-Length`` bytes of body); None at the end of the stream."""
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = reader.readline()
        if not line:
            return None
        head += line
    match = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    size = int(match.group(1)) if match else 0
    body = reader.read(size)
    return head + body if len(body) == size else None


def http_answer(status: int, data: dict[str, Any]) -> bytes:
    body = json.dumps(data).encode()
    return (f"HTTP/1.1 {status} {'OK' if status == 200 else 'Service Unavailable'}\r\n"
            f"content-type: application/json\r\ncontent-length: {len(body)}\r\n\r\n").encode() + body


def reset(sock: socket.socket) -> None:
    """Close with a TCP reset rather than an orderly end."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class Relay:
    """A loopback relay in front of the service: one upstream connection per client connection.

    ``faults`` are played, in turn, instead of forwarding POST requests:
    ``drop`` (close without an answer), ``cut`` (forward, then send half the
    answer and reset), ``503``, ``hold`` (no answer for ``hold_s``, then a
    wrong score of the right length), ``malformed`` (a score of one sample).
    An upstream that refuses the connection is passed on as a reset; one that
    closes it, as a close.
    """

    def __init__(self, upstream_port: int, faults: list[str] | None = None, hold_s: float = 0.0) -> None:
        self.upstream_port, self.faults, self.hold_s = upstream_port, list(faults or []), hold_s
        self.attempts: list[Attempt] = []
        self.forwarded = 0
        self.changed = threading.Condition()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def wait_forwarded(self, count: int, timeout: float = 60) -> None:
        """Wait until ``count`` requests in all have been passed to the service."""
        with self.changed:
            assert self.changed.wait_for(lambda: self.forwarded >= count, timeout), "no request came"

    def posts(self) -> list[Attempt]:
        """The POST requests so far, each once it has an outcome."""
        with self.changed:
            assert self.changed.wait_for(lambda: all(a.outcome for a in self.attempts), 60), self.attempts
            return [a for a in self.attempts if a.method == "POST"]

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        for number in range(1_000_000):
            try:
                client, _ = self._listener.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(client, number), daemon=True).start()

    def _done(self, attempt: Attempt, outcome: str) -> None:
        with self.changed:
            attempt.end, attempt.outcome = time.monotonic(), outcome
            self.changed.notify_all()

    def _serve(self, client: socket.socket, number: int) -> None:
        upstream: socket.socket | None = None
        try:
            reader, upstream_reader = client.makefile("rb"), None
            while True:
                if upstream is not None:  # between requests: pass on the service closing the connection
                    readable, _, _ = select.select([client, upstream], [], [])
                    if upstream in readable:
                        return
                if (request := read_message(reader)) is None:
                    return
                method, path = request.decode("latin-1").split(" ", 2)[:2]
                body = json.loads(request.split(b"\r\n\r\n", 1)[1] or b"{}")
                tests = body.get("columns", {}).get("tests")
                scored = int(tests[0]["cases"][0]["output"]) if tests else None
                attempt = Attempt(number, method, path, scored, time.monotonic())
                with self.changed:
                    self.attempts.append(attempt)
                    fault = self.faults.pop(0) if method == "POST" and self.faults else None
                if fault == "503":
                    client.sendall(http_answer(503, {"error": "the service is stopping", "status": 503}))
                    self._done(attempt, "503")
                    continue
                if fault == "malformed":
                    client.sendall(http_answer(200, {"rewards": [0.5], "components": {}, "info": [{}]}))
                    self._done(attempt, "malformed")
                    continue
                if fault == "drop":
                    self._done(attempt, "dropped")
                    return
                if fault == "hold":  # then a wrong answer, late, on the connection the client gave up
                    time.sleep(self.hold_s)
                    self._done(attempt, "held")
                    size = len(body["completions"])
                    client.sendall(http_answer(200, {"rewards": [0.123] * size, "components": {},
                                                     "info": [{}] * size}))
                    return
                if upstream is None:
                    try:
                        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
                    except ConnectionRefusedError:
                        self._done(attempt, "refused")
                        reset(client)
                        return
                    upstream_reader = upstream.makefile("rb")
                upstream.sendall(request)
                with self.changed:
                    self.forwarded += 1
                    self.changed.notify_all()
                assert upstream_reader is not None
                try:
                    answer = read_message(upstream_reader)
                except OSError:
                    answer = None
                if answer is None:
                    self._done(attempt, "closed")
                    return
                if fault == "cut":
                    client.sendall(answer[:len(answer) // 2])
                    self._done(attempt, "cut")
                    reset(client)
                    return
                client.sendall(answer)
                self._done(attempt, answer.split(b" ", 2)[1].decode())
                if b"\r\nconnection: close\r\n" in answer.split(b"\r\n\r\n", 1)[0].lower() + b"\r\n":
                    return
        except OSError:  # the client went away
            pass
        finally:
            client.close()
            if upstream is not None:
                upstream.close()


@pytest.fixture
def relay_to(request: pytest.FixtureRequest) -> Callable[..., Relay]:
    """Relays made by the test, closed after it."""
    def make(upstream_url: str, faults: list[str] | None = None, hold_s: float = 0.0) -> Relay:
        relay = Relay(int(upstream_url.rsplit(":", 1)[1]), faults, hold_s)
        request.addfinalizer(relay.close)
        return relay

    return make


# -- restarts -------------------------------------------------------------------------------------------
@dataclass
class Phase:
    """What one call through a restart gave."""

    result: Any
    returned_s: float  # from the signal to the call's return
    back_s: float  # from the signal to the new service's first answer to /health
    attempts: list[Attempt]


def through(service: Restartable, relay: Relay, sig: signal.Signals, in_flight: dict[int, Callable[[], Any]],
            after: dict[int, Callable[[], Any]] | None = None) -> dict[int, Phase]:
    """The calls ``in_flight`` (by the batch they score), each in a thread of its own, until their
    requests have reached the service; then ``sig``; then the calls ``after``.  The service starts
    again ``RESTART_DELAY_S`` after it ended."""
    def timed(call: Callable[[], Any]) -> tuple[Any, float]:
        return call(), time.monotonic()

    after = after or {}
    forwarded = relay.forwarded
    with ThreadPoolExecutor(len(in_flight) + len(after)) as pool:
        futures = {i: pool.submit(timed, call) for i, call in in_flight.items()}
        relay.wait_forwarded(forwarded + len(in_flight))
        time.sleep(0.2)  # the service is running the batches (they sleep for TIME_LIMIT_S)
        signalled = time.monotonic()
        service.send(sig)
        service.restart_after(RESTART_DELAY_S)
        futures |= {i: pool.submit(timed, call) for i, call in after.items()}
        returned = {i: future.result(timeout=120) for i, future in futures.items()}
    service.join()
    attempts = relay.posts()
    return {i: Phase(result, at - signalled, service.up_at - signalled, [a for a in attempts if a.batch == i])
            for i, (result, at) in returned.items()}


def calls(remote: RemoteReward, url: str) -> dict[int, Callable[[], Any]]:
    """Batch ``i`` scored by ``1 + (i - 1) % 4``: the reward as TRL calls it, its component functions
    one after the other, verl's ``compute_score_batch``, verl's ``compute_score`` of one sample."""
    options: dict[str, Any] = {"url": url, "token": TOKEN, "retries": RETRIES, "backoff": BACKOFF_S,
                               "preset": "afterburner"}
    functions = remote.functions()
    made: dict[int, Callable[[], Any]] = {}
    for i in range(1, 9):
        texts, columns = batch(i)
        made[i] = [lambda t=texts, c=columns: remote(t, **c),
                   lambda t=texts, c=columns: [f(t, **c) for f in functions],
                   lambda t=texts, c=columns: compute_score_batch(["mini"] * len(t), t, c["tests"],
                                                                  verl_infos(c), **options),
                   lambda t=texts, c=columns: compute_score("mini", t[-1], c["tests"][-1],
                                                            verl_infos(c)[-1], **options)][(i - 1) % 4]
    return made


def _verl(results: list[RewardResult]) -> list[dict[str, float]]:
    return [verl_result(r) for r in results]


def _last_verl(results: list[RewardResult]) -> dict[str, float]:
    return verl_result(results[-1])


# what each call of calls() returns, from the in-process results
EXPECTED: dict[int, Callable[[list[RewardResult]], Any]] = {
    i: [values, by_component, _verl, _last_verl][(i - 1) % 4] for i in range(1, 9)}
OUTCOMES = ("200", "503", "refused", "closed")


def check_attempts(attempts: list[Attempt], first: set[str]) -> None:
    """Bounded, each a POST /score, failures (the first one of ``first``) until one answered 200."""
    assert 1 <= len(attempts) <= RETRIES + 1, attempts
    assert all((a.method, a.path) == ("POST", "/score") for a in attempts), attempts
    assert attempts[0].outcome in first, attempts
    assert {a.outcome for a in attempts[1:-1]} <= set(OUTCOMES) - {"200"}, attempts
    assert attempts[-1].outcome == "200", attempts


def report(name: str, phases: dict[int, Phase]) -> None:
    for i, phase in phases.items():
        outcomes = ", ".join(a.outcome for a in phase.attempts)
        print(f"{name} batch {i}: {len(phase.attempts)} attempts ({outcomes}); after the signal, the "
              f"service is back in {phase.back_s:.2f} s, the call returns in {phase.returned_s:.2f} s")


def test_killed_mid_batch_then_restarted(own: Restartable, relay_to: Callable[..., Relay],
                                         local: dict[int, list[RewardResult]]) -> None:
    relay, starts = relay_to(own.url), own.starts
    with RemoteReward(relay.url, "afterburner", token=TOKEN, retries=RETRIES, backoff=BACKOFF_S) as remote:
        phases: dict[int, Phase] = {}
        made = calls(remote, relay.url)
        for pair in ((1, 2), (3, 4)):
            phases |= through(own, relay, signal.SIGKILL, {i: made[i] for i in pair})
    for i, phase in phases.items():  # the batch in flight was cut by the kill, then sent again
        assert phase.result == EXPECTED[i](local[i]), i
        check_attempts(phase.attempts, first={"closed"})
    assert own.starts == starts + 2
    report("SIGKILL", phases)


def test_stopped_mid_batch_then_restarted(own: Restartable, relay_to: Callable[..., Relay],
                                          local: dict[int, list[RewardResult]]) -> None:
    """A graceful stop answers the batch in flight (or 503 if it cannot finish it); the next batch,
    sent while the service is down, waits for the new one."""
    relay = relay_to(own.url)
    with RemoteReward(relay.url, "afterburner", token=TOKEN, retries=RETRIES, backoff=BACKOFF_S) as remote:
        made = calls(remote, relay.url)
        phases = through(own, relay, signal.SIGTERM, {5: made[5], 7: made[7]}, {6: made[6], 8: made[8]})
    for i, phase in phases.items():
        assert phase.result == EXPECTED[i](local[i]), i
        # in flight: answered, or 503 for work the stopping service dropped; sent after the signal:
        # whatever the stopping service did with it, then refused until the new one is up
        check_attempts(phase.attempts, first={"200", "503"} if i in (5, 7) else set(OUTCOMES))
    report("SIGTERM", phases)


def kill_during(service: Restartable, relay: Relay, call: Callable[[], Any]) -> tuple[Any, float]:
    """``call()`` in a thread; SIGKILL once its request has reached the service, which stays down.
    The call's result, and the seconds from the kill to its return."""
    forwarded = relay.forwarded
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(call)
        relay.wait_forwarded(forwarded + 1)
        service.send(signal.SIGKILL)
        killed = time.monotonic()
        result = future.result(timeout=60)
    return result, time.monotonic() - killed


def test_component_functions_leave_a_failed_batch_out_whole(own: Restartable, relay_to: Callable[..., Relay],
                                                           local: dict[int, list[RewardResult]]) -> None:
    """The first function's request failed: the others give None for that batch too, even once the
    service is back (TRL would otherwise train on part of the reward)."""
    relay = relay_to(own.url)
    completions, columns = batch(9)
    with RemoteReward(relay.url, "afterburner", token=TOKEN, retries=2, backoff=0.1) as remote:
        first, *others = remote.functions()
        left_out = [None] * len(completions)
        assert kill_during(own, relay, lambda: first(completions, **columns))[0] == left_out
        own.start()
        assert [f(completions, **columns) for f in others] == [left_out] * len(others)
        assert [a.outcome for a in relay.posts()] == ["closed", "refused", "refused"]
        plain, plain_columns = batch(10)
        assert [f(plain, **plain_columns) for f in (first, *others)] == by_component(local[10])
        assert [a.outcome for a in relay.posts()] == ["closed", "refused", "refused", "200"]


def test_a_service_that_does_not_come_back(own: Restartable, relay_to: Callable[..., Relay],
                                           caplog: pytest.LogCaptureFixture) -> None:
    """None for every sample after a bounded time and a warning; verl's functions raise, saying why."""
    relay = relay_to(own.url)
    completions, columns = batch(12)
    with RemoteReward(relay.url, "afterburner", token=TOKEN, retries=2, backoff=0.1) as remote:
        with caplog.at_level(logging.WARNING, "rewardkit.client"):
            result, gave_up_s = kill_during(own, relay, lambda: remote(completions, **columns))
        assert result == [None] * len(completions)
        assert gave_up_s < 0.1 + 0.2 + 5  # the waits, and time enough for three refusals
        assert "failed 3 times" in caplog.text and "left out (None)" in caplog.text
        with pytest.raises(ServiceUnavailable, match="failed 3 times"):
            remote.results(completions, **columns)
    options: dict[str, Any] = {"url": relay.url, "token": TOKEN, "retries": 1, "backoff": 0.1,
                               "preset": "afterburner"}
    with pytest.raises(ServiceUnavailable, match=r"(?s)verl needs a number for every sample.*failed 2 times"):
        compute_score_batch(["mini"] * len(completions), completions, columns["tests"], verl_infos(columns),
                            **options)
    with pytest.raises(ServiceUnavailable, match="verl needs a number"):
        compute_score("mini", completions[0], columns["tests"][0], **options)
    assert [a.outcome for a in relay.posts()] == ["closed"] + ["refused"] * (2 + 3 + 2 + 2)


def test_refused_until_the_service_is_back(own: Restartable, local: dict[int, list[RewardResult]],
                                           caplog: pytest.LogCaptureFixture) -> None:
    """Straight to the service's port (no relay): connections refused while it is down, then the
    answer of the new process, which saw one request."""
    completions, columns = batch(11)
    own.send(signal.SIGKILL)
    assert own.process is not None and own.process.wait(timeout=30) == -signal.SIGKILL
    own.restart_after(1.0)
    started = time.monotonic()
    with RemoteReward(own.url, "afterburner", token=TOKEN, retries=RETRIES, backoff=BACKOFF_S) as remote, \
            caplog.at_level(logging.WARNING, "rewardkit.client"):
        assert remote(completions, **columns) == values(local[11])
    elapsed = time.monotonic() - started
    own.join()
    retries = [r.getMessage() for r in caplog.records if "attempt" in r.getMessage()]
    assert 1 <= len(retries) <= RETRIES and all("ConnectError" in m for m in retries), retries
    assert own.log.read_text().count('"POST /score HTTP/1.1" 200') == 1
    print(f"refused: {len(retries) + 1} attempts, answered after {elapsed:.2f} s")


# -- fault classes, on the session's service ---------------------------------------------------------------
def test_each_fault_is_tried_again_with_backoff(service: Service, relay_to: Callable[..., Relay],
                                                local: dict[int, list[RewardResult]]) -> None:
    """Dropped, cut mid-answer, 503, timed out: each tried again after a growing wait, on a new
    connection where the last one failed; the late wrong answer of the held request is never read."""
    timeout, backoff = 1.0, 0.1
    # the held request's wrong answer comes while the last attempt waits for its own
    relay = relay_to(service.url, ["drop", "cut", "503", "hold"], hold_s=timeout + 8 * backoff + 0.1)
    completions, columns = batch(20)
    with RemoteReward(relay.url, "afterburner", token=service.token, retries=4, backoff=backoff,
                      timeout=timeout) as remote:
        assert remote(completions, **columns) == values(local[20])
        other, other_columns = batch(21)
        assert remote(other, **other_columns) == values(local[21])
    attempts = relay.posts()
    assert [a.outcome for a in attempts] == ["dropped", "cut", "503", "held", "200", "200"]
    dropped, cut, unavailable, held, answered, next_batch = attempts
    assert dropped.connection != cut.connection != unavailable.connection  # a failed one is not used again
    assert held.connection == unavailable.connection  # after a whole 503 answer, it may be
    assert answered.connection != held.connection
    assert next_batch.connection == answered.connection
    for k, (before, after) in enumerate([(dropped, cut), (cut, unavailable), (unavailable, held)]):
        assert after.start - before.end >= backoff * 2 ** k
    assert answered.start - held.start >= 8 * backoff  # and the timeout, from a moment before held.start


def test_concurrent_batches_keep_their_own_answers(service: Service, relay_to: Callable[..., Relay],
                                                   local: dict[int, list[RewardResult]]) -> None:
    """Two batches at once on one client (as verl's threads share one), connections failing under
    both: each gets its own values."""
    relay = relay_to(service.url, ["cut", "drop", "cut", "drop"])

    def send(i: int) -> list[float | None]:
        completions, columns = batch(i)
        return remote(completions, **columns)

    with RemoteReward(relay.url, "afterburner", token=service.token, retries=4, backoff=0.05) as remote, \
            ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(send, (30, 31)))
    assert answers == [values(local[30]), values(local[31])]
    assert sorted(a.outcome for a in relay.posts()) == ["200", "200", "cut", "cut", "dropped", "dropped"]


def test_an_answer_that_is_not_a_score_of_the_batch(service: Service, relay_to: Callable[..., Relay],
                                                    local: dict[int, list[RewardResult]],
                                                    caplog: pytest.LogCaptureFixture) -> None:
    relay = relay_to(service.url, ["malformed", "malformed"])
    completions, columns = batch(40)
    with RemoteReward(relay.url, "afterburner", token=service.token, retries=3, backoff=0.05) as remote:
        with caplog.at_level(logging.WARNING, "rewardkit.client"):
            assert remote(completions, **columns) == [None] * len(completions)
        assert "other than a score of the 3 completions" in caplog.text
        with pytest.raises(ServiceUnavailable, match="other than a score"):
            remote.results(completions, **columns)
        assert remote(completions, **columns) == values(local[40])
    assert [a.outcome for a in relay.posts()] == ["malformed", "malformed", "200"]


def test_rejected_requests_are_not_tried_again(service: Service, relay_to: Callable[..., Relay]) -> None:
    relay = relay_to(service.url)
    completions, columns = batch(6)
    with RemoteReward(relay.url, "best", token=service.token, backoff=0.05) as unknown, \
            pytest.raises(ValueError, match="HTTP 400"):
        unknown(completions, **columns)
    with RemoteReward(relay.url, "afterburner", token="wrong", backoff=0.05) as impostor, \
            pytest.raises(ValueError, match="HTTP 401"):
        impostor(completions, **columns)
    with RemoteReward(relay.url, "afterburner", token=service.token, backoff=0.05) as remote, \
            pytest.raises(ValueError, match="HTTP 413"):
        remote(completions * 30, **{key: column * 30 for key, column in columns.items()})
    assert [a.outcome for a in relay.posts()] == ["400", "401", "413"]
