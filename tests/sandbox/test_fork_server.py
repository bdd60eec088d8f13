"""Runs forked by the worker's fork server (:mod:`rewardkit.sandbox.runtime.fork_server`).

Where a run has a cgroup and a pid namespace of its own, its first process is
forked by a small helper of the worker rather than by the worker: its cost
does not depend on its parent, and the worker's pages are no longer copied for
every run.  What must hold: the run is the server's child and holds none of the
server's descriptors; the server ends with its worker, and its runs with it; a
server that dies costs at most one job an infrastructure fault, never a verdict; a
worker whose server cannot start forks its runs itself and says so.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future

import psutil
import pytest
from killer import children_with, command_line
from leftovers import FORK_SERVER_MARK, Snapshot, assert_clean
from test_worker_faults import (
    ADD,
    ADD_CODE,
    SUITES,
    assert_fault,
    end_process,
    find_process,
    gone,
    new_tag,
    run_in_background,
    sleeper,
    worker_of,
)

from rewardkit.sandbox import ExecutionResult, Sandbox, Status, TestSuite

# the descriptors a module run's first process holds: stdin, stdout, stderr, requests, replies
FDS = TestSuite.from_dict({"mode": "call", "entry_point": "fds",
                           "cases": [{"args": [], "expected": [0, 1, 2, 3, 4]}]})
FDS_CODE = ("import os\n"
            "def fds():  # the descriptor listdir held is closed by the time exists() looks\n"
            "    names = os.listdir('/proc/self/fd')\n"
            "    return sorted(int(n) for n in names if os.path.exists(f'/proc/self/fd/{n}'))\n")
POLICY = TestSuite.from_dict({"mode": "call", "entry_point": "policy",
                              "cases": [{"args": [], "expected": os.SCHED_OTHER}]})
POLICY_CODE = "import os\ndef policy():\n    return os.sched_getscheduler(0)\n"


@contextlib.contextmanager
def forking_sandbox() -> Iterator[Sandbox]:
    """A one-worker local sandbox whose runs a fork server forks (skip where they cannot be)."""
    with Sandbox(workers=1) as sb:
        forked_by = sb.isolation.get("runs_forked_by")
        if forked_by != "fork server":
            pytest.skip(f"runs are forked by the {forked_by} here (no cgroup or pid namespace per run)")
        yield sb


@contextlib.contextmanager
def sleeping_solution(sb: Sandbox) -> Iterator[tuple[psutil.Process, Future[ExecutionResult]]]:
    """A call job whose solution sleeps, run in the background: the solution's process and the
    job's future.  On the way out the solution is ended and the job waited for."""
    tag = new_tag()
    pool, future = run_in_background(sb, sleeper("call", tag), SUITES["call"])
    try:
        solution = find_process(tag)
        try:
            yield solution, future
        finally:
            end_process(solution)
            future.result(timeout=60)
    finally:
        pool.shutdown()


def fork_server_of(worker: psutil.Process) -> psutil.Process:
    """The worker's fork server."""
    servers = [p for p in worker.children() if FORK_SERVER_MARK in " ".join(command_line(p))]
    assert len(servers) == 1, f"worker {worker.pid} has {len(servers)} fork servers"
    return servers[0]


def test_a_worker_defers_to_its_runs_and_the_runs_are_sched_other() -> None:
    """The worker is SCHED_BATCH, so that a reply frame per call does not hand it the run's CPU
    each time; the runs, which inherit that, go back to SCHED_OTHER as they start."""
    with Sandbox(workers=1) as sb:
        policy = sb.run(POLICY_CODE, POLICY)
        assert policy.passed, policy.feedback
        with sleeping_solution(sb) as (solution, _):
            assert os.sched_getscheduler(worker_of(solution).pid) == os.SCHED_BATCH
            assert os.sched_getscheduler(solution.pid) == os.SCHED_OTHER


def test_a_run_is_the_fork_servers_child_and_holds_only_its_own_pipes() -> None:
    with forking_sandbox() as sb:
        held = sb.run(FDS_CODE, FDS)
        assert held.passed, held.feedback
        with sleeping_solution(sb) as (solution, future):
            server = fork_server_of(worker_of(solution))
            assert solution.ppid() == server.pid
            assert server.uids().real == 0 and solution.uids().real != 0
            solution.kill()
            assert not future.result(timeout=60).passed


def test_the_fork_server_and_its_runs_end_with_their_worker() -> None:
    before, tag = Snapshot.take(), new_tag()
    with forking_sandbox() as sb:
        pool, future = run_in_background(sb, sleeper("call", tag), SUITES["call"])
        solution = find_process(tag)
        try:
            worker = worker_of(solution)
            server = fork_server_of(worker)
            worker.send_signal(signal.SIGKILL)
            assert_fault(future.result(timeout=60), "call")
            assert gone(server) and gone(solution)
        finally:
            pool.shutdown()
            end_process(solution)
        assert sb.run(ADD_CODE, ADD).passed  # on a fresh worker, with a fresh fork server
    assert_clean(before)


def test_a_fork_server_killed_between_jobs_costs_no_job() -> None:
    """The next job's first request fails before the job has begun: it is tried again on a
    fresh worker, and passes."""
    others = {p.pid for p in children_with("runtime.worker import main")}  # other tests' sandboxes
    with forking_sandbox() as sb:
        assert sb.run(ADD_CODE, ADD).passed
        [worker] = [p for p in children_with("runtime.worker import main") if p.pid not in others]
        server = fork_server_of(worker)
        server.kill()
        assert gone(server)
        result = sb.run(ADD_CODE, ADD)
        assert result.passed, result.feedback


def test_a_fork_server_killed_during_a_run_is_the_infrastructures_fault() -> None:
    """The run dies with its server; the job is ``sandbox_error`` (no partial score, no verdict
    on the code) and the next job runs on a fresh worker."""
    tag = new_tag()
    with forking_sandbox() as sb:
        pool, future = run_in_background(sb, sleeper("call", tag), SUITES["call"])
        solution = find_process(tag)
        try:
            fork_server_of(worker_of(solution)).kill()
            result = future.result(timeout=60)
        finally:
            pool.shutdown()
            end_process(solution)
        assert result.status == Status.SANDBOX_ERROR, (result.status, result.feedback)
        assert "fork server" in result.feedback, result.feedback
        assert sb.run(ADD_CODE, ADD).passed


# Drives a real worker in a process of its own (it enters namespaces) whose fork server cannot start.
REFUSED = """
import json
from rewardkit.sandbox.backends.local import SOURCES_DIR
from rewardkit.sandbox.packages import package_paths
from rewardkit.sandbox.runtime import fork_client, protocol, worker

def refuse(iso):
    raise fork_client.ForkServerError("refused for the test")

worker.ForkClient = refuse
w = worker.Worker("", package_paths(["sortedcontainers"]), [SOURCES_DIR])
ADD_POLICY = "import os\\ndef add(a, b):\\n    return a + b + os.sched_getscheduler(0)\\n"
w.handle({"op": "begin", "code": ADD_POLICY, "kind": "module", "limits": {"time_s": 5}})
reply = w.handle({"op": "call", "name": "add", "args": protocol.encode_value([1, 2])})  # 3 + SCHED_OTHER
w.handle({"op": "end"})
w.accounting.close()
print(json.dumps({"by": w.iso.runs_forked_by, "notes": w.iso.notes, "value": reply.get("value"),
                  "accounting": w.accounting.method, "pid_ns": w.iso.pid_namespace_per_run}))
"""


def test_a_worker_whose_fork_server_cannot_start_forks_its_runs_itself() -> None:
    done = subprocess.run([sys.executable, "-c", REFUSED], capture_output=True, text=True,
                          timeout=120, check=True)  # nosec B603 - fixed argv
    out = json.loads(done.stdout.splitlines()[-1])
    if not (out["accounting"].startswith("cgroup") and out["pid_ns"]):
        pytest.skip(f"no fork server here in any case ({out['accounting']}, pid namespaces {out['pid_ns']})")
    assert out["by"] == "worker" and out["value"] == 3, out
    assert any("no fork server (refused for the test)" in note for note in out["notes"]), out
