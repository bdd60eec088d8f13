"""Ray backend: every job is a Ray task, run by the local backend's worker on its node.

``Sandbox(backend="ray", address=None | "auto" | "ray://host:10001")`` uses the
Ray instance this process already initialised, or calls ``ray.init(address)``:
``None`` joins the cluster this machine runs (``RAY_ADDRESS``, ``ray start``) or
starts a local instance; ``"auto"`` only joins.  Each job is one task with
``num_cpus`` CPUs (default 1) and, with ``resources={"sandbox": 1}``, a custom
resource that keeps jobs on the nodes started with it.  The task runs the job
on a warm local worker kept by the Ray worker process that executes it (started
again if it died), so each node gives exactly the local backend's isolation
(see :mod:`.local`; namespaces and the unprivileged uid need Ray to run as
root), and the verdict is decided in that Ray worker process, outside the
sandboxed one.  Ray runs its workers at nice 15; as root, the worker process
goes back to normal priority before starting the sandbox worker, so that
wall-clock limits mean what they mean locally.  The warm workers end with
their Ray worker processes: when Ray shuts down or this driver exits.

A Ray fault (a worker process killed, a node lost, an object lost, a task
cancelled, or no answer within ``timeout_s``, by default the limits' own bound
plus a start-up margin) submits the job again up to ``retries`` times (default
1), then gives a ``sandbox_error`` result; Ray's own task retries are off, so
the count is this one.  Every node needs rewardkit with the ``[ray]`` extra and
the language toolchains, in the Python environment its Ray workers run.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
from dataclasses import dataclass, field, fields
from typing import Any

from ...optional import MissingExtra
from .. import judge
from ..referee import needs_referee
from ..suite import TestSuite
from ..types import ExecutionResult, Limits
from .local import start_local_worker
from .process import WorkerProcess

try:
    import ray
    from ray.exceptions import GetTimeoutError, RayError, RayTaskError
except ImportError:  # the [ray] extra is not installed: RayExecutor says so
    ray = None  # type: ignore[assignment]

log = logging.getLogger("rewardkit.sandbox")

START_MARGIN_S = 60.0  # on top of the limits' bound: Ray worker and sandbox worker start-up


@dataclass(frozen=True)
class RayOptions:
    """The options of ``Sandbox(backend="ray", ...)``."""

    address: str | None = None
    num_cpus: float = 1.0
    resources: dict[str, float] = field(default_factory=dict)
    retries: int = 1
    timeout_s: float | None = None

    def __post_init__(self) -> None:
        if self.num_cpus <= 0 or any(v <= 0 for v in self.resources.values()):
            raise ValueError("num_cpus and every resource amount must be positive")
        if self.retries < 0:
            raise ValueError("retries must be 0 or more")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive (or None to derive it from the limits)")


# -- inside a Ray worker process ----------------------------------------------------------
class _NodeWorker:
    """This Ray worker process's warm local worker."""

    def __init__(self) -> None:
        self._worker: WorkerProcess | None = None
        self._packages: tuple[str, ...] = ()

    def get(self, packages: tuple[str, ...]) -> WorkerProcess:
        """The warm worker for these importable packages, started when missing, dead or different."""
        if self._worker is None or not self._worker.alive or packages != self._packages:
            self.drop()
            with contextlib.suppress(PermissionError):  # undo Ray's nice 15 (root only)
                os.setpriority(os.PRIO_PROCESS, 0, 0)
            self._worker = start_local_worker(packages)
            self._packages = packages
        return self._worker

    def drop(self) -> None:
        """Close the warm worker, if any."""
        if self._worker is not None:
            self._worker.close()
        self._worker = None


_NODE = _NodeWorker()
_REFEREE = _NodeWorker()  # runs the suite's own code when it is not trusted (see ..referee)
atexit.register(_NODE.drop)
atexit.register(_REFEREE.drop)


def run_job(code: str, suite: TestSuite, language: str, limits: Limits, meter: str,
            packages: tuple[str, ...], trust_suites: bool = True) -> dict[str, Any]:
    """The Ray task: judge one job on this node's warm worker; a worker fault raises."""
    refereed = not trust_suites and needs_referee(suite)
    try:
        referee = _REFEREE.get(packages) if refereed else None
        return judge.execute(_NODE.get(packages), code, suite, language, limits, meter,
                             referee).to_dict()
    except BaseException:
        _NODE.drop()
        _REFEREE.drop()
        raise


def node_isolation(packages: tuple[str, ...]) -> dict[str, Any]:
    """The Ray task behind ``Sandbox.isolation``: what this node's worker could switch on."""
    return dict(_NODE.get(packages).info.get("isolation", {}))


# One remote function each, shared by every RayExecutor (which only sets its placement):
# Ray exports each remote function once per session, and every Ray worker loads it once;
# a new one per Sandbox would be exported and loaded again.
if ray is not None:
    _RUN_JOB = ray.remote(run_job)
    _NODE_ISOLATION = ray.remote(node_isolation)


# -- in the driver ----------------------------------------------------------------------------
class RayExecutor:
    """Submits each job as a Ray task and waits for it, retrying Ray faults ``retries`` times."""

    def __init__(self, workers: int | None, packages: tuple[str, ...], trust_suites: bool = True,
                 **options: Any) -> None:
        if ray is None:
            raise MissingExtra("ray", "ray")
        known = [f.name for f in fields(RayOptions)]
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise TypeError(f"the ray backend takes the options {known}, not {unknown}")
        self.options = RayOptions(**options)
        self.packages, self.trust_suites = packages, trust_suites
        if not ray.is_initialized():
            ray.init(address=self.options.address, include_dashboard=False,
                     log_to_driver=False, logging_level=logging.ERROR)
        placement: dict[str, Any] = {"num_cpus": self.options.num_cpus, "max_retries": 0}
        if self.options.resources:
            placement["resources"] = dict(self.options.resources)
        self._job = _RUN_JOB.options(**placement)
        self._probe = _NODE_ISOLATION.options(**placement)
        self.slots = workers or self._cluster_slots()

    def _cluster_slots(self) -> int:
        """How many tasks with this placement the live nodes run at once (at least 1).

        Counted node by node: the cluster's totals would add one node's CPUs to another's tag.
        """
        wanted = {"CPU": self.options.num_cpus, **self.options.resources}
        slots = 0
        for node in ray.nodes():  # type: ignore[no-untyped-call]
            have: dict[str, float] = node["Resources"] if node["Alive"] else {}
            slots += int(min(have.get(name, 0.0) / amount for name, amount in wanted.items()))
        return max(1, slots)

    def execute(self, code: str, suite: TestSuite, language: str, limits: Limits,
                meter: str) -> ExecutionResult:
        """Run one job as a Ray task; Ray faults are retried, then give ``sandbox_error``."""
        timeout = self.options.timeout_s or judge.reply_timeout(suite, limits, meter) + START_MARGIN_S
        attempts = self.options.retries + 1
        for attempt in range(1, attempts + 1):
            ref = self._job.remote(code, suite, language, limits, meter, self.packages,
                                   self.trust_suites)
            try:
                return ExecutionResult.from_dict(ray.get(ref, timeout=timeout))
            except GetTimeoutError:
                ray.cancel(ref, force=True)
                error = f"no result within {timeout:g} s"
            except RayError as exc:
                error = _describe(exc)
            log.warning("ray sandbox task failed (attempt %d of %d): %s", attempt, attempts, error)
        return ExecutionResult.sandbox_error(f"ray task failed: {error}", len(suite))

    def isolation(self) -> dict[str, Any]:
        """What the worker on the node that ran the probe could switch on."""
        info: dict[str, Any] = ray.get(self._probe.remote(self.packages), timeout=START_MARGIN_S)
        return info

    def close(self) -> None:
        """Nothing to stop here: Ray, and the warm workers in its processes, outlive a Sandbox."""


def _describe(exc: BaseException) -> str:
    """A one-line account of a Ray fault (the task's own exception, if it raised)."""
    if isinstance(exc, RayTaskError) and exc.cause is not None:
        exc = exc.cause
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:300]}" if lines else type(exc).__name__
