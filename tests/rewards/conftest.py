"""Shared reward fixtures: one engine over the session's warm sandbox."""

from __future__ import annotations

import pytest

from rewardkit.rewards import Engine
from rewardkit.sandbox import Sandbox


@pytest.fixture(scope="session")
def engine(sandbox: Sandbox) -> Engine:
    return Engine(sandbox=sandbox)
