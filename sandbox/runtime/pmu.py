"""The instruction meter on a host with a PMU: a hardware counter on the run's process tree.

The worker opens the counter (``perf_event_open``) on a run's first process
while that process waits at its last step before ``exec``: user-space
instructions only, enabled by the ``exec`` itself and inherited by every
process and thread the run starts, whose counts the kernel folds into this one
as each of them exits.  The worker owns the counter and holds its only
descriptor, so nothing in the run can read, stop or reset it
(``prctl(PR_TASK_PERF_EVENTS_DISABLE)`` reaches only the caller's own counters,
and the seccomp filter denies ``perf_event_open`` to runs anyway).

A count the kernel had to share the PMU for (another user's counters, the
counter multiplexed) is an estimate, not a count: :func:`read` gives None for it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from dataclasses import dataclass

from .mounts import libc

PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}  # perf_event_open's number
_FD_CLOEXEC = 8  # PERF_FLAG_FD_CLOEXEC
_READ_TIMES = 1 | 2  # PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING
# perf_event_attr's flag bits
_DISABLED, _INHERIT, _EXCLUDE_KERNEL, _EXCLUDE_HV, _ENABLE_ON_EXEC = 1 << 0, 1 << 1, 1 << 5, 1 << 6, 1 << 12


class _Attr(ctypes.Structure):
    """``struct perf_event_attr`` as of its fifth size (112 bytes), which every later kernel takes."""

    _fields_ = [("type", ctypes.c_uint32), ("size", ctypes.c_uint32), ("config", ctypes.c_uint64),
                ("sample_period", ctypes.c_uint64), ("sample_type", ctypes.c_uint64),
                ("read_format", ctypes.c_uint64), ("flags", ctypes.c_uint64),
                ("wakeup_events", ctypes.c_uint32), ("bp_type", ctypes.c_uint32),
                ("config1", ctypes.c_uint64), ("config2", ctypes.c_uint64),
                ("branch_sample_type", ctypes.c_uint64), ("sample_regs_user", ctypes.c_uint64),
                ("sample_stack_user", ctypes.c_uint32), ("clockid", ctypes.c_int32),
                ("sample_regs_intr", ctypes.c_uint64), ("aux_watermark", ctypes.c_uint32),
                ("sample_max_stack", ctypes.c_uint16), ("reserved", ctypes.c_uint16)]


@dataclass(frozen=True)
class Event:
    """A perf event: its type and config as ``perf_event_open`` takes them."""

    name: str
    type: int
    config: int


INSTRUCTIONS = Event("instructions", 0, 1)  # PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS
# The kernel's software CPU clock of the tree (ns): the same machinery on a host without a PMU.
TASK_CLOCK = Event("task-clock", 1, 1)  # PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK


def open_counter(event: Event, pid: int, on_exec: bool = True) -> int:
    """A descriptor counting ``event`` in process ``pid`` and everything it starts from now on
    (user space only); with ``on_exec``, counting begins at the process's next ``exec``,
    else at once.  OSError when the kernel refuses (no such event, no permission)."""
    number = PERF_EVENT_OPEN.get(platform.machine())
    if number is None:
        raise OSError(errno.ENOSYS, f"no perf_event_open number known for {platform.machine()}")
    flags = _INHERIT | _EXCLUDE_KERNEL | _EXCLUDE_HV | (_DISABLED | _ENABLE_ON_EXEC if on_exec else 0)
    attr = _Attr(type=event.type, size=ctypes.sizeof(_Attr), config=event.config, read_format=_READ_TIMES,
                 flags=flags)
    fd = libc.syscall(number, ctypes.byref(attr), pid, -1, -1, _FD_CLOEXEC)
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"perf_event_open({event.name}): {os.strerror(code)}")
    return int(fd)


def read(fd: int) -> int | None:
    """The counter's total, or None when the kernel did not count all the time it was enabled."""
    data = os.read(fd, 24)
    if len(data) != 24:
        return None
    value, enabled, running = struct.unpack("=QQQ", data)
    return int(value) if running == enabled else None


COUNTERS = ("auto", "pmu", "valgrind")
CHOICE = "REWARDKIT_INSTRUCTION_COUNTER"  # the environment variable that picks one
NONE = "no hardware instruction counter"  # how a host without one is described


def chosen() -> str:
    """The counter the instruction meter is to use: ``auto`` (the PMU where the host has one,
    else valgrind) unless :data:`CHOICE` says ``pmu`` or ``valgrind``."""
    choice = os.environ.get(CHOICE, "auto") or "auto"
    if choice not in COUNTERS:
        raise ValueError(f"{CHOICE}={choice!r}: use one of {', '.join(COUNTERS)}")
    return choice


def counter_for(choice: str, has_pmu: bool) -> str | None:
    """What counts under ``choice`` on a host with or without a PMU: ``pmu`` or ``valgrind``;
    None for ``pmu`` where the host has none."""
    if choice == "valgrind" or (choice == "auto" and not has_pmu):
        return "valgrind"
    return "pmu" if has_pmu else None


def host_event() -> tuple[Event | None, str]:
    """The instruction event when this host's kernel counts it for us, with why not otherwise."""
    try:
        os.close(open_counter(INSTRUCTIONS, 0, on_exec=False))
    except OSError as exc:
        return None, f"{NONE} ({exc.strerror or exc})"
    return INSTRUCTIONS, "the CPU's PMU"
