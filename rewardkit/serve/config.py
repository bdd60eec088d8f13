"""Settings of the reward service, and the rule that guards its address."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import asdict, dataclass, field

from ..sandbox import Limits
from ..sandbox.sandbox import BACKENDS

DEFAULT_PORT = 8765
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_BATCH = 256
DEFAULT_MAX_CASES = 1000
DEFAULT_MAX_QUEUED = 128
DEFAULT_SUITE_TIME_S = 60.0
DEFAULT_MAX_RUN_S = 600.0
DEFAULT_MAX_ANALYSIS_S = 300.0
DEFAULT_MAX_TOOL_S = 5.0  # the default profile's tool_timeout_s
TOKEN_ENV = "REWARDKIT_TOKEN"


class ServeError(ValueError):
    """A setting the service refuses to start with; the message says what to do."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def host_of(header: str) -> str:
    """The host part of a ``Host`` header (``name``, ``name:port``, ``[::1]:port``)."""
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


@dataclass(frozen=True)
class Caps:
    """How much the service takes on, per request and in its queue.

    A request body of at most ``body_bytes``, ``batch`` completions or
    sources, test suites of at most ``cases`` cases; ``run_s`` seconds of
    sandbox jobs and ``analysis_s`` of analysis per request; at most
    ``tool_s`` of CPU time per analysis tool and source, whatever a profile
    asks (a profile's ``tool_timeout_s``, which bounds every tool's); up to
    ``queued`` requests waiting to be computed (more are answered 503).
    """

    body_bytes: int = DEFAULT_MAX_BODY_BYTES
    batch: int = DEFAULT_MAX_BATCH
    cases: int = DEFAULT_MAX_CASES
    queued: int = DEFAULT_MAX_QUEUED
    run_s: float = DEFAULT_MAX_RUN_S
    analysis_s: float = DEFAULT_MAX_ANALYSIS_S
    tool_s: float = DEFAULT_MAX_TOOL_S

    def check(self) -> None:
        """Raise :class:`ServeError` for a cap that cannot work."""
        for name, least in (("body_bytes", 1), ("batch", 1), ("cases", 1), ("queued", 0)):
            if getattr(self, name) < least:
                raise ServeError(f"max_{name} must be at least {least}, got {getattr(self, name)}")
        for name in ("run_s", "analysis_s", "tool_s"):
            value = getattr(self, name)
            if not value > 0:
                raise ServeError(f"max_{name} must be a positive number of seconds, got {value}")

    def to_dict(self) -> dict[str, float]:
        """The caps as ``/health`` reports them (``max_batch``, ``max_run_s``, ...)."""
        return {f"max_{name}": value for name, value in asdict(self).items()}


@dataclass(frozen=True)
class ServeConfig:
    """How the service listens, whom it answers, and how much it takes on.

    ``workers`` is the number of sandbox jobs run at once, shared fairly by
    all requests (``None``: one per CPU); presets that time code measure 3
    times and have a pool of their own, started when first needed.
    ``concurrency`` is the number of requests computed at once (``None``:
    twice the workers).  Analyses run on :attr:`analysis_workers` processes.
    ``limits`` apply to every run, and bound the limits a ``/run`` request may
    ask for; their ``suite_time_s`` bounds one job, and so how long a request
    can wait for a sandbox slot.  ``caps`` bound each request and the queue.
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    workers: int | None = None
    backend: str = "local"
    limits: Limits = field(default_factory=lambda: Limits(suite_time_s=DEFAULT_SUITE_TIME_S))
    concurrency: int | None = None
    caps: Caps = field(default_factory=Caps)

    def check(self) -> None:
        """Raise :class:`ServeError` for a setting the service must not start with."""
        if not is_loopback(self.host) and not self.token:
            raise ServeError(f"refusing to listen on {self.host!r} without a token: anyone who can "
                             f"reach it could run code here. Pass --token T or set {TOKEN_ENV} "
                             "(clients send 'Authorization: Bearer T'), or bind 127.0.0.1")
        if self.backend not in BACKENDS:
            raise ServeError(f"unknown sandbox backend {self.backend!r}; use one of {', '.join(BACKENDS)}")
        if self.limits.suite_time_s is None:
            raise ServeError("the service's limits need a suite_time_s: without it one job could hold "
                             "a sandbox slot for cases x time_s seconds")
        for name in ("workers", "concurrency"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ServeError(f"{name} must be at least 1, got {value}")
        self.caps.check()

    @property
    def sandbox_workers(self) -> int:
        """Sandbox worker processes in use."""
        return self.workers or max(1, os.cpu_count() or 1)

    @property
    def analysis_workers(self) -> int:
        """Analysis worker processes in use: one per CPU and one more, which a request's
        analyses leave to the others (a request uses at most one per CPU at once)."""
        return max(1, os.cpu_count() or 1) + 1

    @property
    def max_concurrent(self) -> int:
        """Requests computed at once."""
        return self.concurrency or 2 * self.sandbox_workers
