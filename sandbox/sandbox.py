"""The :class:`Sandbox`: run solutions against test suites, measured and isolated."""

from __future__ import annotations

import atexit
import contextvars
import functools
import logging
import os
import queue
import statistics
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext, suppress
from typing import Any, Protocol, TypeVar

from . import judge, measurement
from .backends.process import WorkerProcess
from .link import WorkerFault
from .measurement import MeasurementProtocol, PairedResult, pair_noise, paired_ratios
from .packages import DEFAULT_PACKAGES, package_paths
from .referee import needs_referee
from .runtime import pmu
from .runtime.languages import resolve_language
from .suite import TestSuite
from .types import ExecutionResult, Limits, Status

log = logging.getLogger("rewardkit.sandbox")

BACKENDS = ("local", "docker", "ray")
METERS = ("time", "instructions")
Job = tuple[str, Any] | tuple[str, Any, str]
Runner = Callable[[str, TestSuite, str, Limits, str], ExecutionResult]
T = TypeVar("T")
R = TypeVar("R")


class NotAdmitted(RuntimeError):
    """Raised by a Sandbox's ``admission`` to turn a job away: the job is not run, and its
    result is a ``sandbox_error`` saying why (the caller's policy, not the code's fault)."""


class WorkerPool:
    """Up to ``size`` workers, each serving one job at a time.

    ``fresh=True`` throws a worker away after every job (the docker backend's
    one-container-per-task mode); otherwise workers stay warm.  A worker that
    fails is replaced.
    """

    def __init__(self, factory: Callable[[], WorkerProcess], size: int, fresh: bool,
                 pin: bool = False) -> None:
        self._factory, self._size, self._fresh, self._pin = factory, size, fresh, pin
        self._started = 0
        self._idle: queue.LifoQueue[WorkerProcess] = queue.LifoQueue()
        self._slots = threading.Semaphore(size)
        self._all: weakref.WeakSet[WorkerProcess] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._closed = False

    @property
    def fresh(self) -> bool:
        """Whether each job gets a worker of its own, thrown away after it."""
        return self._fresh

    @contextmanager
    def lease(self) -> Iterator[WorkerProcess]:
        """Lend an idle or new worker for one job; closed after it if it died or the pool is fresh.

        RuntimeError once the pool is closed: no worker starts after that.
        """
        with self._slots:
            if self._closed:
                raise RuntimeError("the sandbox is closed")
            worker = self._idle_alive() or self._new()
            healthy = False
            try:
                with _beside(worker.cpu):
                    yield worker
                healthy = worker.alive and not self._fresh
            finally:
                if healthy:
                    self._idle.put(worker)
                else:
                    worker.close()

    def _idle_alive(self) -> WorkerProcess | None:
        """An idle worker that is still alive; those that died while idle (killed, out of
        memory) are closed on the way, so a job never starts on one."""
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                return None
            if worker.alive:
                return worker
            worker.close()

    def _new(self) -> WorkerProcess:
        worker = self._factory()
        with self._lock:
            self._all.add(worker)
            slot, self._started = self._started, self._started + 1
        # the n-th worker started and its runs go to its n-th allowed CPU (mod their count), when
        # there is one worker per CPU or a protocol pins runs (Worker.pin)
        reply = worker.request({"op": "pin", "slot": slot % self._size, "always": self._pin,
                                "workers": self._size}, timeout=30.0)
        if not reply.get("ok"):
            worker.close()
            raise RuntimeError(f"could not pin the worker to a CPU: {reply.get('error')}")
        worker.cpu = reply.get("cpu")
        return worker

    def close(self) -> None:
        """Close the idle workers and kill those in the middle of a job (which then ends as a
        ``sandbox_error``): a busy worker would not read its end of input until its job is done."""
        self._closed = True
        idle = []  # held here: the pool's record of its workers is weak
        while not self._idle.empty():
            idle.append(self._idle.get_nowait())
        with self._lock:
            busy = [worker for worker in self._all if worker.alive and all(worker is not w for w in idle)]
        for worker in idle:
            worker.close()
        for worker in busy:
            worker.kill()


@contextmanager
def _beside(cpu: int | None) -> Iterator[None]:
    """Keep the calling thread on ``cpu``, a pinned worker's, while it drives that worker's job,
    then give it back the CPUs it had.  The thread and the job's processes then wake each
    other on one CPU: neither waits for the other to be scheduled on a CPU busy with another
    worker's job, and the frames stay in that CPU's cache.  Unpinned workers (``cpu`` None),
    and a thread that may not run there, leave the thread as it is."""
    before = None
    if cpu is not None:
        with suppress(OSError):
            before = os.sched_getaffinity(0)
            os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        if before is not None:
            with suppress(OSError):
                os.sched_setaffinity(0, before)


_OPEN_POOLS: weakref.WeakSet[WorkerPool] = weakref.WeakSet()


@atexit.register
def _close_open_pools() -> None:
    for pool in list(_OPEN_POOLS):
        pool.close()


class Executor(Protocol):
    """Where a backend runs one job: ``slots`` jobs at a time, never raising for the code's sake."""

    slots: int

    def execute(self, code: str, suite: TestSuite, language: str, limits: Limits,
                meter: str) -> ExecutionResult:
        """Run one job once; infrastructure faults give a ``sandbox_error`` result."""

    def isolation(self) -> dict[str, Any]:
        """What the workers could switch on, from a live worker."""

    def close(self) -> None:
        """Release what this executor started."""


class PoolExecutor:
    """Jobs on a :class:`WorkerPool` (local or docker workers).

    With ``referees`` (a factory of local workers), a suite's own code runs
    on a referee worker leased with the job's worker (:mod:`.referee`), never
    in this process.  A worker fault gives ``sandbox_error`` and the worker is
    replaced; a worker found dead while idle is replaced before a job is given
    to it, and a job whose worker failed before the job began (it could not
    start, or died in the moment between) is tried once more on a fresh one.
    """

    def __init__(self, factory: Callable[[], WorkerProcess], size: int, fresh: bool,
                 referees: Callable[[], WorkerProcess] | None = None, pin: bool = False) -> None:
        self.slots = size
        self._pool = WorkerPool(factory, size, fresh, pin)
        # a job holds at most one referee, so as many referees as workers never wait
        self._referees = WorkerPool(referees, size, fresh=False) if referees else None
        for pool in (self._pool, self._referees):
            if pool is not None:
                _OPEN_POOLS.add(pool)

    def _referee(self, suite: TestSuite) -> AbstractContextManager[WorkerProcess | None]:
        """A referee worker for the job, when its suite has code and is not trusted."""
        if self._referees is None or not needs_referee(suite):
            return nullcontext()
        return self._referees.lease()

    def execute(self, code: str, suite: TestSuite, language: str, limits: Limits,
                meter: str) -> ExecutionResult:
        """Run one job on a leased worker; never raises for a worker's fault."""
        for attempt in (1, 2):
            try:
                with self._pool.lease() as worker, self._referee(suite) as referee:
                    return judge.execute(worker, code, suite, language, limits, meter, referee)
            except WorkerFault as exc:
                fault, again = str(exc), not exc.started
            except Exception as exc:  # the pool could not start a worker
                fault, again = f"could not start a sandbox worker: {type(exc).__name__}: {exc}", True
            log.warning("%s (attempt %d)", fault, attempt)
            if not again:
                break
        return ExecutionResult.sandbox_error(fault, len(suite))

    @contextmanager
    def held(self) -> Iterator[Runner]:
        """A runner of jobs, like :meth:`execute`, that keeps one worker (and referee) for all the
        jobs it runs, so they are measured in the same place.  A worker that fails is replaced
        and the job tried once more on the new one when it had not begun.  A fresh pool (one
        worker per job) gives :meth:`execute` itself: its jobs never share a worker."""
        if self._pool.fresh:
            yield self.execute
            return
        with ExitStack() as held:
            current: list[tuple[WorkerProcess, ExitStack]] = []

            def run(code: str, suite: TestSuite, language: str, limits: Limits,
                    meter: str) -> ExecutionResult:
                for attempt in (1, 2):
                    try:
                        if not current:
                            lease = held.enter_context(ExitStack())
                            current.append((lease.enter_context(self._pool.lease()), lease))
                        worker, lease = current[0]
                        with self._referee(suite) as referee:
                            return judge.execute(worker, code, suite, language, limits, meter, referee)
                    except WorkerFault as exc:
                        fault, again = str(exc), not exc.started
                    except Exception as exc:  # the pool could not start a worker
                        fault, again = f"could not start a sandbox worker: {type(exc).__name__}: {exc}", True
                    if current:  # give the failed worker back (the pool closes it) before another
                        current.pop()[1].close()
                    log.warning("%s (attempt %d)", fault, attempt)
                    if not again:
                        break
                return ExecutionResult.sandbox_error(fault, len(suite))

            yield run

    def isolation(self) -> dict[str, Any]:
        """The isolation a live worker reported when it started."""
        with self._pool.lease() as worker:
            return dict(worker.info.get("isolation", {}))

    def close(self) -> None:
        """Close every worker of the pools."""
        self._pool.close()
        if self._referees is not None:
            self._referees.close()


def in_threads(function: Callable[[T], R], items: Sequence[T], workers: int) -> list[R]:
    """``function`` of each of ``items`` on at most ``workers`` threads, each call in a copy of the
    caller's context (an admission ticket travels with it); the results keep the order."""
    contexts = [contextvars.copy_context() for _ in items]
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(items)))) as pool:
        return list(pool.map(lambda item, context: context.run(function, item), items, contexts))


def _sandbox_with(settings: dict[str, Any]) -> Sandbox:
    return Sandbox(**settings)


class Sandbox:
    """Runs code against test suites in isolated, metered workers.

    >>> from rewardkit.sandbox import Sandbox, TestSuite
    >>> suite = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "2 3\\n", "output": "5\\n"}]})
    >>> with Sandbox(workers=1) as sb:
    ...     sb.run("a, b = map(int, input().split())\\nprint(a + b)", suite).status
    <Status.PASSED: 'passed'>

    ``meter="instructions"`` counts the user-space machine instructions the
    run executes instead of timing it: with the CPU's counter where the kernel
    offers one (about as fast as a timed run), else under valgrind (identical
    run to run, ~50-100x slower); ``REWARDKIT_INSTRUCTION_COUNTER`` (``auto``,
    ``pmu``, ``valgrind``) picks, and ``Sandbox.isolation["instruction_counter"]``
    says which counted.
    ``repeats=k`` runs a passing solution k times and reports medians, with the
    relative spread of each metric in ``ExecutionResult.spread``.
    ``workers`` is how many jobs run at once (default: the CPU count, or with
    ``backend="ray"`` the cluster's task slots).  ``packages`` are the
    third-party packages a Python solution may import (default
    :data:`DEFAULT_PACKAGES`); nothing else installed is visible to it.
    ``trust_suites=False`` runs each suite's own code (evaluator, check,
    definitions) in a sandboxed referee instead of this process: the setting
    for suites that come from someone else, such as a service's clients (see
    :mod:`.referee`).  ``admission``, if given, is entered around every run
    (each repeat too): the reward service uses it to share the workers fairly
    between requests; it may raise :class:`NotAdmitted` to turn the run away.
    ``protocol`` names a measurement protocol (:mod:`.measurement`: ``"rewardkit"``,
    ``"monolith"``, ``"mercury"``) or is a :class:`MeasurementProtocol`: it sets the
    limits, the repeats and how they combine (median or mean), and pins each run to
    one CPU when it says so (``limits`` and ``repeats``, when given, override it).
    Pinning spreads workers over the CPUs this process may use, the n-th worker
    started on the n-th CPU; with more workers than CPUs, some share one (their
    timings then include each other).  Pinning needs the local or docker backend.
    Whatever the protocol, a pool with exactly one worker per CPU (the default
    ``workers``) pins each worker and its runs to a CPU of its own: a job's
    processes wake each other on one CPU instead of across two, and a run's
    threads cannot take time from another worker's run (a run then uses one
    CPU; with fewer workers than CPUs, runs may use them all).
    ``Sandbox.isolation["protocol"]`` names the protocol in reports.
    Backend options go in ``**options``: see :mod:`.backends.docker` and
    :mod:`.backends.ray`.
    """

    def __init__(self, backend: str = "local", workers: int | None = None, meter: str = "time",
                 repeats: int | None = None, limits: Limits | None = None,
                 packages: Sequence[str] = DEFAULT_PACKAGES, trust_suites: bool = True,
                 admission: Callable[[], AbstractContextManager[Any]] = nullcontext,
                 protocol: str | MeasurementProtocol = "rewardkit", **options: Any) -> None:
        self._settings: dict[str, Any] = {
            "backend": backend, "workers": workers, "meter": meter, "repeats": repeats, "limits": limits,
            "packages": tuple(packages), "trust_suites": trust_suites, "admission": admission,
            "protocol": protocol, **options}
        if backend not in BACKENDS:
            raise ValueError(f"unknown sandbox backend {backend!r}; use one of {BACKENDS}")
        if meter not in METERS:
            raise ValueError(f"unknown meter {meter!r}; use 'time' or 'instructions'")
        if meter == "instructions" and pmu.chosen() == "pmu" and backend == "local":
            event, why = pmu.host_event()
            if event is None:
                raise ValueError(f"{pmu.CHOICE}=pmu, but {why} here: unset it or use 'valgrind'")
        self.protocol = measurement.protocol(protocol)
        if repeats is not None and repeats < 1:
            raise ValueError("repeats must be at least 1")
        if self.protocol.cpus is not None and backend == "ray":
            raise ValueError(f"protocol {self.protocol.name!r} pins runs to a CPU, which the ray "
                             "backend cannot do; use backend='local' or 'docker'")
        self.backend, self.meter = backend, meter
        self.repeats = repeats or self.protocol.repeats
        self.limits = limits or self.protocol.limits
        self.packages = tuple(packages)
        package_paths(self.packages)  # fail fast, naming a package that is not installed
        self.trust_suites, self._admission = trust_suites, admission
        self._executor = _open_backend(backend, workers, self.limits, self.packages, trust_suites,
                                       options, pin=self.protocol.cpus is not None)
        self.workers = self._executor.slots
        self._closed = False

    def __reduce__(self) -> tuple[Any, ...]:
        """A sandbox pickles as its settings: the copy starts workers of its own where it lands
        (another process, a Ray task), and this one keeps its own."""
        return _sandbox_with, (self._settings,)

    # -- public API ------------------------------------------------------------------------
    def run(self, code: str, suite: TestSuite | dict[str, Any] | str, language: str = "python",
            limits: Limits | None = None, repeats: int | None = None) -> ExecutionResult:
        """Run ``code`` against ``suite``; never raises because of what the code does."""
        code, parsed = self._checked(code, suite, language)
        limits = limits or self.limits
        first = self._run_once(code, parsed, language, limits)
        count = repeats or self.repeats
        if count == 1 or not first.passed:
            return first
        runs = [first] + [self._run_once(code, parsed, language, limits) for _ in range(count - 1)]
        return combine_runs(runs, self.protocol)

    def run_paired(self, baseline: str, candidates: Sequence[str],
                   suite: TestSuite | dict[str, Any] | str, language: str = "python",
                   limits: Limits | None = None, rounds: int | None = None) -> PairedResult:
        """Measure ``candidates`` against ``baseline`` in interleaved rounds on one worker.

        The runs go baseline, c1 … cG, baseline, cG … c1, baseline, … for ``rounds`` rounds
        (default: ``repeats``), each candidate's order reversed every other round, so that
        each candidate run has a baseline run on either side of its round, taken on the same
        worker moments apart (:func:`.measurement.paired_ratios`).  A candidate stops at
        its first run that does not pass, and so does the baseline, so each verdict is the
        one :meth:`run` with that many repeats gives; a failed baseline leaves no ratios.
        The baseline runs once more than the candidates.  ``admission`` is entered once
        around the whole measurement.
        """
        base, parsed = self._checked(baseline, suite, language)
        codes = [self._checked(code, parsed, language)[0] for code in candidates]
        limits, count = limits or self.limits, rounds or self.repeats
        if count < 1:
            raise ValueError("rounds must be at least 1")
        held: Callable[[], AbstractContextManager[Runner]] = getattr(
            self._executor, "held", lambda: nullcontext(self._executor.execute))
        try:
            with self._admission(), held() as run:
                base_runs = [run(base, parsed, language, limits, self.meter)]
                runs: list[list[ExecutionResult]] = [[] for _ in codes]
                rounds_run: list[list[tuple[int, ExecutionResult]]] = []
                for index in range(count):
                    active = [i for i, done in enumerate(runs) if all(r.passed for r in done)]
                    if not active and not base_runs[-1].passed:
                        break
                    order = active[::-1] if index % 2 else active
                    rounds_run.append([(i, run(codes[i], parsed, language, limits, self.meter))
                                       for i in order])
                    for i, result in rounds_run[-1]:
                        runs[i].append(result)
                    if base_runs[-1].passed:
                        base_runs.append(run(base, parsed, language, limits, self.meter))
        except NotAdmitted as exc:
            refused = ExecutionResult.sandbox_error(f"not run: {exc}", len(parsed))
            return PairedResult(refused, [refused for _ in codes], [{} for _ in codes])
        results = [combine_runs(done, self.protocol) for done in runs]
        ratios = paired_ratios(base_runs, rounds_run, len(codes))
        reference = combine_runs(base_runs, self.protocol)
        for result, paired in zip(results, ratios, strict=True):
            if not (result.passed and reference.passed):
                paired.clear()
        return PairedResult(reference, results, ratios, pair_noise(ratios, base_runs), len(rounds_run))

    def run_many(self, jobs: Iterable[Job], language: str = "python",
                 limits: Limits | None = None, repeats: int | None = None) -> list[ExecutionResult]:
        """Run many ``(code, suite[, language])`` jobs in parallel; results keep the order."""
        items = list(jobs)
        if not items:
            return []

        def one(job: Job) -> ExecutionResult:
            lang = job[2] if len(job) > 2 else language
            return self.run(job[0], job[1], lang, limits, repeats)

        return in_threads(one, items, self.workers)

    @property
    def isolation(self) -> dict[str, Any]:
        """What the workers could switch on (namespaces, uid, ...), from a live worker, and the
        measurement protocol (its name, and ``cpus_per_run``: None when runs are not pinned).
        Under ``meter="instructions"``, ``instruction_counter`` says what counts: ``pmu``,
        ``valgrind`` (or ``none``: a PMU required where the workers have none), and after a colon
        why (the choice, the host's PMU, or what it lacks)."""
        found = self._executor.isolation()
        host = found.pop("pmu", {"counts": False, "note": f"{pmu.NONE} (the worker did not say)"})
        if self.meter == "instructions":
            choice = pmu.chosen()
            counter = pmu.counter_for(choice, bool(host["counts"]))
            why = f"chosen by {pmu.CHOICE}" if choice == "valgrind" else host["note"]
            found["instruction_counter"] = f"{counter or 'none'}: {why}"
        return {**found,
                "protocol": {"name": self.protocol.name, "statistic": self.protocol.statistic,
                             "clock": self.protocol.clock, "cpus_per_run": self.protocol.cpus}}

    def close(self) -> None:
        """Stop the workers; later calls to run raise RuntimeError."""
        if not self._closed:
            self._closed = True
            self._executor.close()

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------------------
    def _checked(self, code: str, suite: TestSuite | dict[str, Any] | str,
                 language: str) -> tuple[str, TestSuite]:
        """The code as text and the suite parsed; ValueError for a suite the language cannot
        run, TypeError for code that is not text, RuntimeError once closed."""
        if self._closed:
            raise RuntimeError("this Sandbox is closed")
        parsed = suite if isinstance(suite, TestSuite) else TestSuite.from_dict(suite)
        refused = parsed.kind.refusal(resolve_language(language).name)
        if refused is not None:
            raise ValueError(refused)
        if isinstance(code, bytes):
            code = code.decode("utf-8", "replace")
        if not isinstance(code, str):
            raise TypeError(f"code must be str, got {type(code).__name__}")
        return code, parsed

    def _run_once(self, code: str, suite: TestSuite, language: str,
                  limits: Limits) -> ExecutionResult:
        try:
            with self._admission():
                return self._executor.execute(code, suite, language, limits, self.meter)
        except NotAdmitted as exc:
            return ExecutionResult.sandbox_error(f"not run: {exc}", len(suite))


def _open_backend(backend: str, workers: int | None, limits: Limits, packages: tuple[str, ...],
                  trust_suites: bool, options: dict[str, Any], pin: bool = False) -> Executor:
    if backend == "ray":
        from .backends.ray import RayExecutor

        return RayExecutor(workers, packages, trust_suites, **options)
    from .backends.local import start_local_worker

    local: Callable[[], WorkerProcess] = functools.partial(start_local_worker, packages)
    if backend == "local":
        if options:
            raise TypeError(f"the local backend takes no options, got {sorted(options)}")
        factory, fresh = local, False
    else:
        from .backends.docker import docker_factory

        factory, fresh = docker_factory(limits, packages, **options)
    # referees run on local workers, whatever runs the solutions
    return PoolExecutor(factory, workers or max(1, os.cpu_count() or 1), fresh,
                        referees=None if trust_suites else local, pin=pin)


METRICS = ("time_s", "wall_s", "peak_memory_kb", "integral_kb_s")


def combine_runs(runs: Sequence[ExecutionResult], protocol: MeasurementProtocol) -> ExecutionResult:
    """Repeated passing runs as one result: each metric combined by ``protocol``'s statistic.

    ``spread`` holds each metric's relative spread, MAD / median, whichever the
    statistic.  The first failed run, if any, is returned as it is.
    """
    if any(r.status != Status.PASSED for r in runs):
        return next(r for r in runs if r.status != Status.PASSED)
    result = ExecutionResult(**{**runs[0].__dict__})
    result.repeats = len(runs)
    result.spread = {}
    for name in METRICS:
        values = [float(getattr(r, name)) for r in runs]
        setattr(result, name, protocol.combine(values))
        median = statistics.median(values)
        mad = statistics.median(abs(v - median) for v in values)
        result.spread[name] = mad / median if median else 0.0
    counts = [r.instructions for r in runs if r.instructions is not None]
    if len(counts) == len(runs):
        result.instructions = round(protocol.combine(counts))
    return result
