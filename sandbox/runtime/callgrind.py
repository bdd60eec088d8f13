"""The instruction meter: callgrind over the whole process tree, read from a pipe.

Valgrind runs with ``--trace-children=yes`` (every program the run execs is
counted too; forked processes always are) and every valgrind of the tree opens
the same log by path: a FIFO owned by root in a read-only folder, whose read end
only the worker holds.  The solution can neither remove nor replace it, and no
file it can write (its work dir, a symlink, a FIFO of its own) feeds the count.
Each process prints its own total when it ends (``==PID== Collected : N``);
the run's count is the sum over processes, taking for each process id the
largest total printed for it, so lines a solution writes into the FIFO itself
can only add to the count of a process that ends normally (SECURITY.md says
what remains).
"""

from __future__ import annotations

import contextlib
import os
import re

_COLLECTED = re.compile(rb"^==(\d+)== Collected : (\d+)\s*$", re.MULTILINE)
VALGRIND_SLOWDOWN = 60  # how many times longer a run takes under callgrind
LOG_CAP = 1 << 20  # bytes of valgrind log kept; the totals come last, so the tail is kept


def argv(valgrind: str, log_path: str, program: list[str]) -> list[str]:
    """The command line that runs ``program`` under callgrind, logging to the FIFO at ``log_path``."""
    return [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", "--dump-line=no",
            "--trace-children=yes", f"--log-file={log_path}", *program]


def make_fifo(path: str) -> None:
    """The FIFO valgrind logs to: any run's uid may write it, only root reads it."""
    os.mkfifo(path, 0o622)
    os.chmod(path, 0o622)  # nosec B103 - any run's uid writes valgrind's log; only root reads


class LogFifo:
    """The meter's FIFO: made once per worker, read by the worker only, never at end-of-file.

    ``path`` is where runs open it; ``host_path`` where the worker made it.
    The worker keeps a write end open itself, so a run's processes may open
    and close it as they start and end without the reader ever seeing EOF.
    """

    def __init__(self, host_path: str, path: str) -> None:
        if not os.path.exists(host_path):
            make_fifo(host_path)
        self.path = path
        self.reader = os.open(host_path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        self._writer = os.open(host_path, os.O_WRONLY | os.O_CLOEXEC)

    def fresh_reader(self) -> int:
        """A descriptor for one run's reads, after discarding what an earlier run left."""
        with contextlib.suppress(BlockingIOError):
            while os.read(self.reader, 1 << 16):
                pass
        return os.dup(self.reader)


def count(log: bytes) -> int | None:
    """Instructions of every process in the log (max per process id, summed); None if none ended."""
    totals: dict[int, int] = {}
    for pid, value in _COLLECTED.findall(log):
        totals[int(pid)] = max(totals.get(int(pid), 0), int(value))
    return sum(totals.values()) if totals else None
