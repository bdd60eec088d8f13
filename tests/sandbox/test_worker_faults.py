"""A worker's fault is the infrastructure's, never an exception or a verdict on the code (SPEC §3.1).

A worker killed, stopped, or answering with an oversized or malformed frame
gives ``sandbox_error`` with a feedback naming the fault; the worker is
replaced and the next job runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle  # nosec B403 - pickles our own exception, in this test
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import psutil
import pytest
from killer import children_with, command_line
from test_verdicts import peak_growth_mb

from rewardkit.sandbox import ExecutionResult, Limits, Sandbox, Status, TestSuite, judge
from rewardkit.sandbox.backends.docker import check_docker
from rewardkit.sandbox.backends.process import WorkerGone, WorkerProcess
from rewardkit.sandbox.link import WorkerFault
from rewardkit.sandbox.runtime.protocol import ProtocolError
from rewardkit.sandbox.sandbox import PoolExecutor

ADD = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "2 3\n", "output": "5\n"}]})
ADD_CODE = "a, b = map(int, input().split())\nprint(a + b)\n"
SLOW = Limits(time_s=30)
SUITES = {
    "stdio": TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "1\n"}]}),
    "call": TestSuite.from_dict({"mode": "call", "entry_point": "f",
                                 "cases": [{"args": [], "expected": 1}]}),
    "script": TestSuite.from_dict({"mode": "script", "entry_point": "f", "check":
                                   "def check(candidate):\n    try:\n        got = candidate()\n"
                                   "    finally:\n        pass\n    assert got == 1\n"}),
}
OP = {"stdio": "run", "call": "call", "script": "call"}


def sleeper(mode: str, tag: str) -> str:
    """A solution that names its process ``tag`` (so the test can find it) and sleeps."""
    body = f"import ctypes, time\nctypes.CDLL(None).prctl(15, b'{tag}', 0, 0, 0)\ntime.sleep(30)\n"
    if mode == "stdio":
        return body + "print(1)\n"
    indented = "".join(f"    {line}\n" for line in body.splitlines())
    return f"def f():\n{indented}    return 1\n"


def new_tag() -> str:
    return f"rk-{uuid.uuid4().hex[:8]}"


def find_process(tag: str, timeout: float = 60.0) -> psutil.Process:
    """The process named ``tag``, once it exists."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in psutil.process_iter(["name"]):
            if process.info["name"] == tag:
                return process
        time.sleep(0.05)
    raise AssertionError(f"no process named {tag} appeared")


def worker_of(process: psutil.Process) -> psutil.Process:
    """The ancestor of ``process`` that this test process started: its sandbox worker."""
    while process.ppid() != os.getpid():
        parent = process.parent()
        assert parent is not None, "the solution does not run under a worker of this process"
        process = parent
    return process


def end_process(process: psutil.Process) -> None:
    """Kill a process the test caused, if it is still there (the solution of a killed worker)."""
    with contextlib.suppress(psutil.NoSuchProcess):
        process.kill()


def gone(process: psutil.Process, timeout: float = 10.0) -> bool:
    """Whether ``process`` ends (or is a zombie) within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def run_in_background(sb: Sandbox, code: str, suite: TestSuite) -> tuple[ThreadPoolExecutor, Future[Any]]:
    pool = ThreadPoolExecutor(1)
    return pool, pool.submit(sb.run, code, suite, "python", SLOW)


def assert_fault(result: ExecutionResult, op: str) -> None:
    assert result.status == Status.SANDBOX_ERROR, (result.status, result.feedback)
    assert f"sandbox worker fault during {op!r}" in result.feedback, result.feedback


# -- a real local worker, killed or stopped mid-job ---------------------------------------------
@pytest.mark.parametrize("mode", sorted(SUITES))
def test_a_killed_worker_gives_sandbox_error_and_the_next_job_runs(mode: str) -> None:
    tag = new_tag()
    with Sandbox(workers=1) as sb:
        pool, future = run_in_background(sb, sleeper(mode, tag), SUITES[mode])
        solution = find_process(tag)
        try:
            worker = worker_of(solution)
            worker.send_signal(signal.SIGKILL)
            result = future.result(timeout=60)
        finally:
            pool.shutdown()
            end_process(solution)
        assert_fault(result, OP[mode])
        assert gone(worker)
        assert sb.run(ADD_CODE, ADD).passed  # on a fresh worker


def test_workers_that_died_while_idle_are_replaced_before_a_job_is_given_to_them() -> None:
    """Every warm worker killed between jobs (the OOM killer, a stray kill): the next jobs run on
    new workers and pass, instead of being tried on one dead worker after another and ending
    ``sandbox_error`` (a sample a trainer then leaves out)."""
    def workers() -> set[psutil.Process]:
        return set(children_with("runtime.worker", recursive=True))

    others = workers()  # warm workers of other tests' sandboxes, left alone
    with Sandbox(workers=2) as sb:
        assert all(r.passed for r in sb.run_many([(ADD_CODE, ADD)] * 4))
        warm = list(workers() - others)
        assert len(warm) == 2, warm
        for worker in warm:
            worker.send_signal(signal.SIGKILL)
        psutil.wait_procs(warm, timeout=10)
        results = [sb.run(ADD_CODE, ADD) for _ in range(2)]  # one at a time: each sees both dead ones
        assert [r.status for r in results] == [Status.PASSED] * 2, [r.feedback for r in results]


def test_a_stopped_worker_gives_sandbox_error_within_the_reply_timeout(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(judge, "GRACE_S", 2.0)
    limits = Limits(time_s=2, compile_time_s=1)
    timeout = judge.reply_timeout(SUITES["call"], limits, "time")
    tag = new_tag()
    with Sandbox(workers=1) as sb, ThreadPoolExecutor(1) as pool:
        future = pool.submit(sb.run, sleeper("call", tag), SUITES["call"], "python", limits)
        solution = find_process(tag)
        worker = worker_of(solution)
        worker.send_signal(signal.SIGSTOP)
        stopped = time.monotonic()
        result = future.result(timeout=60)
        waited = time.monotonic() - stopped
        assert_fault(result, "call")
        assert "did not answer" in result.feedback
        assert waited < timeout + 5, f"the fault took {waited:.1f} s (reply timeout {timeout:.0f} s)"
        assert gone(worker) and gone(solution)  # the hung worker and what it ran are killed
        assert sb.run(ADD_CODE, ADD).passed


def test_run_many_keeps_the_other_results_when_a_worker_is_killed() -> None:
    tag = new_tag()
    jobs = [(sleeper("stdio", tag), SUITES["stdio"])] + [(ADD_CODE, ADD)] * 6
    with Sandbox(workers=2) as sb, ThreadPoolExecutor(1) as pool:
        future = pool.submit(sb.run_many, jobs, "python", SLOW)
        solution = find_process(tag)
        try:
            worker_of(solution).send_signal(signal.SIGKILL)
            results = future.result(timeout=60)
        finally:
            end_process(solution)
    assert_fault(results[0], "run")
    assert [r.status for r in results[1:]] == [Status.PASSED] * 6


# -- every transport error, at every step, is a fault ---------------------------------------------
PASSING_REPLIES: dict[str, dict[str, Any]] = {
    "pin": {"ok": True, "cpu": None},
    "begin": {"ok": True, "names": ["f"]},
    "run": {"ok": True, "outcome": "ok", "stdout": "1\n"},
    "call": {"ok": True, "value": 1},
    "end": {"ok": True},
}


class FakeWorker:
    """Answers like a worker whose job passes, except that the ``fail_op`` request raises ``error``
    (or, given a dict, is answered with it)."""

    def __init__(self, fail_op: str, error: Exception | dict[str, Any]) -> None:
        self.fail_op, self.error = fail_op, error
        self.alive = True

    def request(self, message: dict[str, Any], timeout: float, max_frame: int = 0) -> dict[str, Any]:
        op = message["op"]
        if op != self.fail_op:
            return PASSING_REPLIES[op]
        if isinstance(self.error, dict):  # a malformed reply
            return self.error
        raise self.error

    def close(self) -> None:
        self.alive = False


ERRORS = {
    "closed-file": ValueError("write to closed file"),
    "os-error": OSError(9, "Bad file descriptor"),
    "broken-pipe": BrokenPipeError(32, "Broken pipe"),
    "protocol": ProtocolError("peer closed the stream"),
    "json": json.JSONDecodeError("Expecting value", "\xff", 0),
    "worker-gone": WorkerGone("EOFError: the worker exited"),
}
STEPS = [("stdio", "begin"), ("stdio", "run"), ("stdio", "end"), ("call", "call"), ("call", "end"),
         ("script", "call")]
SWALLOWING = TestSuite.from_dict({"mode": "script", "entry_point": "f", "check": (
    "def check(candidate):\n    try:\n        candidate()\n    except Exception:\n        pass\n")})


def execute_on_fakes(suite: TestSuite, fail_op: str,
                     error: Exception | dict[str, Any]) -> tuple[ExecutionResult, list[FakeWorker]]:
    started: list[FakeWorker] = []

    def factory() -> FakeWorker:
        started.append(FakeWorker(fail_op, error))
        return started[-1]

    executor = PoolExecutor(factory, 1, fresh=False)  # type: ignore[arg-type]
    try:
        return executor.execute("", suite, "python", Limits(), "time"), started
    finally:
        executor.close()


@pytest.mark.parametrize("error", sorted(ERRORS))
@pytest.mark.parametrize(("mode", "op"), STEPS)
def test_any_transport_error_is_a_fault(mode: str, op: str, error: str) -> None:
    result, started = execute_on_fakes(SUITES[mode], op, ERRORS[error])
    assert_fault(result, op)
    assert type(ERRORS[error]).__name__ in result.feedback and result.tests_passed == 0
    assert not started[0].alive  # the failed worker is closed, not lent again
    assert len(started) == (2 if op == "begin" else 1)  # only a job that never began runs again


def test_a_fault_the_check_swallows_is_still_a_fault() -> None:
    result, _ = execute_on_fakes(SWALLOWING, "call", ValueError("write to closed file"))
    assert_fault(result, "call")


@pytest.mark.parametrize(("mode", "op", "reply"), [
    ("stdio", "run", {"ok": True}),
    ("stdio", "run", {"ok": True, "outcome": "ok", "stdout": "1\n", "time_s": "soon"}),
    ("call", "end", {"ok": True, "outcome": "ok", "peak_kb": [1]}),
    ("stdio", "begin", {"ok": False, "status": "on strike"}),
    ("call", "call", {"ok": False, "error": "worker error: RuntimeError('boom')", "worker_error": True}),
])
def test_a_reply_without_what_it_must_hold_is_a_fault(mode: str, op: str, reply: dict[str, Any]) -> None:
    result, _ = execute_on_fakes(SUITES[mode], op, reply)
    assert_fault(result, op)


# -- frames no worker may send ---------------------------------------------------------------------
FAKE_WORKER = r"""
import struct, sys, time
stdin, out = sys.stdin.buffer, sys.stdout.buffer
kind = sys.argv[1]

def read():
    (size,) = struct.unpack(">I", stdin.read(4))
    stdin.read(size)

def frame(body):
    return struct.pack(">I", len(body)) + body

def send(data):
    out.write(data)
    out.flush()

read(); send(frame(b'{"ok": true, "pid": 0}'))  # hello
read(); send(frame(b'{"ok": true, "cpu": null}'))  # pin
read()  # begin
if kind == "out-of-turn":  # a second frame that no request asked for, in the same write
    send(frame(b'{"ok": true}') + frame(b'{"ok": true, "outcome": "ok", "stdout": "1\\n"}'))
else:
    send(frame(b'{"ok": true}'))
read()  # run: the answer no worker may give
if kind == "huge":
    out.write(struct.pack(">I", 200_000_000))
    while True:
        out.write(b"x" * (1 << 20))
elif kind == "not-json":
    send(frame(b"\xff{not json"))
elif kind == "not-an-object":
    send(frame(b"[1, 2]"))
elif kind == "too-deep":
    send(frame(b'{"a": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"))
time.sleep(60)
"""
BAD_FRAMES = ("huge", "not-json", "not-an-object", "too-deep", "out-of-turn")


@pytest.mark.parametrize("kind", BAD_FRAMES)
def test_a_bad_frame_from_a_worker_is_a_fault_and_costs_no_memory(kind: str) -> None:
    started: list[WorkerProcess] = []

    def factory() -> WorkerProcess:
        started.append(WorkerProcess([sys.executable, "-c", FAKE_WORKER, kind], {}))
        return started[-1]

    executor = PoolExecutor(factory, 1, fresh=False)
    try:
        result, growth = peak_growth_mb(
            lambda: executor.execute("", SUITES["stdio"], "python", Limits(output_kb=1024), "time"))
    finally:
        executor.close()
    assert result.status == Status.SANDBOX_ERROR, (result.status, result.feedback)
    assert growth < 100, f"the parent grew by {growth:.0f} MB"
    assert len(started) == 1 and not started[0].alive  # killed, and not lent again


# -- docker: the container killed mid-job ------------------------------------------------------------
def docker_or_skip() -> None:
    if os.environ.get("REWARDKIT_SKIP_DOCKER") == "1":
        pytest.skip("REWARDKIT_SKIP_DOCKER=1: docker backend tests skipped on request")
    try:
        check_docker()
    except RuntimeError as exc:
        pytest.skip(f"docker is unavailable: {exc}")


def container_names(before: set[int]) -> list[str]:
    """The names of the worker containers that this process started since ``before``."""
    names = []
    for child in psutil.Process().children():
        argv = command_line(child)
        if child.pid not in before and "--name" in argv:
            names.append(argv[argv.index("--name") + 1])
    return names


@pytest.fixture
def warm_docker() -> Iterator[tuple[Sandbox, str]]:
    docker_or_skip()
    before = {p.pid for p in psutil.Process().children()}
    with Sandbox(backend="docker", workers=1, warm_pool=True) as sb:
        assert sb.run(ADD_CODE, ADD).passed
        (name,) = container_names(before)
        yield sb, name


@pytest.mark.docker
def test_a_killed_container_gives_sandbox_error_and_the_next_job_runs(
        warm_docker: tuple[Sandbox, str]) -> None:
    sb, name = warm_docker
    tag = new_tag()
    pool, future = run_in_background(sb, sleeper("stdio", tag), SUITES["stdio"])
    try:
        find_process(tag)
        subprocess.run(["docker", "kill", name], check=True, capture_output=True, timeout=60)
        result = future.result(timeout=120)
    finally:
        pool.shutdown()
    assert_fault(result, "run")
    assert sb.run(ADD_CODE, ADD).passed  # in a new container


def test_a_worker_fault_crosses_a_process_boundary_whole() -> None:
    """Ray sends a task's exception to the driver pickled: the fault must arrive as itself, with
    its message and ``started``, not as an exception Ray cannot rebuild (which hides the cause)."""
    fault = pickle.loads(pickle.dumps(WorkerFault("sandbox worker fault during 'run': EOFError", True)))
    assert isinstance(fault, WorkerFault) and fault.started is True
    assert str(fault) == "sandbox worker fault during 'run': EOFError"
