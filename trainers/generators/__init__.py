"""Generators: a local transformers model, any OpenAI-compatible endpoint, and a replay pool.

:class:`TransformersGenerator` (:mod:`rewardkit.trainers.generators.local`,
the ``train`` extra) and :class:`OpenAIGenerator`
(:mod:`rewardkit.trainers.generators.openai`, the ``openai`` extra) are
imported only when first asked for, so that the replay generator needs
neither; a missing extra raises :class:`~rewardkit.optional.MissingExtra`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Generator, Prompt, Sampling
from .replay import ReplayGenerator

if TYPE_CHECKING:
    from .local import TransformersGenerator
    from .openai import OpenAIGenerator

KINDS = ("local", "openai", "replay")

__all__ = ["KINDS", "Generator", "OpenAIGenerator", "Prompt", "ReplayGenerator", "Sampling",
           "TransformersGenerator", "make_generator"]


def make_generator(kind: str, **options: Any) -> Generator:
    """A generator of ``kind`` (one of :data:`KINDS`) built with ``options`` as its keyword arguments."""
    if kind == "local":
        from .local import TransformersGenerator

        return TransformersGenerator(**options)
    if kind == "openai":
        from .openai import OpenAIGenerator

        return OpenAIGenerator(**options)
    if kind == "replay":
        return ReplayGenerator(**options)
    raise ValueError(f"unknown generator kind {kind!r}; use one of {', '.join(KINDS)}")


def __getattr__(name: str) -> Any:
    """Import the local (torch, transformers) and OpenAI (openai) generators on first use only."""
    if name == "TransformersGenerator":
        from .local import TransformersGenerator

        return TransformersGenerator
    if name == "OpenAIGenerator":
        from .openai import OpenAIGenerator

        return OpenAIGenerator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
