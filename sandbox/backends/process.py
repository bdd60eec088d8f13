"""A worker process reached over its stdin/stdout, whatever runs it.

The local backend starts the worker directly; the docker backend starts it
inside ``docker run -i``.  Both speak the frames of
:mod:`rewardkit.sandbox.runtime.protocol`, so this one class drives either.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess  # nosec B404 - a worker is a child process by design
import tempfile
import time
from typing import Any

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
        self._frames = protocol.FrameBuffer()
        self.info = self.request({"op": "hello"}, timeout=start_timeout)
        if not self.info.get("ok"):
            raise WorkerGone(f"worker refused to start: {self.info}")

    @property
    def alive(self) -> bool:
        """Whether the worker process is still running."""
        return self._proc.poll() is None

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one frame and wait for the reply; raise WorkerGone on any fault."""
        try:
            self._stdin.write(protocol.encode_frame(message))
            self._stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerGone(f"worker is gone ({exc}); {self.log_tail()}") from exc
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self._stdout_fd, selectors.EVENT_READ)
            while True:
                frame = self._frames.pop()
                if frame is not None:
                    return frame
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.close()
                    raise WorkerGone(f"worker did not answer {message.get('op')!r} in {timeout:.0f} s")
                if not selector.select(remaining):
                    continue
                try:
                    chunk: bytes | None = os.read(self._stdout_fd, 1 << 20)
                except BlockingIOError:  # woken with nothing to read after all: select again
                    chunk = None
                if chunk == b"":
                    self.close()
                    raise WorkerGone(f"worker exited; {self.log_tail()}")
                if chunk:
                    self._frames.feed(chunk)

    def log_tail(self, limit: int = 2000) -> str:
        """The end of the worker's stderr log, for error messages."""
        try:
            self._log.seek(0)
            text = self._log.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        return f"worker log: {text[-limit:]}" if text.strip() else "worker log is empty"

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
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._log.close()
