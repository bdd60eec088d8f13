"""Sandboxes for the attack corpus, one per backend, and a leftover check after every test.

Tests that run on several backends take the ``backend_sandbox`` fixture
through ``@pytest.mark.parametrize("backend_sandbox", BACKENDS, indirect=True)``
(:data:`attacks.BACKENDS`).
Every sandbox here has one worker, so consecutive runs of a test land on the
same worker (the same container with the warm pool; on Ray, each job takes every
CPU of the instance, so one task at a time, normally in the same Ray worker process).  Docker and Ray are
skipped, saying why, when they are not available.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import leftovers
import pytest
from local_ray import LocalRay

from rewardkit.sandbox import Sandbox

_FIXTURES = {"local": "local_sandbox", "docker-fresh": "docker_fresh_sandbox",
             "docker-warm": "docker_warm_sandbox", "ray": "ray_sandbox"}


@pytest.fixture(scope="package")
def local_sandbox() -> Iterator[Sandbox]:
    """One local worker."""
    with Sandbox(workers=1) as sandbox:
        yield sandbox


def _docker_sandbox(warm_pool: bool) -> Iterator[Sandbox]:
    if os.environ.get("REWARDKIT_SKIP_DOCKER") == "1":
        pytest.skip("REWARDKIT_SKIP_DOCKER=1: docker backend skipped on request")
    try:
        sandbox = Sandbox(backend="docker", workers=1, warm_pool=warm_pool)
    except RuntimeError as exc:  # no CLI, no engine or no image: check_docker says which
        pytest.skip(f"docker backend unavailable: {exc}")
    with sandbox:
        yield sandbox


@pytest.fixture(scope="package")
def docker_fresh_sandbox() -> Iterator[Sandbox]:
    """The docker backend, one fresh container per job."""
    yield from _docker_sandbox(warm_pool=False)


@pytest.fixture(scope="package")
def docker_warm_sandbox() -> Iterator[Sandbox]:
    """The docker backend's warm pool: one container serving every job."""
    yield from _docker_sandbox(warm_pool=True)


@pytest.fixture(scope="package")
def ray_sandbox(ray_local: LocalRay) -> Iterator[Sandbox]:
    """The Ray backend on the session's local Ray instance; each job takes both of its CPUs, so
    one job runs at a time."""
    ray_local.ensure()
    with Sandbox(backend="ray", workers=1, num_cpus=2) as sandbox:
        yield sandbox


@pytest.fixture
def backend_sandbox(request: pytest.FixtureRequest) -> Sandbox:
    """The sandbox of the backend named by the test's parameter (one of :data:`BACKENDS`)."""
    sandbox: Sandbox = request.getfixturevalue(_FIXTURES[request.param])
    return sandbox


@pytest.fixture(autouse=True)
def no_leftovers(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every attack test ends by checking that our sandboxes left nothing on the host."""
    callspec = getattr(request.node, "callspec", None)
    backend = str(callspec.params.get("backend_sandbox", "")) if callspec else ""
    before = leftovers.Snapshot.take(containers=backend.startswith("docker"))
    yield
    leftovers.assert_clean(before)
