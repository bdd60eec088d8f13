"""Optional dependencies: a missing one names the extra that installs it.

Modules that need an extra import it through :func:`requires`::

    with requires("train"):
        import torch
        from transformers import AutoTokenizer

A missing module then raises :class:`MissingExtra` (an ``ImportError``) whose
message is the ``pip install`` line to run, and the command line prints that
line instead of a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

# each extra of pyproject.toml and what it is for, as the message says it
EXTRAS = {
    "train": "training with TRL and local models",
    "bench": "plots and the HumanEval dataset",
    "ray": "the Ray backend",
    "serve": "the HTTP reward service",
    "openai": "OpenAI-compatible generators",
    "envs": "the agentic RL frameworks rewardkit.envs adapts: OpenEnv, skyrl-gym, verifiers",
}


class MissingExtra(ImportError):
    """A module of an optional extra is not installed; the message says what to install."""

    def __init__(self, module: str, extra: str) -> None:
        self.extra = extra
        super().__init__(f"{module} is not installed; it comes with rewardkit's [{extra}] extra "
                         f"({EXTRAS[extra]}): pip install 'rewardkit[{extra}]'", name=module)


@contextmanager
def requires(extra: str) -> Iterator[None]:
    """Turn a ``ModuleNotFoundError`` raised inside the block into :class:`MissingExtra`."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}: one of {sorted(EXTRAS)}")
    try:
        yield
    except ModuleNotFoundError as exc:
        if isinstance(exc, MissingExtra) or (exc.name or "").startswith("rewardkit"):
            raise  # already explained, or a packaging fault of ours that no extra mends
        raise MissingExtra((exc.name or str(exc)).split(".")[0], extra) from exc
