"""The instruction meter cannot be forged, blocked or ballooned, and counts children (SPEC §4.6).

``meter="instructions"`` runs the solution under callgrind and reads the count
callgrind writes.  The attacks in :data:`corpus.METER_ATTACKS` do the honest
program's work and then: write their own ``callgrind.out`` (read-only, so
callgrind cannot replace it); let callgrind write through a link that an
untraced process swaps, mid-dump, to a forged count (plain, or padded to
60 MB); make the file a link to ``/dev/null`` (no count at all) or to
``/dev/zero`` (whoever reads it reads zeros without end); make it a FIFO that
a child drains (whoever opens it next to read the count waits forever); or do
the work in a forked child or in a ``python3 -c`` that callgrind does not
follow.  For each: **the run fails, or its count is at least 0.9x the honest
program's** (counts are exact run to run, so 0.9 only absorbs the few
instructions of a fork or a pipe), and either way nothing hangs or balloons.

The honest program and the attacks run in a separate process
(:mod:`.meter_helper`) that holds the ``Sandbox``, i.e. plays the trusted
parent; this test watches that process and its sandbox worker from outside.
Their resident memory during an attack may exceed what they used for the
honest run by at most 256 MB; an attack's run must end within 10 s plus five
times the honest run's time (which includes starting the worker); past
1.5 GB, or past that deadline, everything the helper started is killed and
the test fails.  The helper also runs under a 4 GB address-space limit, a
last guard for the machine.  The attacks that cannot block the reader share
one helper (:func:`safe_batch`); the FIFO and /dev/zero ones get one each.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import psutil
import pytest

from rewardkit.sandbox.runtime import pmu

from . import corpus

pytestmark = pytest.mark.skipif(shutil.which("valgrind") is None,
                                reason="valgrind is not installed: meter='instructions' needs it")

HELPER = Path(__file__).with_name("meter_helper.py")
LIMITS = {"time_s": 2}
COUNT_FACTOR = 0.9
GROWTH_ALLOWED_KB = 256 * 1024
KILL_AT_KB = 1536 * 1024
ADDRESS_SPACE_LIMIT = 4 << 30
FIRST_RUN_TIMEOUT_S = 180.0
POLL_S = 0.02

Recorder = Callable[[str, object], None]


@dataclass
class Watched:
    """What the helper reported, and the peak memory seen of its processes in each phase.

    Phase 0 is the honest run, phase i the i-th code after it.
    """

    phases: int
    results: list[dict[str, Any]] = field(default_factory=list)
    parent_peak_kb: list[float] = field(default_factory=list)
    worker_peak_kb: list[float] = field(default_factory=list)
    stopped: str = ""  # why the watch killed the helper, if it did
    stderr: str = ""

    def __post_init__(self) -> None:
        self.parent_peak_kb = [0.0] * self.phases
        self.worker_peak_kb = [0.0] * self.phases


def _rss_kb(proc: psutil.Process) -> float:
    try:
        return proc.memory_info().rss / 1024
    except psutil.Error:
        return 0.0


def _kill_all(helper: psutil.Process) -> None:
    """SIGKILL the helper and everything it started, each by its pid."""
    try:
        tree = [helper, *helper.children(recursive=True)]
    except psutil.Error:
        tree = [helper]
    for proc in tree:
        with contextlib.suppress(psutil.Error):
            proc.kill()


def _lines(stream: IO[str], into: queue.Queue[str | None]) -> None:
    for line in stream:
        into.put(line)
    into.put(None)


def run_watched(codes: list[tuple[str, str]]) -> Watched:
    """Run ``codes`` (the honest one first) in the helper, watching its memory and its time.

    The honest run may take up to FIRST_RUN_TIMEOUT_S (the worker starts and measures the
    interpreter's start-up first); each later run gets 10 s plus five times the honest run.
    """
    job = {"codes": codes, "suite": corpus.METER_SUITE, "limits": LIMITS}
    watched = Watched(len(codes))
    with tempfile.TemporaryFile(mode="w+") as errors:
        proc = subprocess.Popen([sys.executable, str(HELPER)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=errors, text=True, start_new_session=True,
                                env={**os.environ, pmu.CHOICE: "valgrind"})  # the attacks are on its log
        # inherited by the sandbox worker it starts a moment later
        resource.prlimit(proc.pid, resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps(job))
        proc.stdin.close()
        lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=_lines, args=(proc.stdout, lines), daemon=True).start()
        helper = psutil.Process(proc.pid)
        me = helper.uids().real
        phase_started = time.monotonic()
        allowed, later_allowed = FIRST_RUN_TIMEOUT_S, FIRST_RUN_TIMEOUT_S
        while True:
            phase = min(len(watched.results), len(codes) - 1)
            watched.parent_peak_kb[phase] = max(watched.parent_peak_kb[phase], _rss_kb(helper))
            try:  # the sandbox worker runs as this uid; the solutions it starts do not
                workers = [p for p in helper.children(recursive=True) if p.uids().real == me]
            except psutil.Error:
                workers = []
            worker_kb = max((_rss_kb(p) for p in workers), default=0.0)
            watched.worker_peak_kb[phase] = max(watched.worker_peak_kb[phase], worker_kb)
            if max(worker_kb, _rss_kb(helper)) > KILL_AT_KB:
                watched.stopped = f"ballooned past {KILL_AT_KB // 1024} MB"
            elif time.monotonic() - phase_started > allowed:
                watched.stopped = f"gave no result within {allowed:.0f} s"
            if watched.stopped:
                _kill_all(helper)
                break
            try:
                line = lines.get(timeout=POLL_S)
            except queue.Empty:
                continue
            if line is None:
                break
            watched.results.append(json.loads(line))
            if len(watched.results) == 1:
                later_allowed = 10.0 + 5 * float(watched.results[0]["elapsed_s"])
            phase_started, allowed = time.monotonic(), later_allowed
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            _kill_all(helper)
            proc.wait()
        errors.seek(0)
        watched.stderr = errors.read()[-2000:]
    return watched


def check_attack(watched: Watched, index: int, attack: str, record: Recorder) -> None:
    """The ``index``-th run (``attack``) failed or counted like the honest run, and nothing hung or
    ballooned while it ran."""
    assert watched.results, f"the honest run never reported: {watched.stopped} {watched.stderr}"
    honest = watched.results[0]
    assert honest["status"] == "passed" and honest["instructions"], f"honest run: {honest}"
    result = watched.results[index] if index < len(watched.results) else None
    record("honest", f"{honest['instructions']:,} instructions")
    if result is not None:
        record(attack, f"{result['status']}, {result['instructions']} instructions, "
                       f"{result['elapsed_s']:.1f} s")
    record("parent / worker peak MB (honest, attack)",
           f"{watched.parent_peak_kb[0] / 1024:.0f}, {watched.parent_peak_kb[index] / 1024:.0f} / "
           f"{watched.worker_peak_kb[0] / 1024:.0f}, {watched.worker_peak_kb[index] / 1024:.0f}")
    if result is None:
        raise AssertionError(f"the {attack} run never reported: the helper {watched.stopped or 'ended'}"
                             f" ({'it or an earlier attack' if index > 1 else 'it'} hung or ballooned "
                             f"the worker or the parent)\n{watched.stderr}")
    assert result["status"] != "sandbox_error", f"the sandbox broke: {result['feedback']}"
    for name, peaks in (("parent", watched.parent_peak_kb), ("worker", watched.worker_peak_kb)):
        assert peaks[index] <= peaks[0] + GROWTH_ALLOWED_KB, (
            f"the {name} grew from {peaks[0] / 1024:.0f} MB to {peaks[index] / 1024:.0f} MB "
            "during the attack")
    if result["status"] == "passed":
        count = result["instructions"]
        assert count is not None and count >= COUNT_FACTOR * honest["instructions"], (
            f"the {attack} attack counted {count} instructions; the same work done honestly "
            f"counts {honest['instructions']:,}")


SAFE_ATTACKS = [name for name in corpus.METER_ATTACKS if name not in corpus.BLOCKING_METER_ATTACKS]


@pytest.fixture(scope="module")
def safe_batch() -> Watched:
    """The honest program, then every attack that cannot block the reader, in one helper."""
    return run_watched([("honest", corpus.METER_HONEST)]
                       + [(name, corpus.METER_ATTACKS[name]) for name in SAFE_ATTACKS])


@pytest.mark.parametrize("attack", SAFE_ATTACKS)
def test_the_instruction_count_cannot_be_faked_or_hidden(safe_batch: Watched, attack: str,
                                                         record_property: Recorder) -> None:
    """A forged, swapped or vanished count file, or work in an untraced process, either fails the
    run or leaves a count of at least 0.9x the honest one."""
    check_attack(safe_batch, 1 + SAFE_ATTACKS.index(attack), attack, record_property)


@pytest.mark.parametrize("attack", corpus.BLOCKING_METER_ATTACKS)
def test_the_count_file_cannot_hang_or_balloon_the_worker(attack: str,
                                                          record_property: Recorder) -> None:
    """A FIFO or a link to /dev/zero in place of the count file neither hangs nor balloons the
    worker or the parent, and the count still holds (or the run fails)."""
    watched = run_watched([("honest", corpus.METER_HONEST), (attack, corpus.METER_ATTACKS[attack])])
    check_attack(watched, 1, attack, record_property)
