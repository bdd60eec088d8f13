"""The leftover check itself (``leftovers.py``): it names a live process a sandbox uid left behind,
and passes over one that has ended and waits only for its exit status to be collected."""

from __future__ import annotations

import os
import signal
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
