"""This test process's own children found by command line, and killed from a thread while a test runs."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import psutil


def command_line(process: psutil.Process) -> list[str]:
    """The process's argv; empty for one that is gone or a zombie (a leftover of another test)."""
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def children_with(command_part: str, recursive: bool = False) -> list[psutil.Process]:
    """This process's live children (all descendants if ``recursive``) whose command line holds
    ``command_part``."""
    return [child for child in psutil.Process().children(recursive=recursive)
            if command_part in " ".join(command_line(child))]


@contextmanager
def killing(command_part: str, sig: signal.Signals = signal.SIGKILL,
            after_s: float = 0.0) -> Iterator[None]:
    """Send ``sig`` to every descendant whose command line holds ``command_part``,
    ``after_s`` seconds after it is first seen, for as long as the block runs."""
    stop = threading.Event()

    def kill() -> None:
        seen: dict[int, float] = {}
        while not stop.is_set():
            for child in children_with(command_part, recursive=True):
                try:
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
