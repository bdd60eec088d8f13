"""Killing this test process's own children by command line, from a thread, while a test runs."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psutil


@contextmanager
def killing(command_part: str, sig: signal.Signals = signal.SIGKILL,
            after_s: float = 0.0) -> Iterator[None]:
    """Send ``sig`` to every descendant whose command line holds ``command_part``,
    ``after_s`` seconds after it is first seen, for as long as the block runs."""
    stop = threading.Event()

    def kill() -> None:
        seen: dict[int, float] = {}
        while not stop.is_set():
            for child in psutil.Process().children(recursive=True):
                try:
                    if command_part not in " ".join(child.cmdline()):
                        continue
                    first = seen.setdefault(child.pid, time.monotonic())
                    if time.monotonic() - first >= after_s:
                        os.kill(child.pid, sig)
                except (psutil.Error, ProcessLookupError):
                    continue
            time.sleep(0.01)

    killer = threading.Thread(target=kill)
    killer.start()
    try:
        yield
    finally:
        stop.set()
        killer.join()
