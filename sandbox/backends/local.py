"""Local backend: warm worker processes on this machine, no daemon needed.

Isolation (when run as root, as on these machines): each worker lives in
private network and mount namespaces (no network at all).  Each run is a
fresh child forked (by the worker's small fork server) into its own pid, mount
and IPC namespaces and its own cgroup, confined to the worker's filesystem view (the system, the Python
prefixes with only the allow-listed packages, fresh tmpfs scratch: see
:mod:`..runtime.view`), running as a per-worker unprivileged uid with rlimits
on CPU, address space, file size, open files and processes.  The cgroup
charges the run for every process it starts and every byte it keeps, tmpfs
included (:mod:`..runtime.accounting`); when the child ends, the kernel kills
everything it started.  Without root, only rlimits, a process-group kill and
sampled accounting apply, and ``Sandbox.isolation`` says so.

Not protected: kernel exploits and timing side channels.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..packages import DEFAULT_PACKAGES, package_paths
from ..runtime import boot_code, languages
from .process import WorkerProcess

RUNTIME_DIR = str(Path(__file__).resolve().parent.parent / "runtime")
# The folder holding rewardkit's sources: a checkout (editable install) or site-packages.
# Runs never see it, wherever it lies; only the runtime inside it is shown again.
SOURCES_DIR = str(Path(__file__).resolve().parent.parent.parent)


def boot_command(runtime_dir: str) -> str:
    """The ``python -c`` source that starts the worker from the runtime files in ``runtime_dir``."""
    return boot_code(runtime_dir, "worker")


def start_local_worker(packages: Sequence[str] = DEFAULT_PACKAGES) -> WorkerProcess:
    """Start a worker on this machine with a scrubbed environment (the host PATH goes in argv).

    ``packages`` are the third-party packages its runs may import.
    """
    setup = json.dumps({"packages": package_paths(packages), "hidden": [SOURCES_DIR]})
    argv = [sys.executable, "-s", "-c", boot_command(RUNTIME_DIR), os.environ.get("PATH", ""), setup]
    env = {"PATH": languages.SYSTEM_PATH, "PYTHONHASHSEED": "0", "LANG": "C.UTF-8"}
    return WorkerProcess(argv, env)
