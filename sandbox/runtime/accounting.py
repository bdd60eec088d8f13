"""Charging a run for everything it does: every process it starts, every byte it keeps.

A run's cost is what its whole process tree used, waited for or not, plus what
it keeps in tmpfs.  Four ways to get it, chosen once per worker by
:func:`detect` and reported in ``Sandbox.isolation["accounting"]``:

``cgroup-v1`` / ``cgroup-v2``
    Each run gets a fresh cgroup (memory, CPU accounting, pids) that its first
    process joins just before the solution starts; everything it forks is born
    inside.  CPU time is the kernel's total for the group, peak memory its
    high-water mark (anonymous memory, page tables, tmpfs and page cache the
    run brought in), and the memory limit and the process limit hold for the
    group as a whole.  Needs root and writable cgroup controllers.
``container``
    In a container without root (the docker backend) the worker cannot make
    groups, but it can read its container's: CPU time is the container's
    total over the run minus the worker's own, memory is the container's
    usage above what it was when the run started; the peak is exact when the
    run raises the container's high-water mark and sampled (every 2-50 ms)
    otherwise.  Runs in one container are one at a time, so nothing else is
    in that total.
``sampled``
    No cgroup at all: the tree under the run's first process is walked every
    2-50 ms and each process's CPU time and resident memory are summed.  A
    process that lives less than a sampling interval, and CPU time spent after
    the last sample by a process nobody waits for, can be missed.

Compiled programs (and every exec'd run) are measured as the program itself, not
its launcher.  The run's first process starts as a fork of the Python worker or its
fork server (~8-11 MB resident) and then execs the program; Linux keeps the launcher's
high-water mark in ``ru_maxrss`` across the exec, which floored every compiled
program at the worker's footprint.  The cgroup methods charge only pages the run
itself brings in, so they were never affected; the container method reads the
container's usage, never ``ru_maxrss``, so its floor is only the few pages the
launcher dirties between fork and exec.  The sampled method now skips the first
process until it has exec'd (its ``/proc/PID/exe`` is no longer the worker's),
adds that process's own high-water mark (``VmHWM`` of the exec'd image, which
catches peaks between samples), and trusts ``ru_maxrss`` only when it exceeds the
launcher's high-water mark, written by the launcher just before it execs: then it
can only be the program's.  A program that peaks below the launcher's footprint
and ends before the first sample after its exec (~2 ms) reads what the samples saw.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import signal
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

# Bumped whenever what the figures mean changes, so cached measurements are taken again
# (2: whole-tree accounting; peak memory is what the run added, not one process's RSS;
# 3: an exec'd program's peak is its own, not its Python launcher's;
# 4: runs forked by the worker's fork server, whose pages a run copies, not the worker's).
MEASUREMENT_VERSION = 4
PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
V1_CONTROLLERS = ("memory", "cpuacct", "pids")
GROUP_PREFIX = "rewardkit-w"
T = TypeVar("T")


@dataclass
class RunCost:
    """What a finished run's whole tree cost: CPU seconds, peak KiB, and whether it hit the memory limit."""

    cpu_s: float
    peak_kb: float
    oom_killed: bool = False


def _read(path: str) -> str:
    """A cgroup or /proc file's text, read with plain system calls (a run reads several)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks).decode("ascii")
    finally:
        os.close(fd)


def _write(path: str, value: str) -> None:
    """Write a cgroup control file (it exists; the kernel takes the value in one write)."""
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode("ascii"))
    finally:
        os.close(fd)


def _read_int(path: str) -> int | None:
    try:
        return int(_read(path).split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _open_counter(path: str) -> int:
    """A cgroup file kept open for :func:`_pread_int` (a sample then costs one system call)."""
    return os.open(path, os.O_RDONLY | os.O_CLOEXEC)


def _pread_int(fd: int) -> int | None:
    """The number a cgroup file opened by :func:`_open_counter` holds now (read from its start)."""
    try:
        return int(os.pread(fd, 64, 0).split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _close_counter(fd: int) -> int:
    """Close a counter from :func:`_open_counter` (once: -1 means closed); returns -1."""
    if fd >= 0:
        os.close(fd)
    return -1


def _keyed(path: str) -> dict[str, int]:
    """A ``key value`` per line cgroup file (memory.events, cpu.stat, memory.oom_control)."""
    values: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in _read(path).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].lstrip("-").isdigit():
                values[parts[0]] = int(parts[1])
    return values


# -- finding the hierarchies -----------------------------------------------------------------
def _mounts() -> list[tuple[str, str, set[str], str]]:
    """(mount point, fs type, super options, root) of every cgroup file system this process sees."""
    found = []
    with contextlib.suppress(OSError):
        for line in _read("/proc/self/mountinfo").splitlines():
            left, _, right = line.partition(" - ")
            fields, tail = left.split(), right.split()
            if len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                found.append((fields[4], tail[0], set(tail[2].split(",")), fields[3]))
    return found


def _group_dir(kind: str, controller: str | None) -> str | None:
    """This process's own group folder in the hierarchy of ``controller`` (v1) or the v2 one.

    The path in /proc/self/cgroup is relative to the hierarchy's root, which a
    mount (a container's, say) may not show: it is taken relative to the mount's root.
    """
    path = _own_groups().get(controller or "")
    for mount, fstype, options, root in _mounts():
        if fstype != kind or (controller is not None and controller not in options):
            continue
        if path is not None and (path + "/").startswith(root.rstrip("/") + "/"):
            return os.path.join(mount, path[len(root.rstrip("/")):].lstrip("/"))
    return None


def _own_groups() -> dict[str, str]:
    """This process's cgroup path per v1 controller, and under ``""`` its v2 path."""
    groups: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in _read("/proc/self/cgroup").splitlines():
            _, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                groups[name] = path
    return groups


def _v1_dirs() -> dict[str, str] | None:
    """This process's own group directory in each v1 controller we need, or None."""
    dirs = {}
    for controller in V1_CONTROLLERS:
        own = _group_dir("cgroup", controller)
        if own is None:
            return None
        dirs[controller] = own
    return dirs


def _v2_dir() -> str | None:
    """This process's own v2 group directory, when memory and pids can be enabled below it."""
    own = _group_dir("cgroup2", None)
    if own is None:
        return None
    try:
        available = set(_read(os.path.join(own, "cgroup.controllers")).split())
        if not {"memory", "pids"} <= available:
            return None
        enabled = set(_read(os.path.join(own, "cgroup.subtree_control")).split())
        if not {"memory", "pids"} <= enabled:
            _write(os.path.join(own, "cgroup.subtree_control"), "+memory +pids")
    except OSError:
        return None
    return own


def sweep_stale_groups(parent: str) -> None:
    """Remove groups left by workers that died without cleaning up (their pid is gone)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(parent):
            match = re.fullmatch(GROUP_PREFIX + r"(\d+)", name)
            if match and not os.path.exists(f"/proc/{match.group(1)}"):
                _remove_tree(os.path.join(parent, name))


def _remove_tree(path: str) -> None:
    """rmdir a cgroup and its child groups, deepest first (cgroup dirs hold only control files)."""
    try:  # a run's group has no child groups (its uid cannot make any): one rmdir, no listing
        os.rmdir(path)
        return
    except FileNotFoundError:
        return
    except OSError:
        pass
    for root, dirs, _ in os.walk(path, topdown=False):
        for name in dirs:
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(root, name))
    with contextlib.suppress(OSError):
        os.rmdir(path)


# -- one run ----------------------------------------------------------------------------------------
class UntimedCpu:
    """CPU seconds the run's first process spent on work not to be charged: noted there, read here.

    The figure crosses in a pipe whose write end the run's first process holds only until it
    has written it: that process closes it before the solution starts, written or not, so
    nothing the run executes can change the figure.
    """

    def __init__(self) -> None:
        self._read, self.fd = os.pipe()  # the write end goes to the run, at the number adopt() says
        self._noted: float | None = None

    def measure(self, work: Callable[[], T] | None) -> T | None:
        """In the run's first process: do ``work`` (if any), note its CPU time, close the pipe;
        what ``work`` returned."""
        result = None
        try:
            if work is not None:
                start = time.process_time()
                result = work()
                os.write(self.fd, struct.pack("d", time.process_time() - start))
        finally:
            os.close(self.fd)
        return result

    def started(self) -> None:
        """In the worker, once the run's first process holds the write end: drop ours."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    @property
    def seconds(self) -> float:
        """In the worker, once the run has ended: what :meth:`measure` noted (0 if nothing was)."""
        if self._noted is None:
            self.started()
            os.set_blocking(self._read, False)
            try:
                data = os.read(self._read, 8)
            except BlockingIOError:
                data = b""
            self._noted = struct.unpack("d", data)[0] if len(data) == 8 else 0.0
        return self._noted

    def close(self) -> None:
        """In the worker: keep the figure, close the pipe."""
        if self._read >= 0:
            _ = self.seconds
            os.close(self._read)
            self._read = -1


@dataclass
class RunGroup:
    """A run's accounting: joined by the run's first process, sampled while it runs, read at the end."""

    method: str
    pid: int = 0
    _fds: list[int] = field(default_factory=list)
    _untimed: UntimedCpu = field(default_factory=UntimedCpu)

    @property
    def descriptors(self) -> list[int]:
        """What the run's first process gets of the group: the join descriptors, opened by the
        worker (as root) before the fork, and last the write end of the untimed figure's pipe."""
        return [*self._fds, self._untimed.fd]

    @classmethod
    def forked(cls, fds: list[int]) -> RunGroup:
        """In a fork server's child: the group the worker made, from its :attr:`descriptors`."""
        group = cls("forked")
        group.adopt(fds)
        return group

    def adopt(self, fds: list[int]) -> None:
        """In the child: the :attr:`descriptors` now have these numbers."""
        self._fds, self._untimed.fd = list(fds[:-1]), fds[-1]

    def join(self) -> None:
        """In the run's first process, after dropping privileges: enter the group.

        The descriptors were opened by the worker as root, which is what the
        kernel checks.
        """
        for fd in self._fds:
            os.write(fd, b"0")
            os.close(fd)
        self._fds.clear()

    def untimed(self, work: Callable[[], T] | None) -> T | None:
        """In the run's first process, after :meth:`join` and always before the solution starts:
        do ``work`` (if any) as part of the run, but take its CPU time off the run's
        (:meth:`finish`); what ``work`` returned.  What it allocates stays charged.  See
        :class:`UntimedCpu`."""
        return self._untimed.measure(work)

    def _timed(self, cpu_s: float) -> float:
        """``cpu_s`` less what :meth:`untimed` work took."""
        return max(0.0, cpu_s - self._untimed.seconds)

    def started(self, pid: int) -> None:
        """In the worker, right after the fork: the run's first process is ``pid``."""
        self.pid = pid
        for fd in self._fds:
            os.close(fd)
        self._fds.clear()
        self._untimed.started()

    def memory_kb(self) -> float | None:
        """Memory the run holds now, in KiB (None when it cannot be read)."""
        raise NotImplementedError

    def finish(self, rusage: Any) -> RunCost:
        """The run's cost once its first process has been reaped (``rusage`` from wait4)."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the group (every process of the run has ended, or none started)."""
        for fd in self._fds:  # a run that never started leaves its join descriptors here
            os.close(fd)
        self._fds.clear()
        self._untimed.close()


class CgroupV1Run(RunGroup):
    """A fresh group in each v1 controller (memory, cpuacct, pids)."""

    def __init__(self, dirs: dict[str, str], memory_mb: int | None, processes: int) -> None:
        super().__init__("cgroup-v1")
        self.dirs = {name: os.path.join(base, "run") for name, base in dirs.items()}
        for path in self.dirs.values():
            _remove_tree(path)
            os.mkdir(path)
        memory = self.dirs["memory"]
        if memory_mb is not None:
            _write(os.path.join(memory, "memory.limit_in_bytes"), str(memory_mb << 20))
            with contextlib.suppress(OSError):  # absent without swap accounting
                _write(os.path.join(memory, "memory.memsw.limit_in_bytes"), str(memory_mb << 20))
        _write(os.path.join(self.dirs["pids"], "pids.max"), str(processes))
        self._fds = [os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
                     for path in self.dirs.values()]
        self._usage = _open_counter(os.path.join(memory, "memory.usage_in_bytes"))

    def memory_kb(self) -> float | None:
        value = _pread_int(self._usage)
        return None if value is None else value / 1024

    def finish(self, rusage: Any) -> RunCost:
        memory = self.dirs["memory"]
        cpu_ns = _read_int(os.path.join(self.dirs["cpuacct"], "cpuacct.usage")) or 0
        peak = _read_int(os.path.join(memory, "memory.max_usage_in_bytes")) or 0
        oom = _keyed(os.path.join(memory, "memory.oom_control")).get("oom_kill", 0)
        return RunCost(self._timed(cpu_ns / 1e9), peak / 1024, oom > 0)

    def close(self) -> None:
        self._usage = _close_counter(self._usage)
        for path in self.dirs.values():
            _remove_tree(path)
        super().close()


class CgroupV2Run(RunGroup):
    """A fresh v2 group with the memory and pids controllers (CPU time is always accounted)."""

    def __init__(self, base: str, memory_mb: int | None, processes: int) -> None:
        super().__init__("cgroup-v2")
        self.dir = os.path.join(base, "run")
        _remove_tree(self.dir)
        os.mkdir(self.dir)
        if memory_mb is not None:
            _write(os.path.join(self.dir, "memory.max"), str(memory_mb << 20))
            with contextlib.suppress(OSError):
                _write(os.path.join(self.dir, "memory.swap.max"), "0")
        _write(os.path.join(self.dir, "pids.max"), str(processes))
        self._fds = [os.open(os.path.join(self.dir, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)]
        self._usage = _open_counter(os.path.join(self.dir, "memory.current"))

    def memory_kb(self) -> float | None:
        value = _pread_int(self._usage)
        return None if value is None else value / 1024

    def finish(self, rusage: Any) -> RunCost:
        cpu_us = _keyed(os.path.join(self.dir, "cpu.stat")).get("usage_usec", 0)
        peak = _read_int(os.path.join(self.dir, "memory.peak"))
        oom = _keyed(os.path.join(self.dir, "memory.events")).get("oom_kill", 0)
        return RunCost(self._timed(cpu_us / 1e6), (peak or 0) / 1024, oom > 0)

    def close(self) -> None:
        self._usage = _close_counter(self._usage)
        _remove_tree(self.dir)
        super().close()


class ContainerRun(RunGroup):
    """The container's own group, read-only: deltas over the run, minus the worker's own CPU."""

    def __init__(self, files: dict[str, str]) -> None:
        super().__init__("container")
        self.files = files
        self.base_kb = self.memory_kb_raw() or 0.0
        self.high_kb = self._high_kb()
        self.cpu0 = self._cpu_s()
        self.self0 = _self_cpu_s()
        self.sampled_peak = 0.0

    def memory_kb_raw(self) -> float | None:
        """The container's whole memory usage now, in KiB."""
        value = _read_int(self.files["usage"])
        return None if value is None else value / 1024

    def _high_kb(self) -> float | None:
        value = _read_int(self.files["high"]) if "high" in self.files else None
        return None if value is None else value / 1024

    def _cpu_s(self) -> float:
        if self.files["cpu"].endswith("cpu.stat"):
            return _keyed(self.files["cpu"]).get("usage_usec", 0) / 1e6
        return (_read_int(self.files["cpu"]) or 0) / 1e9

    def memory_kb(self) -> float | None:
        value = self.memory_kb_raw()
        if value is None:
            return None
        held = max(0.0, value - self.base_kb)
        self.sampled_peak = max(self.sampled_peak, held)
        return held

    def finish(self, rusage: Any) -> RunCost:
        cpu = max(0.0, self._cpu_s() - self.cpu0 - (_self_cpu_s() - self.self0))
        peak = self.sampled_peak
        high = self._high_kb()
        if high is not None and self.high_kb is not None and high > self.high_kb:
            peak = max(peak, high - self.base_kb)  # the run set a new high-water mark: exact
        cpu = max(cpu, rusage.ru_utime + rusage.ru_stime)
        return RunCost(self._timed(cpu), max(peak, 0.0))


def _self_cpu_s() -> float:
    usage = os.times()
    return usage.user + usage.system


class SampledRun(RunGroup):
    """No cgroup: walk the run's process tree at every sample and sum what each process used.

    ``execs``: the run's first process is a fork of this one that execs the
    program; its memory counts only once it has (see the module's docstring).
    """

    def __init__(self, execs: bool = False) -> None:
        super().__init__("sampled")
        self.execs = execs
        self.cpu: dict[int, float] = {}
        self.peak_sum = 0.0
        self.own_peak = 0.0  # the exec'd program's own high-water mark (VmHWM)
        self._launcher_exe = _exe_id("self")
        self._launcher_peak = mmap.mmap(-1, 8)  # shared with the fork: its VmHWM just before exec

    def join(self) -> None:
        """In the launcher, just before it execs: note its high-water mark for :meth:`finish`."""
        self._launcher_peak[:8] = int(_status_kb("self", "VmHWM") or 0).to_bytes(8, "little")
        super().join()

    def _launcher_kb(self) -> float:
        return float(int.from_bytes(self._launcher_peak[:8], "little"))

    def memory_kb(self) -> float | None:
        if not self.pid:
            return None
        total = 0.0
        for pid in _tree(self.pid):
            # the first process is the launcher until its exe changes: read that before its memory
            launcher = self.execs and pid == self.pid and _exe_id(str(pid)) == self._launcher_exe
            stat = _proc_stat(pid)
            if stat is None:
                continue
            cpu_s, rss_kb = stat
            self.cpu[pid] = max(self.cpu.get(pid, 0.0), cpu_s)
            if launcher:
                continue
            if self.execs and pid == self.pid:
                self.own_peak = max(self.own_peak, _status_kb(str(pid), "VmHWM") or 0.0)
            total += rss_kb
        self.peak_sum = max(self.peak_sum, total)
        return total

    def finish(self, rusage: Any) -> RunCost:
        waited = rusage.ru_utime + rusage.ru_stime  # the first process and what it reaped
        maxrss = float(rusage.ru_maxrss)
        if self.execs and maxrss <= self._launcher_kb() + LAUNCHER_SLACK_KB:
            maxrss = 0.0  # the launcher's high-water mark, not the program's
        cpu = self._timed(max(waited, sum(self.cpu.values())))
        return RunCost(cpu, max(maxrss, self.peak_sum, self.own_peak))

    def close(self) -> None:
        self._launcher_peak.close()
        super().close()


# What the launcher may still touch between noting its high-water mark and the exec.
LAUNCHER_SLACK_KB = 256


def _exe_id(pid: str) -> tuple[int, int] | None:
    """(device, inode) of the program ``pid`` (or ``"self"``) runs, None when it cannot be read."""
    try:
        info = os.stat(f"/proc/{pid}/exe")
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _status_kb(pid: str, key: str) -> float | None:
    """One ``kB`` field of /proc/PID/status (VmHWM, VmRSS), None when absent (a zombie, say)."""
    with contextlib.suppress(OSError):
        for line in _read(f"/proc/{pid}/status").splitlines():
            if line.startswith(key + ":"):
                return float(line.split()[1])
    return None


def _tree(root: int) -> list[int]:
    """``root`` and every descendant, through /proc/PID/task/TID/children."""
    seen: list[int] = []
    todo = [root]
    while todo and len(seen) < 4096:
        pid = todo.pop()
        seen.append(pid)
        with contextlib.suppress(OSError):
            for tid in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    todo.extend(int(c) for c in _read(f"/proc/{pid}/task/{tid}/children").split())
    return seen


def _proc_stat(pid: int) -> tuple[float, float] | None:
    """(own CPU seconds, resident KiB) of one process from /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS, int(fields[21]) * PAGE_KB


# -- per worker ------------------------------------------------------------------------------------
class Accounting:
    """The worker's way of charging runs, fixed at start; :meth:`new_run` makes one run's group."""

    def __init__(self, method: str, base: Any = None, notes: list[str] | None = None) -> None:
        self.method, self.base, self.notes = method, base, notes or []

    def new_run(self, memory_mb: int | None, processes: int, execs: bool = False) -> RunGroup:
        """A fresh group for one run, with the memory limit (None: account only) and process limit;
        ``execs``: its first process execs the program (only the sampled method needs to know)."""
        if self.method == "cgroup-v1":
            return CgroupV1Run(self.base, memory_mb, processes)
        if self.method == "cgroup-v2":
            return CgroupV2Run(self.base, memory_mb, processes)
        if self.method == "container":
            return ContainerRun(self.base)
        return SampledRun(execs)

    def close(self) -> None:
        """Remove the worker's own groups."""
        if self.method == "cgroup-v1":
            for path in self.base.values():
                _remove_tree(path)
        elif self.method == "cgroup-v2":
            _remove_tree(self.base)

    def to_dict(self) -> dict[str, Any]:
        """What ``Sandbox.isolation["accounting"]`` shows."""
        return {"method": self.method, "notes": list(self.notes)}


def detect(root: bool) -> Accounting:
    """The most complete accounting this worker can have: a cgroup per run, the container's, or sampling."""
    notes: list[str] = []
    if root:
        name = f"{GROUP_PREFIX}{os.getpid()}"
        dirs = _v1_dirs()
        if dirs is not None:
            try:
                bases = {}
                for controller, own in dirs.items():
                    sweep_stale_groups(own)
                    bases[controller] = os.path.join(own, name)
                    os.makedirs(bases[controller], exist_ok=True)
                return Accounting("cgroup-v1", bases)
            except OSError as exc:
                notes.append(f"cgroup v1 not writable ({exc})")
        own_v2 = _v2_dir()
        if own_v2 is not None:
            try:
                sweep_stale_groups(own_v2)
                base = os.path.join(own_v2, name)
                os.makedirs(base, exist_ok=True)
                _write(os.path.join(base, "cgroup.subtree_control"), "+memory +pids")
                return Accounting("cgroup-v2", base)
            except OSError as exc:
                notes.append(f"cgroup v2 not writable ({exc})")
        notes.append("no writable cgroup with memory and pids controllers")
    container = _container_files() if os.getpid() == 1 else None  # alone in the group: a container
    if container is not None:
        notes.append("the container's own cgroup, read-only: peak memory sampled unless the run "
                     "sets a new high-water mark")
        return Accounting("container", container, notes)
    notes.append("process tree sampled every 2-50 ms: processes shorter than that can be missed")
    return Accounting("sampled", None, notes)


def _container_files() -> dict[str, str] | None:
    """Readable usage files of this process's own group (v1 or v2), for the container method."""
    memory, cpu, unified = (_group_dir("cgroup", "memory"), _group_dir("cgroup", "cpuacct"),
                            _group_dir("cgroup2", None))
    candidates = []
    if memory is not None and cpu is not None:
        candidates.append({"usage": f"{memory}/memory.usage_in_bytes",
                           "high": f"{memory}/memory.max_usage_in_bytes", "cpu": f"{cpu}/cpuacct.usage"})
    if unified is not None:
        candidates.append({"usage": f"{unified}/memory.current", "high": f"{unified}/memory.peak",
                           "cpu": f"{unified}/cpu.stat"})
    for files in candidates:
        if all(os.access(files[key], os.R_OK) for key in ("usage", "cpu")):
            if not os.access(files["high"], os.R_OK):
                del files["high"]
            return files
    return None


def kill_group(group: RunGroup) -> None:
    """SIGKILL every process still in a run's group (v1/v2), as a last resort before removing it."""
    paths = []
    if isinstance(group, CgroupV1Run):
        paths = [os.path.join(group.dirs["pids"], "cgroup.procs")]
    elif isinstance(group, CgroupV2Run):
        paths = [os.path.join(group.dir, "cgroup.procs")]
    for path in paths:
        with contextlib.suppress(OSError, ValueError):
            for pid in _read(path).split():
                with contextlib.suppress(OSError):
                    os.kill(int(pid), signal.SIGKILL)

