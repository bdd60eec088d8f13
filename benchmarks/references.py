"""Reference distributions, measured on the machine that evaluates.

Absolute times and memory do not carry across machines, so a benchmark's
references are measured here, with the same sandbox and repeats as the
candidates, and cached on disk keyed by this machine and by what was measured
(code, tests, language, repeats, limits, measurement protocol).  "Time" is
what the sandbox's protocol calls time (:meth:`MeasurementProtocol.time_of`:
CPU time for rewardkit's, elapsed time for Mercury's and Monolith's).  The cache lives under
``$REWARDKIT_CACHE_DIR/references`` (default ``~/.cache/rewardkit``).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ..sandbox import MEASUREMENT_VERSION, ExecutionResult, Limits, MeasurementProtocol, Sandbox
from .problem import Problem, Reference

METRIC_KEYS = ("passed", "status", "time_s", "peak_memory_kb", "integral_kb_s", "spread")


@cache
def machine_id() -> str:
    """A short id of this machine: CPU model and count, OS, architecture, Python version."""
    model = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                 if line.startswith("model name")]
        model = names[0] if names else model
    facts = [platform.node(), model, str(os.cpu_count()), platform.system(), platform.machine(),
             sys.version.split()[0]]
    return hashlib.sha256("|".join(facts).encode()).hexdigest()[:16]


def cache_dir() -> Path:
    """Where this machine's measured references are kept."""
    root = Path(os.environ.get("REWARDKIT_CACHE_DIR", Path.home() / ".cache" / "rewardkit"))
    return root / "references" / machine_id()


def _key(problem: Problem, reference: Reference, sandbox: Sandbox, limits: Limits | None) -> str:
    blob = json.dumps([MEASUREMENT_VERSION, reference.code, problem.tests.to_dict(), problem.language,
                       sandbox.backend, sandbox.meter, sandbox.repeats, sandbox.packages,
                       limits.to_dict() if limits else None, repr(sandbox.protocol)],
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def metrics_of(result: ExecutionResult, protocol: MeasurementProtocol | None = None) -> dict[str, Any]:
    """The part of a sandbox result a reference distribution needs; ``time_s`` is ``protocol``'s time
    (CPU time without one)."""
    data = result.to_dict()
    metrics = {key: data[key] for key in METRIC_KEYS}
    if protocol is not None:
        metrics["time_s"] = protocol.time_of(result)
    return metrics


def measure_references(problems: Sequence[Problem], sandbox: Sandbox, limits: Limits | None = None,
                       progress: bool = True) -> int:
    """Fill ``metrics`` of every reference of ``problems``, from the cache or by running them.

    Measured with ``sandbox``'s meter, repeats and protocol, as the candidates are.
    Returns how many references were run (the rest came from the cache).
    Progress goes to stderr while measuring.
    """
    folder = cache_dir()
    todo: list[tuple[Problem, Reference, Path]] = []
    for problem in problems:
        for reference in problem.references:
            path = folder / f"{_key(problem, reference, sandbox, limits)}.json"
            if path.exists():
                reference.metrics = json.loads(path.read_text())
            else:
                todo.append((problem, reference, path))
    if not todo:
        return 0
    folder.mkdir(parents=True, exist_ok=True)
    jobs = [(ref.code, problem.tests, problem.language) for problem, ref, _ in todo]
    with tqdm(total=len(todo), desc="measuring references", unit="ref", disable=not progress,
              file=sys.stderr) as bar:
        for start in range(0, len(todo), sandbox.workers):
            chunk = slice(start, start + sandbox.workers)
            results = sandbox.run_many(jobs[chunk], limits=limits)
            for (_, reference, path), result in zip(todo[chunk], results, strict=True):
                reference.metrics = metrics_of(result, sandbox.protocol)
                if result.status.value != "sandbox_error":  # faults are not facts about the code
                    path.write_text(json.dumps(reference.metrics))
            bar.update(len(results))
    return len(todo)
