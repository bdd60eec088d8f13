"""Generators: a local transformers model, any OpenAI-compatible endpoint, and a replay pool.

:class:`TransformersGenerator` lives in :mod:`rewardkit.trainers.generators.local`
and needs the ``train`` extra; it is imported only when first asked for.
"""

from __future__ import annotations

from typing import Any

from .base import Generator, Prompt, Sampling
from .openai import OpenAIGenerator
from .replay import ReplayGenerator

KINDS = ("local", "openai", "replay")

__all__ = ["KINDS", "Generator", "OpenAIGenerator", "Prompt", "ReplayGenerator", "Sampling",
           "TransformersGenerator", "make_generator"]


def make_generator(kind: str, **options: Any) -> Generator:
    """A generator of ``kind`` (one of :data:`KINDS`) built with ``options`` as its keyword arguments."""
    if kind == "local":
        from .local import TransformersGenerator

        return TransformersGenerator(**options)
    if kind == "openai":
        return OpenAIGenerator(**options)
    if kind == "replay":
        return ReplayGenerator(**options)
    raise ValueError(f"unknown generator kind {kind!r}; use one of {', '.join(KINDS)}")


def __getattr__(name: str) -> Any:
    """Import the local generator (torch, transformers) on first use only."""
    if name == "TransformersGenerator":
        from .local import TransformersGenerator

        return TransformersGenerator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
