"""Run the reward service with uvicorn (``rewardkit serve``)."""

from __future__ import annotations

from .app import create_app
from .config import ServeConfig


def serve(config: ServeConfig, *, log_level: str = "info", access_log: bool = False) -> None:
    """Listen until interrupted; :class:`~rewardkit.serve.config.ServeError` for an unsafe setting.

    One process serves every request, so its sandbox, engines and caches are
    shared; scale the sandbox with ``config.workers``, not with processes.
    """
    import uvicorn

    config.check()
    uvicorn.run(create_app(config), host=config.host, port=config.port, log_level=log_level,
                access_log=access_log, timeout_graceful_shutdown=10)
