"""Shared fixtures: one warm local sandbox for the whole test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rewardkit.sandbox import Sandbox


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=2) as sb:
        yield sb
