"""Run the reward service with uvicorn (``rewardkit serve``)."""

from __future__ import annotations

import contextlib
import threading
from types import FrameType
from typing import Any

from .app import create_app
from .config import ServeConfig
from .service import Service

GRACE_S = 3  # on a stop signal, how long requests in flight may finish before they are cancelled


def serve(config: ServeConfig, *, log_level: str = "info", access_log: bool = False) -> None:
    """Listen until interrupted; :class:`~rewardkit.serve.config.ServeError` for an unsafe setting.

    One process serves every request, so its sandbox, engines and caches are
    shared; scale the sandbox with ``config.workers``, not with processes.  On
    SIGINT or SIGTERM the service stops taking new work at once (waiting jobs
    are cancelled, their requests answered 503), lets running requests finish
    for ``GRACE_S`` seconds, then stops its sandboxes, which ends the rest.
    """
    import uvicorn

    config.check()
    service = Service(config)

    class Server(uvicorn.Server):
        """uvicorn's server, telling the service to stop taking work as soon as a signal comes."""

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            # off the signal handler: stopping takes the scheduler's locks
            threading.Thread(target=service.stop, daemon=True).start()
            super().handle_exit(sig, frame)

    settings: Any = uvicorn.Config(create_app(config, service), host=config.host, port=config.port,
                                   log_level=log_level, access_log=access_log,
                                   timeout_graceful_shutdown=GRACE_S)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn raises the SIGINT again once stopped
        Server(settings).run()
