"""Emptying a container's scratch space between runs (the docker backend).

A container worker is not root, so its runs cannot have fresh tmpfs of their
own as local runs do.  Its runs are one at a time, though, and every writable
place in the container belongs to this worker's uid: after each run (its
processes are gone by then) everything in the writable folders is removed, but
the worker's own root, and so are POSIX message queues and the SysV IPC
objects that the run left (:func:`.workdir.remove`: folders of any mode and
depth).  Nothing a run writes reaches a later run.
"""

from __future__ import annotations

import contextlib
import ctypes
import os

from . import workdir

WRITABLE = ("/tmp", "/var/tmp", "/dev/shm", "/dev/mqueue")  # nosec B108 - emptied, not used
IPC_RMID = 0
_IPC = (("/proc/sysvipc/shm", "shmctl"), ("/proc/sysvipc/sem", "semctl"),
        ("/proc/sysvipc/msg", "msgctl"))
_libc = ctypes.CDLL(None, use_errno=True)


def empty(root: str, own: set[str]) -> None:
    """Remove every entry of the writable folders and IPC objects, but the worker's own.

    ``root`` is the worker's folder (the run's uid can write there too: it is
    the worker's uid) and ``own`` the names in it that are the worker's (the
    job's work dir, which the worker sweeps itself).
    """
    root = os.path.abspath(root)
    for folder in (*WRITABLE, root):
        with contextlib.suppress(OSError):
            for name in os.listdir(folder):
                path = os.path.join(folder, name)
                if path == root or root.startswith(path + "/") or (folder == root and name in own):
                    continue
                _remove(path)
    _remove_ipc()


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):  # what cannot be removed is not the run's (mounted, read-only)
        workdir.remove(path)


def _remove_ipc() -> None:
    """IPC_RMID every SysV shared memory segment, semaphore set and message queue listed."""
    for listing, call in _IPC:
        with contextlib.suppress(OSError):
            with open(listing, encoding="ascii") as handle:
                rows = handle.read().splitlines()[1:]
            for row in rows:
                ident = int(row.split()[1])
                if call == "semctl":
                    _libc.semctl(ident, 0, IPC_RMID)
                else:
                    getattr(_libc, call)(ident, IPC_RMID, None)
