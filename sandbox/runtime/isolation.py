"""What keeps a child process in: namespaces, an unprivileged uid, rlimits.

The worker calls :func:`enter_worker_namespaces` once at start and
:func:`prepare_child` in every forked child before the untrusted code runs.
Each measure is applied when the kernel and the worker's privileges allow it;
:class:`Isolation` records which ones are in force so the parent can report
them.  What this does *not* protect against: kernel exploits, side channels,
CPU-time stealing below the rlimit, and reading world-readable host files that
are not hidden by the mounts below (the docker backend narrows that further).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import resource
import signal
from dataclasses import asdict, dataclass, field
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
ADDR_NO_RANDOMIZE = 0x0040000

# World-writable places that get a private tmpfs so nothing written there is
# seen by the host or outlives the worker.
SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")  # nosec B108 - covered, not used
# Home directories that are hidden; only toolchains that live there are shown.
HIDDEN_HOMES = ("/root",)

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass
class Isolation:
    """Which protections this worker could switch on."""

    unprivileged_uid: int | None = None
    network_namespace: bool = False
    mount_namespace: bool = False
    pid_namespace_per_run: bool = False
    hidden_homes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form, sent to the parent in the worker's hello reply."""
        return asdict(self)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def enter_worker_namespaces(keep_paths: list[str]) -> Isolation:
    """Move this worker into private network and mount namespaces (root only).

    ``keep_paths`` are toolchain directories (the Python prefix, say) that lie
    under a hidden home and must stay reachable at the same path.
    """
    iso = Isolation()
    if os.geteuid() != 0:
        iso.notes.append("not root: no namespaces, no uid switch; rlimits and killpg only")
        return iso
    iso.unprivileged_uid = 100000 + os.getpid()
    try:
        _check(_libc.unshare(CLONE_NEWNET | CLONE_NEWNS), "unshare")
    except OSError as exc:
        iso.notes.append(f"namespaces unavailable ({exc}); uid switch and rlimits only")
        return iso
    iso.network_namespace = iso.mount_namespace = True
    _mount("none", "/", None, MS_REC | MS_PRIVATE)
    for home in HIDDEN_HOMES:
        if os.path.isdir(home) and not os.stat(home).st_mode & 0o001:
            _cover(home, "size=1m,mode=0755", keep_paths)
            iso.hidden_homes.append(home)
    for path in SCRATCH_DIRS:
        if os.path.isdir(path):
            _cover(path, "size=512m,mode=1777", keep_paths)
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV, "hidepid=2")
    except OSError as exc:
        iso.notes.append(f"/proc not remounted with hidepid ({exc})")
    iso.pid_namespace_per_run = _pid_namespace_works()
    return iso


def _cover(target: str, tmpfs_options: str, keep_paths: list[str]) -> None:
    """Mount a fresh tmpfs over ``target``, keeping ``keep_paths`` under it visible.

    Kept folders (the interpreter, the venv, toolchains) are re-mounted at the
    same path, read-only, from descriptors opened before the cover went on.
    """
    keep = [p for p in keep_paths if p.startswith(target.rstrip("/") + "/") and os.path.isdir(p)]
    handles = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in keep]
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_options)
    for path, fd in handles:
        os.makedirs(path, mode=0o755, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
        _mount("none", path, None, MS_BIND | MS_REC | MS_RDONLY | MS_REMOUNT | MS_NOSUID)
        os.close(fd)


_own_pid_ns: int | None = None


def _pid_namespace_works() -> bool:
    global _own_pid_ns
    try:
        _own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        new_pid_namespace_for_next_fork()
        reset_pid_namespace()
        return True
    except OSError:
        _own_pid_ns = None
        return False


def new_pid_namespace_for_next_fork() -> None:
    """Make the next fork() start a fresh pid namespace whose init is the child.

    When that child exits, the kernel kills every process left in the
    namespace, so daemons and fork bombs cannot outlive the run.
    """
    if _own_pid_ns is None:
        return
    _check(_libc.setns(_own_pid_ns, CLONE_NEWPID), "setns")
    _check(_libc.unshare(CLONE_NEWPID), "unshare(CLONE_NEWPID)")


def reset_pid_namespace() -> None:
    """Make later forks stay in the worker's own pid namespace again."""
    if _own_pid_ns is not None:
        _check(_libc.setns(_own_pid_ns, CLONE_NEWPID), "setns")


@dataclass
class ChildLimits:
    """The rlimits of one child: CPU seconds, address space, file size, open files, processes."""

    cpu_s: int
    address_space_mb: int | None
    file_size_mb: int
    open_files: int
    processes: int


def prepare_child(iso: Isolation, limits: ChildLimits, workdir: str, deterministic: bool) -> None:
    """Run in a forked child: new session, rlimits, then drop to the sandbox uid."""
    if os.getpid() != 1:
        os.setsid()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    if deterministic:
        _libc.personality(ADDR_NO_RANDOMIZE)
    _set(resource.RLIMIT_CORE, 0)
    _set(resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1)
    _set(resource.RLIMIT_FSIZE, limits.file_size_mb << 20)
    _set(resource.RLIMIT_NOFILE, limits.open_files)
    if limits.address_space_mb is not None:
        _set(resource.RLIMIT_AS, limits.address_space_mb << 20)
    uid = iso.unprivileged_uid
    if uid is not None:
        os.chown(workdir, uid, uid)
        _set(resource.RLIMIT_NPROC, limits.processes)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    os.chdir(workdir)


def _set(which: int, soft: int, hard: int | None = None) -> None:
    hard = soft if hard is None else hard
    _, current_hard = resource.getrlimit(which)
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(which, (soft, hard))


def kill_tree(pid: int, iso: Isolation) -> None:
    """Kill a child and everything it started.

    With a pid namespace per run, killing its init takes the rest down.
    Otherwise the session's process group is killed, and when this worker is
    pid 1 of a container, every other process in it (see :func:`sweep`).
    """
    for target in (-pid, pid):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError as exc:
            if exc.errno not in (errno.ESRCH, errno.EPERM):
                raise
    sweep(iso, reap=False)


def sweep(iso: Isolation, reap: bool = True) -> None:
    """As pid 1 of a container (no pid namespace per run): kill every other process.

    ``kill(-1)`` never signals the caller, so no helper process is needed (one
    could not be forked anyway once a fork bomb fills the pids limit).  With
    ``reap``, also wait for the orphans this worker inherited: zombies keep
    their slots of the container's pids limit until reaped.  Call it only when
    the worker has no child of its own left to wait for.
    """
    if iso.pid_namespace_per_run or os.getpid() != 1:
        return
    try:
        os.kill(-1, signal.SIGKILL)
    except OSError as exc:
        if exc.errno not in (errno.ESRCH, errno.EPERM):
            raise
    while reap:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
