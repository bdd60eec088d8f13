"""``analyze_many(..., backend="ray")``: chunks of sources analysed as Ray tasks.

Each chunk is one task (one CPU) in a Ray worker process, which analyses it on
its own analysis worker (:mod:`.pool`, budget and blame included); that worker
stays warm from task to task.  The driver keeps the report cache and the
de-duplication, and the reports come back in input order.  A chunk whose task
fails (its worker process died, its node was lost) or that is not done by the
batch's deadline is reported as an exception, which :mod:`.batch` turns into a
ToolError for each of its sources.

Ray is used as already initialised in this process; otherwise ``ray.init()``
joins the cluster this machine runs (``RAY_ADDRESS``, ``ray start``) or starts a
local instance.  Every node needs rewardkit and its analysis tools installed.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import Callable
from typing import Any

from ..optional import requires
from .profile import Profile
from .report import QualityReport

Work = Callable[[dict[str, Any], list[object]], list[QualityReport]]
START_MARGIN_S = 120.0  # a fresh Ray worker importing the tools and warming pylint and mypy


def _ray() -> Any:
    """The ``ray`` module, initialised."""
    with requires("ray"):
        import ray
    if not ray.is_initialized():
        ray.init(include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    return ray


def ray_slots() -> int:
    """CPUs of the Ray cluster (at least 1)."""
    return max(1, int(_ray().cluster_resources().get("CPU", 1)))


@functools.cache
def _task(work: Work) -> Any:
    """``work`` as a Ray remote function, made once: Ray exports it once per session, not per batch."""
    return _ray().remote(work).options(num_cpus=1, max_retries=0)


def run_chunks(work: Work, profile: Profile, chunks: list[list[object]],
               slots: int) -> list[list[QualityReport] | Exception]:
    """``work(profile.data, chunk)`` for every chunk as a Ray task: its reports, or why it failed.

    ``slots`` is the cluster's CPU count (:func:`ray_slots`), which paces the batch's deadline.
    """
    ray = _ray()
    task = _task(work)
    refs = [task.remote(profile.data, chunk) for chunk in chunks]
    # the analysis pool in the task kills a tool past its budget, at most twice a source
    per_source = 2 * float(profile.threshold("tool_timeout_s")) * (len(profile.data["tools"]) + 1)
    rounds = math.ceil(sum(map(len, chunks)) / slots)
    deadline = time.monotonic() + START_MARGIN_S + per_source * rounds
    outcomes: list[list[QualityReport] | Exception] = []
    for ref in refs:
        try:
            outcomes.append(ray.get(ref, timeout=max(0.0, deadline - time.monotonic())))
        except ray.exceptions.RayError as exc:
            ray.cancel(ref, force=True)
            outcomes.append(exc)
    return outcomes
