"""Fixtures of the analyzer tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardkit.analyzers import clear_cache, shutdown_pool


@pytest.fixture(scope="session", autouse=True)
def _stop_workers() -> Iterator[None]:
    yield
    shutdown_pool()


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    """Start and end with an empty report cache."""
    clear_cache()
    yield
    clear_cache()
