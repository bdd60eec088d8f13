"""What a sandbox could leave behind on the host, and a check that it left nothing.

Only what rewardkit's sandbox itself can leave is looked at, so that other
programs on a shared machine (another test run, a build making temp folders)
never fail the check:

* **processes of sandbox uids.**  A local worker runs solutions as uid
  100000 + its own pid.  Such a process is a leftover when its worker is one of
  ours (a descendant of this test process, Ray's workers included) or is gone
  (nobody will ever kill it).  Processes of a live worker that is not ours
  belong to someone else's run in progress and are not looked at.
* **files and folders owned by a sandbox uid** (>= 100000) anywhere under
  /tmp, /var/tmp and /dev/shm: a sandbox keeps a solution's writes on private
  mounts, so such a file on the host escaped.  A run has its uid as its only
  group, so a folder that neither belongs to a sandbox uid or gid nor lets
  others pass (pytest's 0700 temporary folders, with their virtualenvs) holds
  nothing a run could have made, and is not walked.
* **fork servers** (a worker's root helper that forks its runs) whose worker is
  gone: each must end with its worker.  A Python run the fork server forked
  keeps its argv, so a process whose parent is a fork server is a run (checked
  as a sandbox uid's process), not a server.
* **``rewardkit-*`` work roots** directly under those folders whose worker
  process is gone (a worker without a private /tmp makes one; the worker's pid
  is read from the name when the name carries one).
* **docker containers labelled ``rewardkit=sandbox``** that no live
  ``docker run`` holds any more.
* **kernel keys of sandbox uids** (``/proc/key-users``): keyrings are keyed by
  uid and outlive every process, so a key a run made is state a later run of
  the same uid could find (blamed as processes are: when the uid's worker is
  ours or gone).

Each check compares with a :class:`Snapshot` taken before the test, so that
what was there already (an earlier leak, someone else's) is not blamed on it.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import psutil

SANDBOX_UID_BASE = 100000
SCRATCH_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")  # nosec B108 - looked at, never written
WORKER_MARK = "runtime.worker import main"  # in the argv of every sandbox worker
FORK_SERVER_MARK = "runtime.fork_server import main"  # in the argv of every worker's fork server
DOCKER_LABEL = "rewardkit=sandbox"
_ROOT_PID = re.compile(r"^rewardkit-w?(\d+)(?:-.*)?$")


# -- processes -------------------------------------------------------------------------------------
def _uid(proc: psutil.Process) -> int | None:
    try:
        return int(proc.uids().real)
    except psutil.Error:
        return None


def our_processes() -> set[int]:
    """Pids of this process's descendants (Ray's head and workers, sandbox workers, docker CLIs)."""
    try:
        return {child.pid for child in psutil.Process().children(recursive=True)}
    except psutil.Error:
        return set()


def sandbox_workers() -> set[int]:
    """Pids of every live local sandbox worker on the machine, ours or not."""
    found = set()
    for proc in psutil.process_iter(["cmdline"]):
        if WORKER_MARK in " ".join(proc.info["cmdline"] or ()):
            found.add(proc.pid)
    return found


def fork_servers() -> dict[tuple[int, float], int]:
    """Every live fork server on the machine, ours or not: (pid, start time) -> its parent's pid."""
    found = {}
    for proc in psutil.process_iter(["cmdline", "create_time", "ppid"]):
        if FORK_SERVER_MARK in " ".join(proc.info["cmdline"] or ()):
            found[(proc.pid, proc.info["create_time"] or 0.0)] = proc.info["ppid"]
    return found


def sandbox_uid_processes() -> dict[tuple[int, float], tuple[int, str]]:
    """Every live process of a sandbox uid: (pid, start time) -> (uid, its command line).  A zombie
    has ended and holds nothing but its exit status, which its parent (or init, for an orphan)
    collects; it is not looked at."""
    found = {}
    for proc in psutil.process_iter(["cmdline", "create_time", "status"]):
        uid = _uid(proc)
        if uid is not None and uid >= SANDBOX_UID_BASE and proc.info["status"] != psutil.STATUS_ZOMBIE:
            command = " ".join(proc.info["cmdline"] or ())[:120]
            found[(proc.pid, proc.info["create_time"] or 0.0)] = (uid, command)
    return found


def _worker_of(uid: int) -> int:
    return uid - SANDBOX_UID_BASE


# -- files -------------------------------------------------------------------------------------------
def _passable(info: os.stat_result) -> bool:
    """Whether a sandbox uid (whose only group is its uid) may pass through this folder."""
    return bool(info.st_mode & stat.S_IXOTH) or info.st_uid >= SANDBOX_UID_BASE \
        or info.st_gid >= SANDBOX_UID_BASE


def _walk(root: str) -> Iterator[tuple[str, os.stat_result]]:
    """Every path under ``root`` that a sandbox uid could reach (not following links) with its
    lstat; unreadable parts skipped."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    yield entry.path, info
                    if stat.S_ISDIR(info.st_mode) and _passable(info):
                        stack.append(entry.path)
        except OSError:
            continue


def sandbox_owned_files() -> dict[tuple[str, int], int]:
    """Files and folders owned by a sandbox uid under the scratch roots: (path, inode) -> uid."""
    found = {}
    for root in SCRATCH_ROOTS:
        for path, info in _walk(root):
            if info.st_uid >= SANDBOX_UID_BASE:
                found[(path, info.st_ino)] = info.st_uid
    return found


def work_roots() -> dict[str, int | None]:
    """``rewardkit-*`` folders directly under the scratch roots -> the worker pid in the name, if any."""
    found: dict[str, int | None] = {}
    for root in SCRATCH_ROOTS:
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            path = os.path.join(root, name)
            if name.startswith("rewardkit-") and os.path.isdir(path) and not os.path.islink(path):
                match = _ROOT_PID.match(name)
                found[path] = int(match.group(1)) if match else None
    return found


def sandbox_uid_keys() -> set[int]:
    """The sandbox uids (>= 100000) that own kernel keys (``/proc/key-users``)."""
    try:
        with open("/proc/key-users", encoding="ascii") as handle:
            uids = {int(line.split(":", 1)[0]) for line in handle if ":" in line}
    except OSError:
        return set()
    return {uid for uid in uids if uid >= SANDBOX_UID_BASE}


# -- containers ----------------------------------------------------------------------------------------
def docker_available() -> bool:
    """Whether a docker CLI is here and its engine answers."""
    if shutil.which("docker") is None:
        return False
    try:
        probe = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"],
                               capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def sandbox_containers() -> dict[str, str]:
    """Containers (running or not) labelled as rewardkit sandboxes: id -> name."""
    try:
        out = subprocess.run(["docker", "ps", "-a", "--filter", f"label={DOCKER_LABEL}",
                              "--format", "{{.ID}} {{.Names}}"],
                             capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return dict(line.split(maxsplit=1) for line in out.splitlines() if " " in line)


def held_container_names() -> set[str]:
    """Names of containers whose ``docker run`` client is still alive (a worker holds them)."""
    names = set()
    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info["cmdline"] or []
        if len(argv) > 2 and os.path.basename(argv[0]) == "docker" and argv[1] == "run" \
                and "--name" in argv:
            index = argv.index("--name")
            if index + 1 < len(argv):
                names.add(argv[index + 1])
    return names


# -- snapshot and check ----------------------------------------------------------------------------------
@dataclass
class Snapshot:
    """What was on the machine before a test; :meth:`leftovers` reports what the test added."""

    containers: bool = False
    processes: dict[tuple[int, float], tuple[int, str]] = field(default_factory=dict)
    files: dict[tuple[str, int], int] = field(default_factory=dict)
    roots: dict[str, int | None] = field(default_factory=dict)
    container_ids: dict[str, str] = field(default_factory=dict)
    servers: dict[tuple[int, float], int] = field(default_factory=dict)
    key_uids: set[int] = field(default_factory=set)

    @classmethod
    def take(cls, containers: bool = False) -> Snapshot:
        """Record the sandbox's traces now (containers too when ``containers``)."""
        return cls(containers, sandbox_uid_processes(), sandbox_owned_files(), work_roots(),
                   sandbox_containers() if containers else {}, fork_servers(), sandbox_uid_keys())

    def leftovers(self) -> list[str]:
        """What our sandboxes left since the snapshot, one line each."""
        ours, workers = our_processes(), sandbox_workers()

        def blamed(uid: int) -> bool:
            """Whether a sandbox uid's trace is ours: its worker is one of ours, or gone."""
            worker = _worker_of(uid)
            return worker in ours or not psutil.pid_exists(worker)

        found = [f"process {key[0]} of uid {uid} (worker {_worker_of(uid)}): {command}"
                 for key, (uid, command) in sandbox_uid_processes().items()
                 if key not in self.processes and blamed(uid)]
        found += [f"file {path} (uid {uid})" for (path, inode), uid in sandbox_owned_files().items()
                  if (path, inode) not in self.files and blamed(uid)]
        found += [f"kernel keys of sandbox uid {uid}"
                  for uid in sorted(sandbox_uid_keys() - self.key_uids) if blamed(uid)]
        servers = fork_servers()
        forked = {pid for pid, _ in servers}  # a Python run forked by a fork server carries its argv
        for key, parent in servers.items():
            if key not in self.servers and parent not in workers and parent not in forked:
                found.append(f"fork server {key[0]} without its worker (parent {parent})")
        for path, pid in work_roots().items():
            if path in self.roots:
                continue
            gone = not workers if pid is None else not psutil.pid_exists(pid)
            if gone:
                found.append(f"work root {path} (worker {pid or 'unknown'} gone)")
        if self.containers:
            held = held_container_names()
            for ident, name in sandbox_containers().items():
                if ident not in self.container_ids and name not in held:
                    found.append(f"container {name} ({ident})")
        return found


def assert_clean(before: Snapshot, wait_s: float = 10.0) -> None:
    """Fail, naming them, if our sandboxes left anything since ``before``.

    Killed processes and removed containers may take a moment to go, so the
    check is repeated for up to ``wait_s`` seconds before it fails.
    """
    deadline = time.monotonic() + wait_s
    while True:
        found = before.leftovers()
        if not found or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert found == [], "the sandbox left these behind:\n" + "\n".join(found)
