"""An analysis worker process: ``python -m rewardkit.analyzers.analysis_worker INBOX_FD OUTBOX_FD BOARD``.

Started by :mod:`.pool`, it analyses the jobs ``(profile_data, codes)`` the
parent sends over a pipe, one at a time, with one warm :class:`~.tool_runner.ToolRunner`
per profile.  Before a tool works on some sources of the job it posts them on
its board (:mod:`.progress_board`), so that the parent can kill it when one
source overruns its time budget and know which source to blame; the job's
first post also says its tools are warm.  It answers ``("done", reports)``, or
``("failed", reason)`` when the job could not be analysed at all, and leaves
when the parent sends None or goes away.  Its address space is limited to
:data:`MEMORY_MB`, so a source that makes a tool allocate without bound gets a
MemoryError (an input fault, :mod:`.faults`), not the machine's OOM killer.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import threading
import time
from collections import OrderedDict
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING

from .profile import Profile
from .progress_board import Board

if TYPE_CHECKING:
    from .tool_runner import ToolRunner

MEMORY_MB = 2048  # address space of a worker; warm, with every tool loaded, it uses ~180 MB
_MAX_RUNNERS = 8
_runners: OrderedDict[str, ToolRunner] = OrderedDict()


def runner_for(profile: Profile) -> ToolRunner:
    """This process's warm tool runner for ``profile`` (a few profiles are kept).  The tools are
    imported here, so that a missing one fails the job with its name rather than the process."""
    from .tool_runner import ToolRunner

    key = profile.fingerprint
    if key in _runners:
        _runners.move_to_end(key)
    else:
        _runners[key] = ToolRunner(profile)
        _runners[key].warm()
        while len(_runners) > _MAX_RUNNERS:
            _runners.popitem(last=False)
    return _runners[key]


def serve(inbox: Connection, outbox: Connection, board: Board) -> None:
    """Analyse the jobs from ``inbox`` until it sends None or closes, reporting on ``outbox``."""
    while True:
        try:
            job = inbox.recv()
        except EOFError:
            return
        if job is None:
            return
        profile_data, codes = job
        try:
            reports = runner_for(Profile(profile_data)).analyze(codes, board.post)
        except Exception as exc:  # the job as a whole could not be analysed: the parent reports it
            outbox.send(("failed", f"{type(exc).__name__}: {exc}"))
        else:
            outbox.send(("done", reports))


def leave_with(parent: int) -> None:
    """Exit once process ``parent`` is gone: an orphan would finish its job for nobody."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="rewardkit-parent-watch", daemon=True).start()


def main(argv: list[str]) -> int:
    """Serve the pipes whose descriptors ``argv`` holds, posting on the board it names."""
    leave_with(os.getppid())
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_MB << 20, MEMORY_MB << 20))
    with contextlib.suppress(OSError):  # the parent closed its end while we wrote
        serve(Connection(int(argv[0]), writable=False), Connection(int(argv[1]), readable=False),
              Board(Path(argv[2])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
