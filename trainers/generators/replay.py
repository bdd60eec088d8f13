"""A generator that proposes texts from a given pool: for tests, ablations and replaying a run."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .base import Prompt, Sampling


class ReplayGenerator:
    """Answers each prompt with the next text from a pool.

    ``pool`` is one sequence of texts used for every prompt in turn, or a
    mapping from a key to its own sequence, with ``key(prompt)`` choosing
    the sequence (e.g. the problem id found in the prompt).  A sequence that
    runs out starts again from its beginning.
    """

    name = "replay"

    def __init__(self, pool: Sequence[str] | Mapping[str, Sequence[str]],
                 key: Callable[[Prompt], str] | None = None) -> None:
        if isinstance(pool, Mapping):
            if key is None:
                raise ValueError("a mapping pool needs key=, a function from a prompt to its pool key")
            self._cycles = {k: itertools.cycle(list(v)) for k, v in pool.items() if v}
        else:
            if not pool:
                raise ValueError("the replay pool is empty")
            self._cycles = {"": itertools.cycle(list(pool))}
        self._key = key or (lambda _prompt: "")
        self.prompts: list[Prompt] = []  # every prompt seen, in order (for tests and logs)
        self.last_errors: list[str | None] = []

    def generate(self, prompts: Iterable[Prompt], sampling: Sampling | None = None,
                 **options: Any) -> list[str]:
        """The next pooled text for each prompt; ``""`` when its key has no pool."""
        out, errors = [], []
        for prompt in prompts:
            self.prompts.append(prompt)
            key = self._key(prompt)
            cycle = self._cycles.get(key)
            out.append(next(cycle) if cycle is not None else "")
            errors.append(None if cycle is not None else f"no replay pool for key {key!r}")
        self.last_errors = errors
        return out
