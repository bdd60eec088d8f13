"""The HTTP reward service, ``rewardkit serve`` (its application needs the ``[serve]`` extra).

``POST /score`` (completions + columns + preset -> rewards with components),
``POST /run`` (sandbox), ``POST /analyze`` (quality), ``POST /openrlhf``
(OpenRLHF's remote reward protocol), ``GET /presets/{name}``, ``GET /health``;
the OpenAPI document is at ``/openapi.json``.  The application is
:func:`rewardkit.serve.app.create_app`, run by :func:`rewardkit.serve.server.serve`;
:class:`rewardkit.client.RemoteReward` is its client for TRL,
:func:`rewardkit.client.compute_score` for verl.  Importing this package
needs no FastAPI: only the settings live here.
"""

from .config import Caps, ServeConfig, ServeError, is_loopback

__all__ = ["Caps", "ServeConfig", "ServeError", "is_loopback"]
