"""Thin wrappers over the libc calls behind namespaces and mounts (root only)."""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18

libc = ctypes.CDLL(None, use_errno=True)


def check(result: int, what: str) -> None:
    """Raise OSError with errno's text when a libc call returned non-zero."""
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    """mount(2); OSError naming the target on failure."""
    check(libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                     ctypes.c_ulong(flags), data.encode() if data else None), f"mount {target}")


def bind_read_only(source: str, target: str) -> None:
    """Bind ``source`` (a folder or file, with what is mounted below it) at ``target``, read-only."""
    mount(source, target, None, MS_BIND | MS_REC)
    mount("none", target, None, MS_BIND | MS_REC | MS_RDONLY | MS_REMOUNT | MS_NOSUID)


def unshare(flags: int, what: str) -> None:
    """unshare(2) of the given namespaces."""
    check(libc.unshare(flags), what)
