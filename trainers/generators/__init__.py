"""Generators: a local transformers model, any OpenAI-compatible endpoint, and a replay pool."""

from __future__ import annotations

from .base import Generator, Prompt, Sampling

__all__ = ["Generator", "Prompt", "Sampling"]
