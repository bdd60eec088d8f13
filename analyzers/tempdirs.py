"""Temporary folders of the analysis tools: one root per process, never left behind.

Every folder a tool runner or tool writes to lives under ``<tmp>/rk-analyzers-<pid>``.
The root is removed when its process ends, through multiprocessing's exit
finalizers, which run in a normal exit and also in pool workers (they leave
with ``os._exit``, past ``atexit``).  A process killed outright (a Ray worker
at shutdown, SIGKILL) cannot clean up, so each new root first sweeps the roots
of processes that no longer exist.
"""

from __future__ import annotations

import contextlib
import multiprocessing.util
import os
import shutil
import tempfile
from pathlib import Path

import psutil

PREFIX = "rk-analyzers-"
_roots: dict[int, Path] = {}


def sweep_stale_roots() -> list[Path]:
    """Remove the roots whose process is gone; the removed ones."""
    removed = []
    for root in Path(tempfile.gettempdir()).glob(PREFIX + "*"):
        pid = root.name.removeprefix(PREFIX)
        if pid.isdigit() and int(pid) != os.getpid() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(root, ignore_errors=True)
            removed.append(root)
    return removed


def process_root() -> Path:
    """This process's root, created (after a sweep) on first use."""
    pid = os.getpid()
    if pid not in _roots:
        sweep_stale_roots()
        root = Path(tempfile.gettempdir()) / f"{PREFIX}{pid}"
        with contextlib.suppress(FileExistsError):  # a stale root of a recycled pid is reused
            root.mkdir(mode=0o700)
        _roots[pid] = root
        multiprocessing.util.Finalize(None, shutil.rmtree, args=(root,),
                                      kwargs={"ignore_errors": True}, exitpriority=0)
    return _roots[pid]


def temp_dir(prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A new temporary folder under this process's root."""
    return tempfile.TemporaryDirectory(prefix=prefix, dir=process_root(), ignore_cleanup_errors=True)
