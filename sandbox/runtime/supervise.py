"""Watching one run: its pipes, its deadline, its memory, its exit.

:class:`Child` owns a run's forked first process, the worker's ends of its
pipes and the run's accounting group (:mod:`.accounting`).  :meth:`Child.pump`
runs a single select loop that reads output (killing the run past the output
cap, and past it for call replies too), forwards call requests, samples the
memory the whole run holds for the memory-time integral, and enforces the
wall-clock deadline.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Literal, overload

from . import accounting, callgrind, isolation, pmu, protocol

STDERR_TAIL = 8192
REPLY_PIPE_BYTES = 1 << 20  # a module child's reply pipe holds this much; one read takes at most this
_PIPES = protocol.ReadBuffer(REPLY_PIPE_BYTES)  # every run's pipes are read into it, one at a time
MALFORMED_REPLY = ("sandbox: the solution's process wrote a reply that is not a frame (not JSON, not an "
                   "object, or nested too deep); a solution must not write on the call pipe\n")


def integral_trapezoid(samples: list[tuple[float, float]]) -> float:
    """∫ rss dt over (seconds, KiB) samples by the trapezoid rule, in KiB·s."""
    return sum((r0 + r1) / 2.0 * (t1 - t0) for (t0, r0), (t1, r1) in pairwise(samples))


def sample_interval(elapsed: float) -> float:
    """Seconds until the next memory sample: geometric spacing, 2 to 50 ms.

    Every sample wakes the worker and can steal the child's core; sampling
    every millisecond inflated an 80 ms program's CPU time by ~10% and tripled
    its run-to-run spread here, while ~13 samples per 80 ms keep the trapezoid
    close for the smooth memory curves of real programs.
    """
    return min(0.05, max(0.002, elapsed * 0.3))


def defer_to_runs() -> None:
    """Let this process's wakeups wait for the running run to block or use up its time slice
    (SCHED_BATCH) rather than preempt it.

    A module run writes a reply frame per call; a worker that takes the CPU for each one
    costs two context switches and a pass of its loop per call, and takes the run's cache.
    Deferring, it reads the frames together.  A deadline or a memory sample is late by a
    time slice at most (milliseconds).  What this process forks inherits the policy; a run
    goes back to SCHED_OTHER as it starts (:func:`.launch.enter`).  Where the policy cannot
    be set, nothing changes.
    """
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))


@dataclass
class Usage:
    """What one run cost, every process of it together, in seconds, KiB and KiB·s."""

    time_s: float = 0.0
    wall_s: float = 0.0
    peak_kb: float = 0.0
    integral_kb_s: float = 0.0
    exit_code: int | None = None
    signal: int | None = None
    killed: str | None = None  # "timeout" | "output" | "malformed" when the worker killed it
    oom_killed: bool = False  # the kernel killed a process of it at the memory limit

    def to_dict(self) -> dict[str, Any]:
        """The fields as a dict, merged into the worker's report."""
        return dict(self.__dict__)


Reaper = Callable[[int], tuple[int, Any]]  # a run's pid -> its wait status and rusage, once reaped


@dataclass
class Child:
    """A forked child, the worker's ends of its pipes, and what was seen of it so far.

    A run the fork server forked comes with the ``pidfd`` it opened and its ``reaper``
    (the worker is not its parent); otherwise the worker opens one and reaps the run itself.
    """

    pid: int
    iso: isolation.Isolation
    group: accounting.RunGroup
    stdout_fd: int
    stderr_fd: int
    output_cap: int
    request_fd: int | None = None
    reply_fd: int | None = None
    log_fd: int | None = None  # valgrind's log, under the instruction meter with valgrind
    counter_fd: int | None = None  # the PMU counter, under the instruction meter with a PMU
    pidfd: int | None = None
    reaper: Reaper | None = None
    started: float = field(default_factory=time.monotonic)
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    log: bytearray = field(default_factory=bytearray)
    killed: str | None = None
    exited: bool = False
    counted: int | None = None  # the PMU counter's total, read at reap
    _samples: list[tuple[float, float]] = field(default_factory=list)
    _outbox: bytearray = field(default_factory=bytearray)
    _frames: protocol.FrameBuffer = field(init=False)
    _open: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        # a reply may be as large as the output a run may print, and no larger
        self._frames = protocol.FrameBuffer(limit=self.output_cap + 65536, nesting=protocol.MAX_NESTING)
        self._pidfd = os.pidfd_open(self.pid) if self.pidfd is None else self.pidfd
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._pidfd, selectors.EVENT_READ)
        for fd in (self.stdout_fd, self.stderr_fd, self.reply_fd, self.log_fd):
            if fd is not None:
                os.set_blocking(fd, False)
                self._selector.register(fd, selectors.EVENT_READ)
                if fd != self.log_fd:  # the meter's FIFO never ends: read out at reap
                    self._open.add(fd)
        if self.request_fd is not None:
            os.set_blocking(self.request_fd, False)
        self._sample()

    @property
    def reply_bytes(self) -> int:
        """The size of every reply frame read from the child so far."""
        return self._frames.popped_bytes

    # -- driving -----------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        """Queue a request frame; :meth:`pump` writes it as the pipe takes it."""
        self._outbox += protocol.encode_frame(message)

    @overload
    def pump(self, deadline: float, want_frame: bool = False,
             text: Literal[False] = False) -> dict[str, Any] | None: ...

    @overload
    def pump(self, deadline: float, want_frame: bool, text: Literal[True]) -> protocol.JsonText | None: ...

    def pump(self, deadline: float, want_frame: bool = False,
             text: bool = False) -> dict[str, Any] | protocol.JsonText | None:
        """Run until the child exits (or a reply frame arrives, if wanted).

        Returns the frame (with ``text``, its checked body: :meth:`.FrameBuffer.pop`), or
        None when the child is gone (exited or killed).
        """
        while not self.exited:
            if want_frame:
                frame = self._next_frame(text)
                if frame is not None:
                    return frame
            self._sync_outbox()
            now = time.monotonic()
            if now >= deadline:
                self.kill("timeout")
                break
            interval = sample_interval(now - self.started)
            for key, _ in self._selector.select(min(interval, deadline - now)):
                self._on_ready(key.fd)
            self._sample()
        isolation.sweep(self.iso, reap=False)  # in a container: what it left ends with it
        self._drain()
        return self._next_frame(text) if want_frame else None

    def _next_frame(self, text: bool = False) -> dict[str, Any] | protocol.JsonText | None:
        """The next reply frame; a reply over the cap (``output``), or one that is not a frame
        at all (``malformed``: the solution wrote on the call pipe itself), ends the run."""
        try:
            return self._frames.pop_text() if text else self._frames.pop()
        except protocol.OversizedFrame:
            self.kill("output")
        except (protocol.ProtocolError, ValueError):
            self.kill("malformed")
        return None

    def _sync_outbox(self) -> None:
        if not self._outbox or self.request_fd is None:
            return
        try:
            written = os.write(self.request_fd, self._outbox)
        except BlockingIOError:  # the pipe is full: the next round tries again
            written = 0
        except OSError:  # the child closed its end: it will never read the rest
            written = len(self._outbox)
        del self._outbox[:written]

    def _on_ready(self, fd: int) -> None:
        if fd == self._pidfd:
            self.exited = True
            return
        try:
            chunk = _PIPES.read(fd)
        except BlockingIOError:
            return
        except OSError:
            chunk = memoryview(b"")
        if not chunk:
            self._selector.unregister(fd)
            self._open.discard(fd)
            return
        if fd == self.reply_fd:
            self._frames.feed(chunk)
            # unpopped: at most a frame in progress (its header and body) and one read
            if self._frames.pending > self._frames.limit + 8 + REPLY_PIPE_BYTES:
                self.kill("output")
            return
        if fd == self.log_fd:
            self._on_ready_log(chunk)
            return
        buffer = self.stdout if fd == self.stdout_fd else self.stderr
        buffer += chunk
        if len(self.stdout) + len(self.stderr) > self.output_cap:
            self.kill("output")
        elif len(self.stderr) > 4 * STDERR_TAIL:
            del self.stderr[: len(self.stderr) - STDERR_TAIL]

    def _drain(self, grace: float = 0.5) -> None:
        """Collect what is still in the pipes once the child is gone."""
        end = time.monotonic() + grace
        while self._open and time.monotonic() < end and self.killed != "output":
            events = self._selector.select(max(0.0, end - time.monotonic()))
            if not events:
                break
            for key, _ in events:
                if key.fd != self._pidfd:
                    self._on_ready(key.fd)

    def _read_log(self, fd: int) -> None:
        """Everything valgrind has written so far (its processes are gone by now)."""
        with contextlib.suppress(BlockingIOError, OSError):
            while chunk := os.read(fd, 65536):
                self._on_ready_log(chunk)

    def _on_ready_log(self, chunk: bytes | memoryview) -> None:
        self.log += chunk
        del self.log[: max(0, len(self.log) - callgrind.LOG_CAP)]

    def _sample(self) -> None:
        held = self.group.memory_kb()
        if held is not None and not self.exited:
            self._samples.append((time.monotonic() - self.started, held))

    def close_requests(self) -> None:
        """Close the request pipe: the child's call server sees EOF and exits."""
        if self.request_fd is not None:
            os.close(self.request_fd)
            self.request_fd = None

    def kill(self, reason: str) -> None:
        """Kill the child's process tree, remembering the first reason (timeout, output, ...)."""
        if self.killed is None:
            self.killed = reason
        isolation.kill_tree(self.pid, self.iso)

    # -- finishing -----------------------------------------------------------------
    def reap(self) -> Usage:
        """Wait for the run to end, close every pipe, and account for the cost of all of it."""
        if not self.exited:
            self.kill(self.killed or "ended")
        if self.reaper is not None:
            status, rusage = self.reaper(self.pid)
        else:
            _, status, rusage = os.wait4(self.pid, 0)
        wall = time.monotonic() - self.started
        isolation.sweep(self.iso)  # in a container: what the run left running
        if self.killed != "output":
            self._drain(grace=0.2)
        if self.log_fd is not None:
            self._read_log(self.log_fd)
        for fd in [self._pidfd, self.stdout_fd, self.stderr_fd, self.reply_fd, self.request_fd,
                   self.log_fd]:
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._selector.close()
        cost = self.group.finish(rusage)
        accounting.kill_group(self.group)
        self.group.close()
        if self.counter_fd is not None:  # every process of the run has ended: its count is whole
            self.counted = pmu.read(self.counter_fd)
            os.close(self.counter_fd)
        samples = self._samples or [(0.0, cost.peak_kb)]
        samples = [(0.0, samples[0][1]), *samples, (wall, samples[-1][1])]
        return Usage(
            time_s=cost.cpu_s,
            wall_s=wall,
            peak_kb=max(cost.peak_kb, max(kb for _, kb in samples)),
            integral_kb_s=integral_trapezoid(samples),
            oom_killed=cost.oom_killed,
            exit_code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
            signal=os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
            killed=self.killed,
        )

    def instructions(self) -> int | None:
        """The run's instruction count, once reaped: the PMU counter's, else the sum of valgrind's
        log; None when neither counted it."""
        return self.counted if self.counter_fd is not None else callgrind.count(bytes(self.log))

    def stderr_tail(self) -> str:
        """The last 8 KiB of the child's stderr, decoded; after a malformed reply, a line that
        says so."""
        tail = bytes(self.stderr[-STDERR_TAIL:]).decode("utf-8", "replace")
        if self.killed != "malformed":
            return tail
        return tail + ("\n" if tail and not tail.endswith("\n") else "") + MALFORMED_REPLY
