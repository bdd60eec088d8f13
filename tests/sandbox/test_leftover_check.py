"""The leftover check itself (``leftovers.py``): it names a live process a sandbox uid left behind,
and passes over one that has ended and waits only for its exit status to be collected; it names a
file a sandbox uid made wherever a run could reach, and does not walk folders no run can enter."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import leftovers
import psutil
import pytest

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a sandbox uid's process needs root to make")


def gone_worker_uid() -> int:
    """A sandbox uid whose worker pid is free: its processes are nobody's to kill."""
    with open("/proc/sys/kernel/pid_max", encoding="ascii") as handle:
        pid = int(handle.read()) - 1
    while psutil.pid_exists(pid):
        pid -= 1
    return leftovers.SANDBOX_UID_BASE + pid


@contextmanager
def child_as(uid: int, stays: bool) -> Iterator[int]:
    """A child running as ``uid`` that sleeps (``stays``) or exits at once and is not waited for."""
    pid = os.fork()
    if pid == 0:
        os.setuid(uid)
        if stays:
            time.sleep(60)
        os._exit(0)
    try:
        yield pid
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


@pytest.mark.parametrize("stays", [True, False], ids=["live", "zombie"])
def test_a_live_orphaned_process_is_named_and_a_zombie_is_not(stays: bool) -> None:
    before = leftovers.Snapshot.take()
    with child_as(gone_worker_uid(), stays) as pid:
        deadline = time.monotonic() + 10
        while not stays and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline, "the child never ended"
            time.sleep(0.05)
        named = [line for line in before.leftovers() if line.startswith(f"process {pid} ")]
    assert bool(named) == stays, named


@pytest.mark.parametrize(("folder_mode", "found"), [(0o1777, True), (0o711, True), (0o700, False)],
                         ids=["world-writable", "passable", "closed"])
def test_a_sandbox_uids_file_is_named_where_a_run_could_have_made_it(folder_mode: int, found: bool) -> None:
    """Under a root folder others may pass through, a file of a sandbox uid is named; under a 0700
    one (where pytest keeps its temporary folders and virtualenvs) no run could have made it, and
    the check does not walk there."""
    before = leftovers.Snapshot.take()
    root = tempfile.mkdtemp(prefix="rk-leftover-check-", dir="/tmp")  # nosec B108 - the root a run sees
    try:
        os.chmod(root, folder_mode)
        inner = os.path.join(root, "inner")
        os.mkdir(inner, 0o777)
        os.chmod(inner, 0o777)
        planted = os.path.join(inner, "escaped")
        with open(planted, "w", encoding="ascii") as handle:
            handle.write("x")
        uid = gone_worker_uid()
        os.chown(planted, uid, uid)
        named = [line for line in before.leftovers() if line.startswith(f"file {planted} ")]
    finally:
        shutil.rmtree(root)
    assert bool(named) == found, named
