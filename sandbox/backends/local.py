"""Local backend: warm worker processes on this machine, no daemon needed.

Isolation (when run as root, as on these machines): each worker lives in
private network and mount namespaces (no network at all; private tmpfs over
/tmp, /var/tmp, /dev/shm, /run/lock; /root hidden; /proc mounted with
hidepid=2); each run is a fresh child forked into its own pid namespace,
running as a per-worker unprivileged uid with rlimits on CPU, address space,
file size, open files and processes.  When the child ends, the kernel kills
everything it started.  Without root, only rlimits and a process-group kill
apply, and ``Sandbox.isolation`` says so.

Not protected: kernel exploits, timing side channels, reading world-readable
files of the host (the docker backend hides the host filesystem entirely).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..runtime import boot_code, languages
from .process import WorkerProcess

RUNTIME_DIR = str(Path(__file__).resolve().parent.parent / "runtime")


def boot_command(runtime_dir: str) -> str:
    """The ``python -c`` source that starts the worker from the runtime files in ``runtime_dir``."""
    return boot_code(runtime_dir, "worker")


def start_local_worker() -> WorkerProcess:
    """Start a worker on this machine with a scrubbed environment (the host PATH goes in argv)."""
    argv = [sys.executable, "-s", "-c", boot_command(RUNTIME_DIR), os.environ.get("PATH", "")]
    env = {"PATH": languages.SYSTEM_PATH, "PYTHONHASHSEED": "0", "LANG": "C.UTF-8"}
    return WorkerProcess(argv, env)
