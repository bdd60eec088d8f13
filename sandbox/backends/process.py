"""A worker process reached over its stdin/stdout, whatever runs it.

The local backend starts the worker directly; the docker backend starts it
inside ``docker run -i``.  Both speak the frames of
:mod:`rewardkit.sandbox.runtime.protocol`, so this one class drives either.
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import subprocess  # nosec B404 - a worker is a child process by design
import tempfile
import time
from collections.abc import Mapping
from typing import Any

import psutil

from ..runtime import protocol


class WorkerGone(RuntimeError):
    """The worker died, hung, or spoke nonsense: an infrastructure fault."""


class WorkerProcess:
    """A started worker: framed requests over its stdin, replies from its stdout, stderr to a log."""

    def __init__(self, argv: list[str], env: dict[str, str], start_timeout: float = 120.0) -> None:
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the worker
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._log, env=env,
                                      start_new_session=True)  # nosec B603 - argv from the backend, no shell
        if self._proc.stdin is None or self._proc.stdout is None:
            raise WorkerGone("the worker's pipes were not created")
        self._stdin = self._proc.stdin
        self._stdout_fd = self._proc.stdout.fileno()
        os.set_blocking(self._stdout_fd, False)
        self._selector = selectors.DefaultSelector()  # one for the worker's life, not one per request
        self._selector.register(self._stdout_fd, selectors.EVENT_READ)
        self._frames = protocol.FrameBuffer(protocol.REPLY_OVERHEAD)
        self._pipe = protocol.ReadBuffer(1 << 20)
        self.cpu: int | None = None  # the CPU its pool pinned it to (WorkerPool), if any
        self.info = self.request({"op": "hello"}, timeout=start_timeout)
        if not self.info.get("ok"):
            raise WorkerGone(f"worker refused to start: {self.info}")

    @property
    def alive(self) -> bool:
        """Whether the worker process is still running."""
        return self._proc.poll() is None

    def request(self, message: Mapping[str, Any], timeout: float,
                max_frame: int = protocol.REPLY_OVERHEAD) -> dict[str, Any]:
        """Send one frame and wait for the reply, a frame of at most ``max_frame`` bytes.

        Any fault (the worker gone, silent for ``timeout`` s, or sending an
        oversized or malformed frame) kills the worker and raises WorkerGone.
        """
        try:
            self._expect_silence()
            self._stdin.write(protocol.encode_frame(message))
            self._stdin.flush()
            return self._reply(timeout, max_frame)
        except Exception as exc:  # whatever the transport raised, the worker cannot go on
            tail = self.log_tail()
            self.kill()
            raise WorkerGone(f"{type(exc).__name__}: {exc}; {tail}") from exc

    def _expect_silence(self) -> None:
        """Refuse bytes that arrived before a request asked for them (and notice a dead worker)."""
        if self._frames.pending or select.select([self._stdout_fd], [], [], 0)[0]:
            self._read_chunk()
            raise protocol.ProtocolError("the worker sent bytes that no request asked for")

    def _reply(self, timeout: float, max_frame: int) -> dict[str, Any]:
        self._frames.limit = max_frame
        deadline = time.monotonic() + timeout
        while (frame := self._frames.pop()) is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"the worker did not answer in {timeout:.0f} s")
            if self._selector.select(remaining):
                self._read_chunk()
        return frame

    def _read_chunk(self) -> None:
        try:
            chunk = self._pipe.read(self._stdout_fd)
        except BlockingIOError:  # woken with nothing to read after all: select again
            return
        if not chunk:
            raise EOFError("the worker exited")
        self._frames.feed(chunk)

    def log_tail(self, limit: int = 2000) -> str:
        """The end of the worker's stderr log, for error messages."""
        try:
            size = self._log.seek(0, os.SEEK_END)
            self._log.seek(max(0, size - 4 * limit))
            text = self._log.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        return f"worker log: {text[-limit:]}" if text.strip() else "worker log is empty"

    def kill(self) -> None:
        """Kill the worker and every process it started, then close it."""
        if self._proc.poll() is None:  # not reaped: the pid is still this worker's
            with contextlib.suppress(psutil.Error):
                for process in psutil.Process(self._proc.pid).children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        process.kill()
            self._proc.kill()
        self.close()

    def close(self) -> None:
        """End the worker (EOF first, kill after 5 s) and release its pipes and log."""
        if self._proc.poll() is None:
            try:
                self._stdin.close()
                self._proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self._proc.kill()
                self._proc.wait()
        else:
            with contextlib.suppress(OSError):
                self._stdin.close()
        self._selector.close()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._log.close()
