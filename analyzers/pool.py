"""Analysis worker processes under a per-source time budget, and who is to blame when one fails.

``AnalysisPool.analyze(profile, codes, workers)`` splits the sources into jobs
(about two per worker, at most 32 sources each: batch tools are fast on
batches), runs them on warm worker processes (:mod:`.analysis_worker`), and
returns one report per source.  Workers post which sources each tool is on
(:mod:`.progress_board`), and from that:

* A tool that has spent its budget of CPU time on one source
  (:meth:`.Profile.tool_budget`: ``tool_budget_s``, at most ``tool_timeout_s``; the
  worker's CPU time since the parent saw it turn to the source, read every
  ``POLL_S``), or twice that budget of wall clock (a host too busy to give it the
  CPU), is killed with its worker (SIGKILL: it works whatever the tool does, where an
  alarm cannot interrupt compiled code such as mypy's).  The source gets
  ``analysis-timeout``, an input fault (the lowest quality), and the rest of the
  job goes to a fresh worker, so the budget is spent by that source alone.
* A tool call over several sources (mypy checks a job in one call) gets an
  allowance of ``min(budget, 1 s + 0.05 s a source)``; past it the call is
  killed and its sources are retried one per job, each charged the CPU time the
  call took (but left at least half the budget).  A slow source so costs its
  batch about the budget, whichever tool it defeats.
* A worker that dies on its own is retried: the source it was on alone, on a
  fresh worker.  A source that then kills a worker again, alone, with a crash
  (a signal other than SIGKILL, SIGTERM or SIGINT, or an exit status) gets
  ``analysis-crash``.  Every other second death (killed from outside, out of
  memory) on a source, and a second worker that fails to start for it, gives a
  ToolError: an infrastructure fault, which rewards leave out.

Calls from several threads run at once, each on workers of its own (idle
workers are shared between calls), so a slow source holds only the workers of
its own call.  Workers are plain subprocesses: they start the same way whatever the caller's
``__main__`` is, they inherit its environment at start, and they leave when
their parent does (:func:`.analysis_worker.leave_with`).
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess  # nosec B404 - the workers are our own module, started with a fixed argv
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TypeVar

import psutil

from .analysis_worker import MEMORY_MB
from .faults import fault_report, infrastructure_report
from .profile import Profile
from .progress_board import Board
from .report import QualityReport
from .tempdirs import process_root

STARTUP_S = 120.0  # start a worker, import the tools, warm pylint and mypy
POLL_S = 0.2  # how often the boards are read while no answer comes
# A tool call over n sources may take base + n * per source (at most the budget); honest sources
# take about 0.007 s each in a batch (all tools together; HumanEval+ in chunks of 16).
ALLOWANCE_S = (1.0, 0.05)
# Budgets are CPU time, so that a loaded host does not make honest sources overrun them; a turn is
# cut at this many times its budget of wall clock too, so that a starved worker cannot hold a call.
WALL_FACTOR = 2.0
MAX_CHUNK = 32
MAX_IDLE = 8
# A worker whose address space grew past this is replaced after its job, so that a source that
# runs a worker out of memory (an input fault, scored 0) always had at least half of it.
RECYCLE_MB = MEMORY_MB // 2
T = TypeVar("T")
_EXTERNAL = {-signal.SIGKILL, -signal.SIGTERM, -signal.SIGINT, 0}


def chunked(items: Sequence[T], slots: int) -> list[list[T]]:
    """About two chunks per slot, at most ``MAX_CHUNK`` items each."""
    size = max(1, min(MAX_CHUNK, math.ceil(len(items) / (2 * slots))))
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def describe(status: int) -> str:
    """A process's exit status in words."""
    if status >= 0:
        return f"exited with status {status}"
    try:
        return f"killed by {signal.Signals(-status).name}"
    except ValueError:  # a real-time signal has no name
        return f"killed by signal {-status}"


@dataclass
class Turn:
    """What a worker is on: a tool, the sources it turned to (batch positions), since when (wall
    clock), until when (wall clock), the CPU seconds it is allowed, the worker's CPU time when the
    turn was seen (None: not measured), and the CPU seconds it used so far."""

    tool: str = ""
    positions: tuple[int, ...] = ()
    since: float = math.inf
    deadline: float = math.inf
    allowance: float = math.inf
    cpu_since: float | None = None
    used: float = 0.0


class Worker:
    """One worker process, its pipes and board, the job it is on and its current turn."""

    def __init__(self) -> None:
        inbox_r, inbox_w = os.pipe()
        outbox_r, outbox_w = os.pipe()
        root = process_root()
        handle, board = tempfile.mkstemp(prefix="board-", dir=root)
        os.close(handle)
        self.board = Board.create(Path(board))
        env = {**os.environ, "PYLINTHOME": str(root / "pylint-crash-reports-not-kept")}
        self.process = subprocess.Popen(  # nosec B603 - fixed argv, our own module
            [sys.executable, "-m", "rewardkit.analyzers.analysis_worker", str(inbox_r), str(outbox_w), board],
            pass_fds=(inbox_r, outbox_w), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, cwd=root, env=env,
        )
        os.close(inbox_r)
        os.close(outbox_w)
        self.inbox = Connection(inbox_w, readable=False)
        self.outbox = Connection(outbox_r, writable=False)
        self.usage = psutil.Process(self.process.pid)
        self.job: list[int] = []
        self.seen = 0  # the last board post read
        self.turn = Turn()

    @property
    def ready(self) -> bool:
        """Whether the worker posted a turn of its current job (its tools are warm)."""
        return self.turn.since != math.inf

    def start(self, job: list[int], profile: Profile, codes: list[object]) -> bool:
        """Send ``job`` (batch positions) with their sources; False if the worker is gone."""
        posted = self.board.read()
        self.job, self.seen = job, posted.sequence if posted else self.seen
        self.turn = Turn("the analysis", tuple(job), math.inf, time.monotonic() + STARTUP_S)
        try:
            self.inbox.send((profile.data, [codes[p] for p in job]))
        except OSError:
            return False
        return True

    def refresh(self, budget_for: Callable[[list[int], str], float]) -> None:
        """Take the worker's latest post as its turn: the sources it is on and their deadline
        (``budget_for(job, tool)``: the seconds the tool may spend on one of them)."""
        posted = self.board.read()
        if posted is None or posted.sequence <= self.seen:
            return
        self.seen = posted.sequence
        local = range(len(self.job)) if posted.positions is None else posted.positions
        positions = tuple(self.job[i] for i in local)
        n = len(positions)
        budget = budget_for(self.job, posted.tool)
        allowance = budget if n == 1 else min(budget, ALLOWANCE_S[0] + ALLOWANCE_S[1] * n)
        self.turn = Turn(posted.tool, positions, posted.since, posted.since + WALL_FACTOR * allowance,
                         allowance, self.cpu_s())

    def cpu_s(self) -> float | None:
        """The process's CPU time (user and system seconds); None once it is gone."""
        try:
            times = self.usage.cpu_times()
        except psutil.Error:
            return None
        return float(times.user + times.system)

    def overran(self, now: float) -> bool:
        """Whether the current turn is past its wall-clock deadline or has used its CPU
        allowance (what it used is kept in the turn)."""
        if self.turn.cpu_since is not None and (cpu := self.cpu_s()) is not None:
            self.turn.used = cpu - self.turn.cpu_since
        return now >= self.turn.deadline or self.turn.used >= self.turn.allowance

    def end(self) -> int:
        """Kill the process (if still running) and release it; its exit status."""
        if self.process.poll() is None:
            self.process.kill()
        status = self.process.wait()
        self.inbox.close()
        self.outbox.close()
        self.board.discard()
        return status

    def address_space_mb(self) -> float:
        """The process's address space in MiB (what its memory limit bounds); 0 once it is gone."""
        try:
            return float(self.usage.memory_info().vms) / 2**20
        except psutil.Error:
            return 0.0

    def stop(self) -> None:
        """Ask the process to leave; kill it if it does not within 5 s."""
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.inbox.send(None)
            self.process.wait(timeout=5)
        self.end()


@dataclass
class _Batch:
    """One ``analyze`` call: its sources' reports so far, the jobs to do, and per source the
    strikes (deaths of a worker while on it), failed starts of a worker given it, and time
    already charged to it."""

    profile: Profile
    reports: list[QualityReport | None]
    queue: deque[list[int]]
    strikes: dict[int, int] = field(default_factory=dict)
    failed_starts: dict[int, int] = field(default_factory=dict)
    spent: dict[int, float] = field(default_factory=dict)

    def budget(self, job: list[int], tool: str) -> float:
        """Seconds ``tool`` may spend on one source of ``job``: its budget, less what an
        overrun call over several sources took while a lone source was among them."""
        budget = self.profile.tool_budget(tool)
        if len(job) == 1:
            return max(budget - self.spent.get(job[0], 0.0), budget / 2)
        return budget

    def requeue(self, job: list[int], suspects: Sequence[int] = ()) -> None:
        """Queue ``job`` again: each suspect alone, the rest together."""
        alone = set(suspects) & set(job) if len(job) > 1 else set()
        rest = [p for p in job if p not in alone]
        self.queue.extend([p] for p in sorted(alone))
        if rest:
            self.queue.append(rest)

    def finish(self, job: list[int], reports: Sequence[QualityReport]) -> None:
        """The reports of a job's sources."""
        for position, report in zip(job, reports, strict=True):
            self.reports[position] = report

    def overran(self, worker: Worker) -> None:
        """A worker killed past its deadline: blame the one source it was on, or split its job."""
        turn = worker.turn
        if len(turn.positions) == 1:
            budget = self.profile.tool_budget(turn.tool)
            self.reports[turn.positions[0]] = fault_report(
                self.profile, "analysis-timeout",
                f"{turn.tool} did not finish this source within its {budget:g} s budget")
            self.requeue([p for p in worker.job if p not in turn.positions])
            return
        for position in turn.positions:
            self.spent[position] = self.spent.get(position, 0.0) + turn.used
        self.requeue(worker.job, turn.positions)

    def died(self, worker: Worker, how: str, crashed: bool) -> None:
        """A worker died on its own, or did not start in time.  Dying on some sources is a strike
        for each; dying before it began the job, a failed start for each of the job's.  The second
        of either decides a source's report; the rest of the job is retried."""
        suspects = worker.turn.positions if worker.ready else tuple(worker.job)
        tally = self.strikes if worker.ready else self.failed_starts
        for position in suspects:
            tally[position] = tally.get(position, 0) + 1
        decided = {p for p in suspects if tally[p] >= 2}
        for position in decided:
            self.reports[position] = self._verdict(worker, how, crashed)
        self.requeue([p for p in worker.job if p not in decided], suspects if worker.ready else ())

    def _verdict(self, worker: Worker, how: str, crashed: bool) -> QualityReport:
        """The report of a source on its second strike: its own fault if it crashed a worker
        alone, else an infrastructure fault."""
        if crashed and worker.ready and len(worker.job) == 1:
            return fault_report(self.profile, "analysis-crash",
                                f"{worker.turn.tool} crashed its process twice on this source ({how})")
        return infrastructure_report("rewardkit", f"analysis worker {how}")


class AnalysisPool:
    """Warm worker processes, kept between calls; calls from several threads run at once.

    Each call starts up to its ``workers`` processes (taking idle ones first) and
    gives them back when it ends.  :meth:`abort` (from any thread) cuts the calls
    in progress short: their busy workers are killed and their unfinished sources
    get an infrastructure error.
    """

    def __init__(self) -> None:
        self._owner = os.getpid()  # a forked child must not use (or stop) its parent's workers
        self._aborted = threading.Event()
        self._changed = threading.Condition()  # guards the idle workers and the count of calls
        self._idle: list[Worker] = []
        self._calls = 0

    def analyze(self, profile: Profile, codes: list[object], workers: int) -> list[QualityReport]:
        """One report per source, in order; ``workers`` processes at a time."""
        self._adopt()
        with self._changed:
            self._calls += 1
        batch = _Batch(profile, [None] * len(codes), deque(chunked(range(len(codes)), workers)))
        busy: list[Worker] = []
        try:
            while (batch.queue or busy) and not self._aborted.is_set():
                while batch.queue and len(busy) < workers:
                    self._start(busy, batch, batch.queue.popleft(), codes)
                if busy:
                    self._step(busy, batch)
        finally:
            for worker in busy:  # only after an abort or an exception
                worker.end()
            with self._changed:
                self._calls -= 1
                self._changed.notify_all()
        return [r if r is not None else infrastructure_report("rewardkit", "not analysed")
                for r in batch.reports]

    def abort(self) -> None:
        """Cut the calls in progress short, and any started before :meth:`close`."""
        self._aborted.set()

    def close(self) -> None:
        """Wait for the calls in progress to end, then stop the idle workers; later calls run
        again."""
        self._adopt()
        with self._changed:
            self._changed.wait_for(lambda: self._calls == 0)
            idle, self._idle = self._idle, []
            self._aborted.clear()
        for worker in idle:
            worker.stop()

    def _adopt(self) -> None:
        """In a process forked from the owner, forget the owner's workers (and its lock, which
        a thread of the owner may have held at the fork)."""
        if os.getpid() != self._owner:
            self._changed, self._idle, self._calls = threading.Condition(), [], 0
            self._owner = os.getpid()

    def _start(self, busy: list[Worker], batch: _Batch, job: list[int], codes: list[object]) -> None:
        """Give ``job`` to a worker (an idle one, else a new one)."""
        try:
            worker = self._take()
        except OSError as exc:  # no process can be started: the machine's fault
            failed = infrastructure_report("rewardkit", f"cannot start a worker: {exc}")
            batch.finish(job, [failed] * len(job))
            return
        busy.append(worker)
        if not worker.start(job, batch.profile, codes):
            self._died(busy, worker, batch)

    def _take(self) -> Worker:
        while True:
            with self._changed:
                worker = self._idle.pop() if self._idle else None
            if worker is None:
                return Worker()
            if worker.process.poll() is None:
                return worker
            worker.end()

    def _release(self, busy: list[Worker], worker: Worker) -> None:
        busy.remove(worker)
        if worker.address_space_mb() < RECYCLE_MB:
            with self._changed:
                if len(self._idle) < MAX_IDLE:
                    self._idle.append(worker)
                    return
        worker.stop()

    def _step(self, busy: list[Worker], batch: _Batch) -> None:
        """Wait for answers until the nearest deadline (reading the boards every ``POLL_S``);
        handle them, overruns and deaths."""
        for worker in busy:
            worker.refresh(batch.budget)
        timeout = min(POLL_S, max(0.0, min(w.turn.deadline for w in busy) - time.monotonic()))
        readable = wait([w.outbox for w in busy], timeout)
        for worker in list(busy):
            worker.refresh(batch.budget)
            if worker.outbox in readable:
                self._read(busy, worker, batch)
            elif worker.overran(time.monotonic()):
                busy.remove(worker)
                worker.end()
                if worker.ready:
                    batch.overran(worker)
                else:
                    batch.died(worker, "did not start in time", crashed=False)

    def _read(self, busy: list[Worker], worker: Worker, batch: _Batch) -> None:
        """The worker's answer: ``("done", reports)``, or ``("failed", why)``; or its death."""
        try:
            kind, detail = worker.outbox.recv()
        except (EOFError, OSError):
            self._died(busy, worker, batch)
            return
        reports = detail if kind == "done" else [
            infrastructure_report("rewardkit", f"analysis failed: {detail}")] * len(worker.job)
        batch.finish(worker.job, reports)
        self._release(busy, worker)

    def _died(self, busy: list[Worker], worker: Worker, batch: _Batch) -> None:
        busy.remove(worker)
        worker.refresh(batch.budget)  # its last post: the sources it was on
        status = worker.end()
        batch.died(worker, describe(status), crashed=status not in _EXTERNAL)
