"""Scratch space: nothing a run writes is seen later, and what it keeps in tmpfs is charged to it.

**Persistence.**  A probe (:data:`corpus.PROBE_WRITABLE`) first walks the
whole file system as the sandbox user and lists every directory it can write
to; on the code before the fix it finds /tmp, /var/tmp, /dev/shm, /run/lock
and its own work dir.  Then a solution plants a marker in each of those
places, plus its HOME, TMPDIR, the work dir's parent and a System V shared
memory segment, and the next run on the same worker (other code) looks for
them; a solution that caches its answer is run twice and must do the work
both times.  Nothing may be found, and nothing may reach the host.

**tmpfs memory.**  Files in a tmpfs are memory that no process's resident
set shows.  240 MB written into /dev/shm or /tmp under
``Limits(memory_mb=100)`` must not pass (a 16 MB control does), and 150 MB
kept there must show in ``peak_memory_kb`` (at least 140 MB).

Every test runs on every backend; docker's /dev/shm is docker's own 64 MB
tmpfs, so the docker runs use /tmp.  Each test removes what its programs
left, on the worker and on the host, whatever the outcome.
"""

from __future__ import annotations

import ctypes
import json
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite

from . import BACKENDS, corpus

Recorder = Callable[[str, object], None]

TMPFS_PLACES = ("/dev/shm", "/tmp")  # nosec B108 - paths inside the sandbox
TMPFS_CASES = [(backend, place) for backend in BACKENDS for place in TMPFS_PLACES
               if not (backend.startswith("docker") and place == "/dev/shm")]
PEAK_FLOOR_KB = 140 * 1024
# the probe's walk stops at its own budget (corpus.PROBE_BUDGET_S), well inside its case's time:
# a walk of a cold file system (a fresh CI machine) outlasted the default 10 s
PROBE_LIMITS = Limits(time_s=3 * corpus.PROBE_BUDGET_S)


@pytest.fixture
def token() -> str:
    """A fresh name part, so that markers of other tests or runs never count."""
    return uuid.uuid4().hex[:12]


def run_and_read(sandbox: Sandbox, code: str, out: Path,
                 limits: Limits | None = None) -> tuple[Status, object]:
    """Run a program that prints JSON; its status and its parsed output (None if it printed none)."""
    out.unlink(missing_ok=True)
    result = sandbox.run(code, TestSuite.from_dict(corpus.recording_suite(str(out))), limits=limits)
    text = out.read_text().strip() if out.exists() else ""
    try:
        return result.status, json.loads(text.splitlines()[-1]) if text else None
    except ValueError:
        return result.status, None


_probed: dict[int, list[str]] = {}


def writable_places(sandbox: Sandbox, tmp_path: Path, record: Recorder) -> list[str]:
    """The directories the probe found writable in this sandbox (probed once per sandbox)."""
    if id(sandbox) not in _probed:
        status, report = run_and_read(sandbox, corpus.PROBE_WRITABLE, tmp_path / "probe.json", PROBE_LIMITS)
        assert status == Status.PASSED and isinstance(report, dict), f"the probe failed: {status}"
        _probed[id(sandbox)] = list(report["writable"])
    record("writable", _probed[id(sandbox)])
    return _probed[id(sandbox)]


def host_shm(key: int) -> int:
    """The id of System V shared memory segment ``key`` in this (the host's) IPC namespace, or -1."""
    libc = ctypes.CDLL(None, use_errno=True)
    return int(libc.shmget(key, 0, 0))


def remove_host_traces(token: str, planted: list[str]) -> list[str]:
    """Delete, on the host, any marker or cache the programs managed to leave there; what was found."""
    found = []
    for path in planted:
        folder = os.path.dirname(path)
        for name in (corpus.marker_name(token), corpus.cache_name(token)):
            target = os.path.join(folder, name)
            if os.path.lexists(target):
                found.append(target)
                os.unlink(target)
    segment = host_shm(corpus.shm_key(token))
    if segment >= 0:
        found.append(f"System V shared memory key {corpus.shm_key(token)}")
        ctypes.CDLL(None).shmctl(segment, 0, None)  # IPC_RMID
    return found


@pytest.fixture
def sweep(backend_sandbox: Sandbox, token: str) -> Iterator[list[str]]:
    """After the test, remove the token's markers and caches in the sandbox and on the host.

    Yields a list for the test to add the paths its programs planted to.
    """
    planted: list[str] = []
    yield planted
    known = sorted({os.path.dirname(p) for p in planted})
    backend_sandbox.run(corpus.sweep_markers(token, known), TestSuite.from_dict(corpus.DONE_SUITE))
    remove_host_traces(token, planted)


# -- persistence ---------------------------------------------------------------------------------
@pytest.mark.parametrize("backend_sandbox", BACKENDS, indirect=True)
def test_a_later_run_finds_nothing_an_earlier_one_wrote(backend_sandbox: Sandbox, token: str,
                                                        sweep: list[str], tmp_path: Path,
                                                        record_property: Recorder) -> None:
    """Markers planted in every writable place (and in System V shared memory) are gone for the
    next run on the same worker, and never reach the host."""
    known = writable_places(backend_sandbox, tmp_path, record_property)
    status, planted = run_and_read(backend_sandbox, corpus.plant_markers(token, known),
                                   tmp_path / "plant.json")
    assert status == Status.PASSED and isinstance(planted, dict), f"the planting run failed: {status}"
    sweep.extend(planted["planted"])
    record_property("planted", planted)
    assert planted["planted"], "the planting run could write nowhere at all, not even its work dir"
    status, seen = run_and_read(backend_sandbox, corpus.find_markers(token, known), tmp_path / "find.json")
    on_host = remove_host_traces(token, planted["planted"])
    assert status == Status.PASSED and isinstance(seen, dict), f"the looking run failed: {status}"
    record_property("found by the next run", seen["found"])
    record_property("found on the host", on_host)
    assert (seen["found"], on_host) == ([], []), (
        f"a later run found what an earlier one left: {seen['found']}; "
        f"on the host: {on_host}")


@pytest.mark.parametrize("backend_sandbox", BACKENDS, indirect=True)
def test_a_cached_answer_is_not_reused(backend_sandbox: Sandbox, token: str, sweep: list[str],
                                       tmp_path: Path, record_property: Recorder) -> None:
    """The same solution run twice on the same worker does its work twice: a cache it wrote in
    the first run is gone in the second, which would otherwise print ``hit`` (wrong answer)."""
    known = writable_places(backend_sandbox, tmp_path, record_property)
    sweep.extend(os.path.join(place, corpus.cache_name(token)) for place in known)
    code = corpus.cached_answer(token, known)
    suite = TestSuite.from_dict(corpus.CACHE_SUITE)
    first = backend_sandbox.run(code, suite)
    second = backend_sandbox.run(code, suite)
    record_property("first", f"{first.status.value} {first.time_s:.3f} s")
    record_property("second", f"{second.status.value} {second.time_s:.3f} s")
    assert first.passed, f"the first run must do the work and pass: {first.feedback}"
    assert second.passed, f"the second run found the first one's cache: {second.feedback}"


# -- tmpfs memory ----------------------------------------------------------------------------------
@pytest.fixture
def tmpfs_sweep(backend_sandbox: Sandbox, token: str) -> Iterator[None]:
    """After the test, remove the token's tmpfs files where the sandbox can (they hold memory)."""
    yield
    backend_sandbox.run(corpus.sweep_tmpfs(TMPFS_PLACES, token), TestSuite.from_dict(corpus.DONE_SUITE))


@pytest.mark.parametrize(("backend_sandbox", "place"), TMPFS_CASES, indirect=["backend_sandbox"])
def test_tmpfs_counts_against_the_memory_limit(backend_sandbox: Sandbox, place: str, token: str,
                                               tmpfs_sweep: None, record_property: Recorder) -> None:
    """240 MB kept in files on a tmpfs under a 100 MB memory limit must not pass."""
    suite = TestSuite.from_dict(corpus.DONE_SUITE)
    limits = Limits(memory_mb=100)
    control = backend_sandbox.run(corpus.fill_tmpfs(place, 16, token + "c"), suite, limits=limits)
    assert control.passed, f"16 MB in {place} must fit in 100 MB: {control.feedback}"
    result = backend_sandbox.run(corpus.fill_tmpfs(place, 240, token), suite, limits=limits)
    record_property("240 MB in tmpfs", f"{result.status.value}, peak {result.peak_memory_kb / 1024:.0f} MB")
    assert result.status not in (Status.PASSED, Status.SANDBOX_ERROR), (
        f"240 MB in {place} passed under memory_mb=100 (peak {result.peak_memory_kb / 1024:.0f} MB)")


@pytest.mark.parametrize(("backend_sandbox", "place"), TMPFS_CASES, indirect=["backend_sandbox"])
def test_tmpfs_memory_shows_in_the_peak(backend_sandbox: Sandbox, place: str, token: str,
                                        tmpfs_sweep: None, record_property: Recorder) -> None:
    """150 MB kept in a tmpfs is memory the run used: the peak shows it."""
    result = backend_sandbox.run(corpus.fill_tmpfs(place, 150, token),
                                 TestSuite.from_dict(corpus.DONE_SUITE))
    record_property("150 MB in tmpfs", f"{result.status.value}, peak {result.peak_memory_kb / 1024:.0f} MB")
    assert result.passed, f"keeping 150 MB in {place} is within the default limits: {result.feedback}"
    assert result.peak_memory_kb >= PEAK_FLOOR_KB, (
        f"150 MB kept in {place} measured a peak of {result.peak_memory_kb / 1024:.0f} MB")


@pytest.mark.parametrize("backend_sandbox", BACKENDS, indirect=True)
def test_call_mode_leaves_nothing_for_the_next_job(backend_sandbox: Sandbox, token: str) -> None:
    """A call-mode solution writes at import time; the next job, also in call mode, finds nothing.

    Call and script jobs end through the worker's ``end``, not a program run,
    so the docker warm pool empties its scratch there too.
    """
    places = ["/tmp", "/var/tmp"] + ([] if backend_sandbox.backend == "docker" else ["/dev/shm"])
    names = [os.path.join(place, corpus.cache_name(token)) for place in places]
    suite = TestSuite.from_dict({"mode": "call", "entry_point": "f",
                                 "cases": [{"args": [], "expected": []}]})
    plant = ("import os\n"
             f"for path in {names!r}:\n"
             "    try:\n"
             "        open(path, 'w').write('x')\n"
             "    except OSError:\n"
             "        pass\n"
             "def f():\n"
             "    return []\n")
    look = f"import os\ndef f():\n    return [p for p in {names!r} if os.path.exists(p)]\n"
    assert backend_sandbox.run(plant, suite).passed
    found = backend_sandbox.run(look, suite)
    assert found.passed, f"a call-mode job found what the previous one wrote: {found.feedback}"
