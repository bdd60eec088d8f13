"""Settings of the reward service, and the rule that guards its address."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass, field

from ..sandbox import Limits
from ..sandbox.sandbox import BACKENDS

DEFAULT_PORT = 8765
DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_BATCH = 256
TOKEN_ENV = "REWARDKIT_TOKEN"


class ServeError(ValueError):
    """A setting the service refuses to start with; the message says what to do."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


@dataclass(frozen=True)
class ServeConfig:
    """How the service listens, whom it answers, and how much it takes on.

    ``workers`` is the number of sandbox worker processes, shared by all
    requests (``None``: one per CPU); presets that time code measure 3 times
    and have a pool of their own, started when first needed.  ``concurrency``
    is the number of requests computed at once (``None``: twice the workers);
    the rest wait their turn.  ``limits``
    apply to every run, and bound the limits a ``/run`` request may ask for.
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    workers: int | None = None
    backend: str = "local"
    limits: Limits = field(default_factory=Limits)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_batch: int = DEFAULT_MAX_BATCH
    concurrency: int | None = None

    def check(self) -> None:
        """Raise :class:`ServeError` for a setting the service must not start with."""
        if not is_loopback(self.host) and not self.token:
            raise ServeError(f"refusing to listen on {self.host!r} without a token: anyone who can "
                             f"reach it could run code here. Pass --token T or set {TOKEN_ENV} "
                             "(clients send 'Authorization: Bearer T'), or bind 127.0.0.1")
        if self.backend not in BACKENDS:
            raise ServeError(f"unknown sandbox backend {self.backend!r}; use one of {', '.join(BACKENDS)}")
        for name in ("max_body_bytes", "max_batch"):
            if getattr(self, name) < 1:
                raise ServeError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("workers", "concurrency"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ServeError(f"{name} must be at least 1, got {value}")

    @property
    def sandbox_workers(self) -> int:
        """Sandbox worker processes in use."""
        return self.workers or max(1, os.cpu_count() or 1)

    @property
    def max_concurrent(self) -> int:
        """Requests computed at once."""
        return self.concurrency or 2 * self.sandbox_workers
