"""The one protocol every generator follows: a batch of prompts in, one text per prompt out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

# A prompt is plain text or a chat: a list of {"role": ..., "content": ...} messages.
Prompt = str | list[dict[str, str]]


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters shared by every generator (each maps them to its backend's names)."""

    max_new_tokens: int = 1024
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None


@runtime_checkable
class Generator(Protocol):
    """Anything that turns prompts into completions.

    ``generate`` returns exactly one text per prompt, in order; a prompt the
    backend failed on gives ``""`` and the reason in ``last_errors`` rather
    than an exception, so one bad request does not lose a batch.
    """

    name: str
    last_errors: list[str | None]  # per prompt of the last call: None, or why its text is ""

    def generate(self, prompts: list[Prompt], sampling: Sampling | None = None,
                 **options: Any) -> list[str]:
        """One completion per prompt, in order."""
        ...
