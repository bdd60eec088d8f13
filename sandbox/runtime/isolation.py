"""What keeps a child process in: namespaces, a filesystem view, an unprivileged uid, rlimits.

The worker calls :func:`enter_worker_namespaces` once at start, which also
builds the run's filesystem view (:mod:`.view`), and :func:`prepare_child` in
every forked child before the untrusted code runs.  Each measure is applied
when the kernel and the worker's privileges allow it; :class:`Isolation`
records which ones are in force so the parent can report them.  What this does
*not* protect against: kernel exploits and side channels.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import signal
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, NoReturn

from . import seccomp
from . import view as view_module
from .mounts import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    MS_NODEV,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    bind_read_only,
    check,
    libc,
    mount,
    unshare,
)

ADDR_NO_RANDOMIZE = 0x0040000
PR_SET_PDEATHSIG = 1  # the run dies with its worker (as its pid 1, it takes the rest along)

# World-writable places that get a private tmpfs so nothing written there is
# seen by the host or outlives the worker.
SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")  # nosec B108 - covered, not used
# Home directories that are hidden; only toolchains that live there are shown.
HIDDEN_HOMES = ("/root",)


@dataclass
class Isolation:
    """Which protections this worker could switch on."""

    unprivileged_uid: int | None = None
    network_namespace: bool = False
    mount_namespace: bool = False
    pid_namespace_per_run: bool = False
    hidden_homes: list[str] = field(default_factory=list)
    view: view_module.View | None = None  # the allow-list filesystem view runs are confined to
    filesystem: str = "host"  # "allow-list" with a view, else what the worker could hide
    scratch: str = "shared"  # "per-run": fresh /tmp, /var/tmp, /dev/shm and SysV IPC each run
    accounting: dict[str, Any] = field(default_factory=dict)
    runs_forked_by: str = "worker"  # or "fork server" (:mod:`.fork_server`)
    syscall_filter: str = "none"  # :func:`.seccomp.describe`: what each run's seccomp filter denies
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain-data form, sent to the parent in the worker's hello reply."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Isolation:
        """The isolation :meth:`to_dict` wrote (the fork server gets its worker's this way)."""
        view = data.get("view")
        return cls(**{**data, "view": None if view is None else view_module.View(**view)})


def enter_worker_namespaces(keep_paths: list[str], packages: list[str], hidden: list[str],
                            runtime_dir: str) -> Isolation:
    """Move this worker into private network and mount namespaces (root only), and build the view.

    ``keep_paths`` are directories runs need at the same path (the Python
    prefix, the runtime); ``packages`` the paths of the importable packages;
    ``hidden`` folders the view covers even where it shows their parent;
    ``runtime_dir`` this runtime, which the view shows at ``RUNTIME_MOUNT``.
    """
    iso = Isolation(syscall_filter=seccomp.describe())
    if os.geteuid() != 0:
        iso.notes.append("not root: no namespaces, no uid switch; rlimits and killpg only")
        return iso
    iso.unprivileged_uid = 100000 + os.getpid()
    try:
        unshare(CLONE_NEWNET | CLONE_NEWNS, "unshare")
    except OSError as exc:
        iso.notes.append(f"namespaces unavailable ({exc}); uid switch and rlimits only")
        return iso
    iso.network_namespace = iso.mount_namespace = True
    mount("none", "/", None, MS_REC | MS_PRIVATE)
    for home in HIDDEN_HOMES:
        if os.path.isdir(home) and not os.stat(home).st_mode & 0o001:
            _cover(home, "size=1m,mode=0755", keep_paths)
            iso.hidden_homes.append(home)
    for path in SCRATCH_DIRS:
        if os.path.isdir(path):
            _cover(path, "size=512m,mode=1777", keep_paths)
    iso.filesystem = "host without " + ", ".join(iso.hidden_homes or ["nothing"])
    try:
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV, "hidepid=2")
    except OSError as exc:
        iso.notes.append(f"/proc not remounted with hidepid ({exc})")
    iso.pid_namespace_per_run = pid_namespace_per_run_works()
    try:
        iso.view = view_module.build([p for p in keep_paths if p != runtime_dir], packages, hidden,
                                     runtime_dir)
        iso.filesystem, iso.scratch = "allow-list", "per-run"
    except OSError as exc:
        iso.notes.append(f"no filesystem view ({exc}): runs see the host minus hidden homes")
    return iso


def _cover(target: str, tmpfs_options: str, keep_paths: list[str]) -> None:
    """Mount a fresh tmpfs over ``target``, keeping ``keep_paths`` under it visible.

    Kept folders (the interpreter, the venv, toolchains) are re-mounted at the
    same path, read-only, from descriptors opened before the cover went on.
    """
    keep = [p for p in keep_paths if p.startswith(target.rstrip("/") + "/") and os.path.isdir(p)]
    handles = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in keep]
    mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, tmpfs_options)
    for path, fd in handles:
        os.makedirs(path, mode=0o755, exist_ok=True)
        bind_read_only(f"/proc/self/fd/{fd}", path)
        os.close(fd)


_own_pid_ns: int | None = None


def pid_namespace_per_run_works() -> bool:
    """Whether this process can start each run in a pid namespace of its own (it then will)."""
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
    check(libc.setns(_own_pid_ns, CLONE_NEWPID), "setns")
    unshare(CLONE_NEWPID, "unshare(CLONE_NEWPID)")


def reset_pid_namespace() -> None:
    """Make later forks stay in the worker's own pid namespace again."""
    if _own_pid_ns is not None:
        check(libc.setns(_own_pid_ns, CLONE_NEWPID), "setns")


def fork_run(child: Callable[[], NoReturn]) -> int:
    """Fork a run's first process, in a fresh pid namespace when there are such, where it
    does ``child`` (which never returns); the pid, in this process."""
    new_pid_namespace_for_next_fork()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        child()
    reset_pid_namespace()
    return pid


@dataclass
class ChildLimits:
    """The rlimits of one child: CPU seconds, address space, file size, open files, processes."""

    cpu_s: int
    address_space_mb: int | None
    file_size_mb: int
    open_files: int
    processes: int


def prepare_child(iso: Isolation, limits: ChildLimits, workdir: str, deterministic: bool) -> None:
    """Run in a forked child: new session, private scratch and view, rlimits, then drop to the sandbox uid."""
    if os.getpid() != 1:
        os.setsid()
    if iso.view is not None:
        unshare(CLONE_NEWNS | CLONE_NEWIPC, "unshare(CLONE_NEWNS | CLONE_NEWIPC)")
        iso.view.enter(workdir, fresh_proc=iso.pid_namespace_per_run)
    else:
        os.chdir(workdir)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    if deterministic:
        libc.personality(ADDR_NO_RANDOMIZE)
    _set(resource.RLIMIT_CORE, 0)
    _set(resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1)
    _set(resource.RLIMIT_FSIZE, limits.file_size_mb << 20)
    _set(resource.RLIMIT_NOFILE, limits.open_files)
    if limits.address_space_mb is not None:
        _set(resource.RLIMIT_AS, limits.address_space_mb << 20)
    uid = iso.unprivileged_uid
    if uid is not None:
        os.chown(".", uid, uid)
        _set(resource.RLIMIT_NPROC, limits.processes)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after the uid switch, which clears it


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
