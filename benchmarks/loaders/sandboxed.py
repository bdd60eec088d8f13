"""Values computed by dataset code in the sandbox, brought back to the loader as plain data.

A loader that must run a dataset's code (a reference solution's outputs, a
test-case generator) runs it as a ``script`` job whose check is ours: the
check, run in this process, hands the candidate (each call made in the
sandbox) to the job's ``ask`` and keeps what it returns.  Only plain data
crosses; the dataset's code never runs here.  The sandbox must trust its
suites (``trust_suites=True``), since the check is this module's.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from ...sandbox import ExecutionResult, Limits, Sandbox, TestSuite

Ask = Callable[[Any], Any]  # what to do with the candidate (the code's entry point, called in the sandbox)
CHECK = """def check(candidate):
    from rewardkit.benchmarks.loaders.sandboxed import deliver
    deliver({token!r}, candidate)
"""
_ASKS: dict[str, Ask] = {}
_GOT: dict[str, Any] = {}
_LOCK = threading.Lock()


def deliver(token: str, candidate: Any) -> None:
    """Called by a job's check, in this process: keep what the job's ``ask`` makes of the candidate."""
    value = _ASKS[token](candidate)
    with _LOCK:
        _GOT[token] = value


def collect(sandbox: Sandbox, jobs: Sequence[tuple[str, str, Ask]],
            limits: Limits | None = None) -> list[tuple[ExecutionResult, Any]]:
    """Run each ``(code, entry point, ask)`` job once, all in one batch: each job's result and what
    its ``ask`` returned (None when the check did not get that far: the code did not load, or the
    ask raised, which the result says)."""
    tokens = [uuid.uuid4().hex for _ in jobs]
    with _LOCK:
        _ASKS.update(zip(tokens, (ask for _, _, ask in jobs), strict=True))
    try:
        suites = [(code, TestSuite("script", entry_point=entry, check=CHECK.format(token=token)))
                  for (code, entry, _), token in zip(jobs, tokens, strict=True)]
        results = sandbox.run_many(suites, limits=limits, repeats=1)
        return [(result, _GOT.get(token)) for result, token in zip(results, tokens, strict=True)]
    finally:
        with _LOCK:
            for token in tokens:
                _ASKS.pop(token, None)
                _GOT.pop(token, None)
