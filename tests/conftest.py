"""Shared fixtures: one warm local sandbox, and the fitted tiny model, for the whole test session.

Torch is imported only when a test asks for the model or for one torch thread,
so that the tests that need neither start without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

from rewardkit.sandbox import Sandbox

if TYPE_CHECKING:
    from tiny_lm import TinyLM


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=2) as sb:
        yield sb


@contextmanager
def torch_on_one_thread() -> Iterator[None]:
    """Torch on one thread: on a busy two-core machine two threads wait on each other (~10x slower)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """:func:`torch_on_one_thread` for the rest of the module."""
    with torch_on_one_thread():
        yield


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> TinyLM:
    """The fitted tiny model of :mod:`tiny_lm`, built once for the session (trainers load it by its
    path; nothing writes to it)."""
    from tiny_lm import build

    with torch_on_one_thread():
        return build(tmp_path_factory.mktemp("tiny"))
