"""Docker backend: the same worker, inside a locked-down container.

Each worker is ``docker run -i --rm`` of the ``rewardkit-sandbox`` image (a
minimal Debian with python3; build it with ``rewardkit docker setup``,
:mod:`..docker_setup`), talking frames over the container's
stdin/stdout.  By default every job gets a fresh container that is removed
afterwards (Monolith's one-container-per-task mode); ``warm_pool=True`` keeps
containers and runs many jobs in each, much faster.

What the container adds to the worker's own rlimits and process-tree kill:

* no network at all (``--network none``: only a loopback device);
* the host filesystem is invisible: the root is the image, mounted read-only;
  the only writable places are a private 512 MB tmpfs at /tmp and docker's
  64 MB /dev/shm; the runtime code
  and the allow-listed packages are read-only bind mounts;
* runs as uid/gid 65534 with every capability dropped and
  ``no-new-privileges`` (no setuid escalation);
* cgroup limits for the whole container: memory (``memory_mb`` + 256 MB for
  the worker + the sizes of /tmp and /dev/shm, swap off: a run that fills its
  tmpfs, memory no process's resident set shows, cannot push the container to
  the kernel's OOM killer, which would take the worker; its peak shows it and
  it is judged ``memory_exceeded``), CPU (``cpus``), and processes (``pids``),
  so a fork bomb stops at the pids limit;
* leftovers are easy to find and remove: every container carries the label
  ``rewardkit=sandbox`` and is removed when its worker closes, even when the
  worker hung and had to be killed.

What it does not give: protection from kernel exploits (containers share the
host kernel; there is no seccomp profile beyond docker's default, no
user-namespace remapping, no gVisor), from timing or cache side channels, or
from a hostile docker daemon.  With ``warm_pool=True`` the jobs of one
container share it one after another: each runs in a fresh work dir, and after
every run the processes it left are killed and everything it wrote to /tmp,
/dev/shm and /dev/mqueue, and its SysV IPC objects, are removed
(:mod:`..runtime.scratch`).  The worker runs as the same uid as the solution
inside the container (there is no root to switch from), so it makes itself
non-dumpable (a run cannot trace it or read its memory), is protected from
signals by the pid-1 rules, and holds no secrets: expected outputs never enter
the container.  It cannot make a cgroup per run; it charges each run from the
container's own cgroup (:mod:`..runtime.accounting`, method ``container``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess  # nosec B404 - this backend drives the docker CLI
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..packages import DEFAULT_PACKAGES, package_paths
from ..runtime import RUNTIME_MOUNT
from ..types import Limits
from .local import RUNTIME_DIR, boot_command
from .process import WorkerProcess

DEFAULT_IMAGE = "rewardkit-sandbox:latest"
LABEL = "rewardkit=sandbox"
MOUNT_DIR = RUNTIME_MOUNT
PACKAGES_DIR = "/opt/rewardkit/packages"
WORKER_OVERHEAD_MB = 256
TMP_MB = 512  # the container's /tmp
SHM_MB = 64  # its /dev/shm (docker's default size, set explicitly)
SETUP_HINT = ("run `rewardkit docker setup` (as root) to install, start and build it; "
              "`rewardkit docker status` says what is there")


class DockerWorker(WorkerProcess):
    """A worker in a container; closing it also makes sure the container is gone."""

    def __init__(self, argv: list[str], env: dict[str, str], docker: str, name: str,
                 container: dict[str, Any]) -> None:
        self.docker, self.name, self._removed = docker, name, False
        try:
            super().__init__(argv, env)
        except BaseException:
            self._remove()
            raise
        self.info.setdefault("isolation", {})["container"] = {**container, "name": name}

    def close(self) -> None:
        """Stop the worker, then force-remove its container if the CLI did not exit cleanly."""
        super().close()
        # `docker run --rm` removes the container when the worker exits on EOF;
        # a killed CLI (hung worker, failed start) may leave it behind: remove it.
        if self._proc.returncode != 0 and not self._removed:
            self._remove()

    def _remove(self) -> None:
        self._removed = True
        subprocess.run([self.docker, "rm", "--force", "--volumes", self.name],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60, check=False)  # nosec B603 - own argv, no shell


def container_memory_mb(limits: Limits) -> int:
    """The container's memory limit: the run's, the worker's, and room for full tmpfs."""
    return limits.memory_mb + WORKER_OVERHEAD_MB + TMP_MB + SHM_MB


def docker_argv(limits: Limits, packages: Sequence[str] = DEFAULT_PACKAGES,
                image: str = DEFAULT_IMAGE, cpus: float = 1.0, pids: int = 128,
                docker: str = "docker", name: str | None = None) -> list[str]:
    """The ``docker run`` command line of one worker container.

    The allow-listed packages are bound read-only under :data:`PACKAGES_DIR`,
    the only folder the worker adds to ``sys.path``.
    """
    memory = f"{container_memory_mb(limits)}m"
    argv = [
        docker, "run", "-i", "--rm",
        "--label", LABEL,
        "--network", "none",
        "--memory", memory, "--memory-swap", memory,
        "--cpus", str(cpus),
        "--pids-limit", str(pids),
        "--user", "65534:65534",
        "--read-only",
        "--tmpfs", f"/tmp:rw,exec,nosuid,size={TMP_MB}m",  # nosec B108 - the container's own private tmpfs
        "--shm-size", f"{SHM_MB}m",
        "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges",
        "--env", "PYTHONHASHSEED=0", "--env", "LANG=C.UTF-8",
        "-v", f"{RUNTIME_DIR}:{MOUNT_DIR}:ro",
    ]
    for path in package_paths(packages):
        argv += ["-v", f"{path}:{PACKAGES_DIR}/{os.path.basename(path)}:ro"]
    if name is not None:
        argv += ["--name", name]
    setup = json.dumps({"sys_path": [PACKAGES_DIR]})
    return [*argv, image, "python3", "-s", "-c", boot_command(MOUNT_DIR), "", setup]


def check_docker(image: str = DEFAULT_IMAGE, docker: str = "docker") -> None:
    """Raise RuntimeError, saying what to run, unless the CLI, engine and image are there."""
    if shutil.which(docker) is None:
        raise RuntimeError(f"the docker CLI ({docker!r}) is not installed; {SETUP_HINT}")
    probe = _quiet([docker, "version", "--format", "{{.Server.Version}}"])
    if probe.returncode != 0:
        detail = probe.stderr.strip().splitlines()[-1:] or ["no answer"]
        raise RuntimeError(f"the docker engine is not reachable ({detail[0]}); {SETUP_HINT}")
    if _quiet([docker, "image", "inspect", "--format", "{{.Id}}", image]).returncode != 0:
        raise RuntimeError(f"the docker image {image!r} is missing; {SETUP_HINT}")


def docker_factory(limits: Limits, packages: Sequence[str] = DEFAULT_PACKAGES,
                   image: str = DEFAULT_IMAGE, warm_pool: bool = False,
                   cpus: float = 1.0, pids: int = 128,
                   docker: str = "docker") -> tuple[Callable[[], WorkerProcess], bool]:
    """A factory of container workers, and whether each serves a single job (``fresh``)."""
    check_docker(image, docker)
    if not Path(RUNTIME_DIR, "worker.py").is_file():
        raise RuntimeError(f"the sandbox runtime is missing under {RUNTIME_DIR}")
    env = dict(os.environ)
    container = {"image": image, "network": "none", "read_only_root": True,
                 "user": "65534:65534", "capabilities": [], "cpus": cpus, "pids_limit": pids,
                 "memory_mb": container_memory_mb(limits), "fresh_per_job": not warm_pool}

    def start() -> WorkerProcess:
        name = f"rewardkit-{uuid.uuid4().hex[:12]}"
        argv = docker_argv(limits, packages, image, cpus, pids, docker, name)
        return DockerWorker(argv, env, docker, name, container)

    return start, not warm_pool


def leftover_containers(docker: str = "docker") -> list[str]:
    """Ids of rewardkit sandbox containers that still exist (running or not)."""
    out = _quiet([docker, "ps", "-aq", "--filter", f"label={LABEL}"])
    return out.stdout.split() if out.returncode == 0 else []


def _quiet(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run a docker CLI command with captured output; a failure to run reads as exit status 1."""
    try:
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=30, check=False)  # nosec B603 - docker CLI argv built here, no shell
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(argv, 1, "", str(exc))
