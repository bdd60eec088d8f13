"""A job's channel to a sandbox worker, where every transport error is an infrastructure fault."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from .runtime import protocol

SHOW = 400  # characters of a message quoted in feedback and fault reports


class Transport(Protocol):
    """Anything that answers worker frames: a WorkerProcess, or a fake in tests."""

    def request(self, message: Mapping[str, Any], timeout: float, max_frame: int) -> dict[str, Any]:
        """Send one frame and return the worker's reply (a frame of at most ``max_frame`` bytes)."""


class WorkerFault(RuntimeError):
    """The worker failed during a job: an infrastructure fault, to be given as ``sandbox_error``.

    The worker must be replaced.  ``started`` says whether the job had begun;
    if not, nothing of it ran and it may be tried again on another worker.
    """

    def __init__(self, message: str, started: bool) -> None:
        super().__init__(message)
        self.started = started

    def __reduce__(self) -> tuple[type[WorkerFault], tuple[str, bool]]:
        """Pickled whole (a Ray task raises it to the driver), not as ``WorkerFault(message)``."""
        return WorkerFault, (str(self), self.started)


class Link:
    """A job's channel to its worker: a failed request becomes a WorkerFault, and stays one.

    ``role`` names the worker in fault messages (the solution's sandbox
    worker, or a referee's).
    """

    def __init__(self, worker: Transport, timeout: float, max_frame: int,
                 role: str = "sandbox worker") -> None:
        self._worker, self._timeout, self._max_frame, self._role = worker, timeout, max_frame, role
        self.op = ""  # the latest request's
        self.started = False
        self.fault: WorkerFault | None = None

    def ask(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """The worker's reply to ``message``; WorkerFault on any transport error or worker error."""
        if self.fault is None:
            self.op = str(message.get("op"))
            try:
                reply = self._worker.request(message, self._timeout, self._max_frame)
                if reply.get("worker_error"):  # the worker itself raised while answering
                    raise protocol.ProtocolError(clip(str(reply.get("error", ""))))
                return reply
            except Exception as exc:  # the transport's errors are all infrastructure faults
                self.fault = self.failed(exc)
        raise self.fault

    def failed(self, exc: Exception, detail: str = "") -> WorkerFault:
        """The fault of the latest request, which raised ``exc``."""
        return WorkerFault(f"{self._role} fault during {self.op!r}: {detail}{type(exc).__name__}: {exc}",
                           self.started)


def clip(text: str) -> str:
    """``text``, cut to :data:`SHOW` characters with its length said."""
    return text if len(text) <= SHOW else text[:SHOW] + f"... ({len(text)} characters)"
