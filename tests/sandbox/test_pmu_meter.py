"""The instruction meter on a kernel counter (``runtime/pmu.py``).

The worker opens a perf counter on each run's first process, held before its
``exec``, inherited by every process and thread the run starts.  Hosts without
a PMU (this project's machines among them) cannot count hardware instructions,
but they all have the kernel's software task clock: the tests drive a real
worker whose counter is that clock, through the very code that counts
instructions on a PMU, and check its totals against the run's CPU time.  The
hardware event itself is checked where the host has one.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys

import pytest

from rewardkit.sandbox import Sandbox, TestSuite
from rewardkit.sandbox.runtime import pmu

pytestmark = pytest.mark.skipif(platform.machine() not in pmu.PERF_EVENT_OPEN,
                                reason=f"no perf_event_open number known for {platform.machine()}")
ONE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "ok\n"}]})
HARDWARE, NO_HARDWARE = pmu.host_event()
WORK = "s = 0\nfor i in range(1_500_000):\n    s += i\n"
INDENTED = "".join("    " + line + "\n" for line in WORK.splitlines())
CODES = {
    "in the run's process": WORK,
    "in a forked child": ("import os\npid = os.fork()\nif pid == 0:\n"
                          f"{INDENTED}    os._exit(0)\nos.waitpid(pid, 0)\n"),
    "in a thread": ("import threading\ndef work():\n"
                    f"{INDENTED}t = threading.Thread(target=work)\nt.start()\nt.join()\n"),
    "in a child it execs": ("import subprocess, sys\n"
                            f"subprocess.run([sys.executable, '-c', {WORK!r}], check=True)\n"),
    # the run's own counters only: the worker's is not the run's to stop
    "after asking the kernel to stop its counters": ("import ctypes\n"
                                                     f"ctypes.CDLL(None).prctl(31, 0, 0, 0, 0)\n{WORK}"),
}
OPEN_COUNTER = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                f"print(libc.syscall({pmu.PERF_EVENT_OPEN.get(platform.machine())}, 0, 0, -1, -1, 0),"
                " ctypes.get_errno())\n")

# A real worker in a process of its own (it enters namespaces), its counter the task clock.
DRIVE = """
import json, sys
import psutil
from rewardkit.sandbox.backends.local import SOURCES_DIR
from rewardkit.sandbox.runtime import pmu, worker
w = worker.Worker("", [], [SOURCES_DIR])
w.pmu_event = {event}
out = {{}}
for name, code in json.loads(sys.argv[1]).items():
    w.handle({{"op": "begin", "code": code, "kind": "program", "meter": "instructions",
              "counter": "pmu", "limits": {{"time_s": 10}}}})
    try:
        out[name] = w.handle({{"op": "run", "stdin": ""}})
    except RuntimeError as exc:
        out[name] = {{"raised": str(exc), "left": len(psutil.Process(w.forker.pid).children())}}
    w.handle({{"op": "end"}})
w.accounting.close()
w.forker.close()
print(json.dumps(out))
"""


def drive(codes: dict[str, str], event: str = "pmu.TASK_CLOCK") -> dict[str, dict]:
    done = subprocess.run([sys.executable, "-c", DRIVE.format(event=event), json.dumps(codes)],
                          capture_output=True, text=True, timeout=300, check=True)  # nosec B603 - fixed argv
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def counted() -> dict[str, dict]:
    return drive({**CODES, "open a counter": OPEN_COUNTER})


@pytest.mark.parametrize("where", sorted(CODES))
def test_the_counter_takes_in_the_work_of_every_process_and_thread(counted: dict[str, dict],
                                                                   where: str) -> None:
    report = counted[where]
    assert report["outcome"] == "ok", report
    # start-up is taken off both figures; what is left is the loop's CPU, counted twice over
    counted_s, timed_s = report["instructions"] / 1e9, report["time_s"]
    assert timed_s > 0.02, report
    assert 0.7 < counted_s / timed_s < 1.4, (where, counted_s, timed_s)


def test_a_run_cannot_open_a_counter_of_its_own(counted: dict[str, dict]) -> None:
    assert counted["open a counter"]["stdout"].split() == ["-1", "1"]  # EPERM


def test_a_counter_the_kernel_refuses_fails_the_worker_not_the_solution() -> None:
    report = drive({"print": "print('ok')\n"}, event="pmu.Event('none', 0xFFFF, 0)")["print"]
    assert "instruction counter could not be attached" in report["raised"], report
    assert report["left"] == 0  # the held run was reaped, not left waiting


@pytest.mark.parametrize(("choice", "has_pmu", "counter"), [
    ("auto", True, "pmu"), ("auto", False, "valgrind"), ("pmu", True, "pmu"), ("pmu", False, None),
    ("valgrind", True, "valgrind"), ("valgrind", False, "valgrind")])
def test_each_choice_gets_its_counter(choice: str, has_pmu: bool, counter: str | None) -> None:
    """What the worker counts with, and what ``Sandbox.isolation`` says it counts with."""
    assert pmu.counter_for(choice, has_pmu) == counter


def test_the_counter_choice_fails_fast_when_it_cannot_be_had(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(pmu.CHOICE, "perf")
    with pytest.raises(ValueError, match="auto, pmu, valgrind"):
        Sandbox(workers=1, meter="instructions")
    if HARDWARE is None:
        monkeypatch.setenv(pmu.CHOICE, "pmu")
        with pytest.raises(ValueError, match="no hardware instruction counter"):
            Sandbox(workers=1, meter="instructions")


def test_the_sandbox_says_which_counter_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    with Sandbox(workers=1, meter="instructions") as sb:
        said = sb.isolation["instruction_counter"]
        assert sb.run("print('ok')", ONE).instructions is not None
        monkeypatch.setenv(pmu.CHOICE, "valgrind")
        chosen = sb.isolation["instruction_counter"]
        monkeypatch.setenv(pmu.CHOICE, "pmu")  # a job now asks the worker for a PMU
        required = sb.isolation["instruction_counter"]
    assert said.startswith("pmu: " if HARDWARE else "valgrind: no hardware instruction counter"), said
    assert chosen == f"valgrind: chosen by {pmu.CHOICE}"
    assert required.startswith("pmu: " if HARDWARE else "none: no hardware instruction counter"), required


@pytest.mark.skipif(HARDWARE is None, reason=f"this host has {NO_HARDWARE}")
def test_hardware_instructions_follow_the_work() -> None:
    def loop(n: int) -> str:
        return f"s = 0\nfor i in range({n}):\n    s += i\nprint('ok')\n"

    with Sandbox(workers=1, meter="instructions") as sb:
        small, again, large = (sb.run(loop(n), ONE).instructions for n in (200_000, 200_000, 400_000))
    assert small and again and large
    assert abs(again - small) < 0.01 * small
    assert 1.7 < large / small < 2.3
