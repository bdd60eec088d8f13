"""Generators: a local transformers model, any OpenAI-compatible endpoint, and a replay pool."""

from __future__ import annotations

from .base import Generator, Prompt, Sampling
from .replay import ReplayGenerator

__all__ = ["Generator", "Prompt", "ReplayGenerator", "Sampling"]
