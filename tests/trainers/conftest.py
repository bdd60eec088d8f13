"""Fixtures of the trainer tests: torch on one thread, and the fitted tiny model built once.

Torch is imported only when a test asks for one of these, so that the tests
that need no model (the Afterburner loop, RLEF episodes) start without it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tiny_lm import TinyLM


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
    """The fitted tiny model of :mod:`tiny_lm`, shared by the modules here (trainers load it by its path)."""
    from tiny_lm import build

    with torch_on_one_thread():
        return build(tmp_path_factory.mktemp("tiny"))
