"""A real reward service on loopback, started once for the session in its own process.

The service runs ``python -m rewardkit serve`` with a token and small limits
(64 completions, 1 MiB bodies) on a free port; tests talk to it over HTTP and
compare with rewardkit computed in this process.  The process (and with it
the service's sandbox workers) is stopped at the end of the session.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from serve_helpers import MAX_BATCH, MAX_BODY_MB, Service, start, stop

from rewardkit.rewards import Engine
from rewardkit.sandbox import Sandbox


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    running = start(tmp_path_factory.mktemp("serve") / "service.log", "--workers", "2",
                    "--max-batch", str(MAX_BATCH), "--max-body-mb", str(MAX_BODY_MB))
    yield running
    stop(running)


@pytest.fixture
def http(service: Service) -> Iterator[httpx.Client]:
    with service.client() as client:
        yield client


@pytest.fixture(scope="session")
def engine(sandbox: Sandbox) -> Engine:
    """The in-process side of the comparisons."""
    return Engine(sandbox=sandbox)
