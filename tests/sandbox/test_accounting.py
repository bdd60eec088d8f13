"""Whole-tree accounting (sandbox/runtime/accounting.py), each method on real processes.

The cgroup methods need root and writable cgroup controllers; the sampled
fallback runs anywhere.  Each test starts a real process tree whose work is
done in a child the first process never waits for, and checks the run is
charged for it.
"""

from __future__ import annotations

import os
import resource
import sys
import time

import pytest

from rewardkit.sandbox import Sandbox
from rewardkit.sandbox.runtime import accounting

# The first process forks a child that allocates ~100 MB and spins ~0.3 s CPU,
# then exits at once without waiting; the child is what the run must pay for.
HIDDEN_WORK = (
    "import os, time\n"
    "if os.fork() == 0:\n"
    "    x = bytearray(100 * 1024 * 1024)\n"
    "    for i in range(0, len(x), 4096):\n"
    "        x[i] = 1\n"
    "    end = time.process_time() + 0.3\n"
    "    while time.process_time() < end:\n"
    "        pass\n"
    "    os._exit(0)\n"
    "time.sleep(0.6)\n"
)


def _spawn(group: accounting.RunGroup) -> int:
    """Fork a process that joins ``group`` and runs HIDDEN_WORK with a fresh interpreter."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            group.join()
            os.execv(sys.executable, [sys.executable, "-c", HIDDEN_WORK])
        finally:
            os._exit(127)
    group.started(pid)
    return pid


def _run(group: accounting.RunGroup) -> accounting.RunCost:
    pid = _spawn(group)
    while os.waitpid(pid, os.WNOHANG) == (0, 0):
        group.memory_kb()
        time.sleep(0.01)
    cost = group.finish(resource.getrusage(resource.RUSAGE_CHILDREN))
    group.close()
    return cost


def test_sampled_fallback_charges_an_unwaited_child() -> None:
    cost = _run(accounting.SampledRun())
    assert cost.cpu_s > 0.3 * 0.6, cost
    assert cost.peak_kb > 100 * 1024 * 0.6, cost


def _cgroup_accounting() -> accounting.Accounting:
    meter = accounting.detect(root=os.geteuid() == 0)
    if not meter.method.startswith("cgroup"):
        pytest.skip(f"no writable cgroup here ({meter.notes})")
    return meter


def test_cgroup_run_charges_the_whole_tree_and_cleans_up() -> None:
    meter = _cgroup_accounting()
    try:
        group = meter.new_run(memory_mb=512, processes=16)
        cost = _run(group)
        assert cost.cpu_s > 0.3 * 0.8 and cost.peak_kb > 100 * 1024 * 0.9, cost
        assert not cost.oom_killed
        paths = group.dirs.values() if isinstance(group, accounting.CgroupV1Run) else [group.dir]
        assert not any(os.path.exists(path) for path in paths)  # the run's groups are removed
    finally:
        meter.close()


def test_cgroup_memory_limit_holds_for_the_tree() -> None:
    meter = _cgroup_accounting()
    try:
        cost = _run(meter.new_run(memory_mb=50, processes=16))  # the child wants 100 MB
        assert cost.oom_killed and cost.peak_kb <= 50 * 1024 + 64, cost
    finally:
        meter.close()


def test_sandbox_reports_its_accounting() -> None:
    with Sandbox(workers=1) as sb:
        iso = sb.isolation
    assert iso["accounting"]["method"] in ("cgroup-v1", "cgroup-v2", "container", "sampled")
    if os.geteuid() == 0:
        assert iso["accounting"]["method"].startswith("cgroup"), iso["accounting"]
        assert (iso["filesystem"], iso["scratch"]) == ("allow-list", "per-run")


def test_a_dead_workers_groups_are_swept(tmp_path: os.PathLike[str]) -> None:
    dead = os.fork()
    if dead == 0:  # pragma: no cover - child
        os._exit(0)
    os.waitpid(dead, 0)
    stale = os.path.join(tmp_path, f"{accounting.GROUP_PREFIX}{dead}", "run")
    live = os.path.join(tmp_path, f"{accounting.GROUP_PREFIX}{os.getpid()}")
    os.makedirs(stale)
    os.makedirs(live)
    accounting.sweep_stale_groups(str(tmp_path))
    assert not os.path.exists(os.path.dirname(stale)) and os.path.exists(live)
