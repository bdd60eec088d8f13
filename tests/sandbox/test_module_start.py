"""A module job (``call`` and ``script`` modes) starts one process, and judges as it did with two.

The worker used to fork a syntax-check child and then the module's own child
for every module job.  Now the module's child checks the syntax itself, under
the run's limits, uid and group, before the solution loads: one fork per job,
the same compile errors, and the check's CPU time taken off the run's
(``RunGroup.untimed``) whatever the accounting method, so figures stay those
of one compile, as before.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from test_compiled_memory import reap_sampling
from test_feedback_frames import CALL, SCRIPT, STDIO

from rewardkit.sandbox import Sandbox, Status
from rewardkit.sandbox.runtime import accounting

BROKEN = {
    "syntax": "def add(a, b)\n    return a + b\n",
    "null byte": "def add(a, b):\n    return a + b\x00\n",
    "undecodable": "def add(a, b):\n    return '\ud800'\n",
    "too deep to compile": "x = " + "-" * 100_000 + "1\n",
}

# Drives a real worker in a process of its own (it enters namespaces) and counts its runs.
COUNT_RUNS = """
import json, sys
from rewardkit.sandbox.backends.local import SOURCES_DIR
from rewardkit.sandbox.packages import package_paths
from rewardkit.sandbox.runtime import protocol, worker

runs = []
spawn = worker.Worker._spawn
worker.Worker._spawn = lambda self, *a, **k: runs.append(1) or spawn(self, *a, **k)
w = worker.Worker("", package_paths(["sortedcontainers"]), [SOURCES_DIR])
out = {}
for name, code in json.loads(sys.argv[1]).items():
    runs.clear()
    begun = w.handle({"op": "begin", "code": code, "kind": "module", "limits": {"time_s": 5}})
    reply = w.handle({"op": "call", "name": "add", "args": protocol.encode_value([1, 2])}) \\
        if begun.get("ok") else {}
    w.handle({"op": "end"})
    out[name] = {"runs": len(runs), "status": begun.get("status"), "value": reply.get("value")}
w.accounting.close()
print(json.dumps(out))
"""


def test_a_module_job_starts_one_process() -> None:
    codes = {"good": "def add(a, b):\n    return a + b\n", "syntax": BROKEN["syntax"]}
    done = subprocess.run([sys.executable, "-c", COUNT_RUNS, json.dumps(codes)], capture_output=True,
                          text=True, timeout=120, check=True)  # nosec B603 - fixed argv
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["good"] == {"runs": 1, "status": None, "value": 3}, out
    assert out["syntax"] == {"runs": 1, "status": "compile_error", "value": None}, out


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_module_jobs_report_compile_errors_as_the_syntax_check_child_does(sandbox: Sandbox,
                                                                          kind: str) -> None:
    """stdio jobs still check the syntax in a child of its own: the module modes say the same."""
    results = [sandbox.run(BROKEN[kind], suite) for suite in (CALL, SCRIPT, STDIO)]
    assert [r.status for r in results] == [Status.COMPILE_ERROR] * 3, [r.feedback for r in results]
    assert len({r.feedback for r in results}) == 1, [r.feedback for r in results]
    if kind == "syntax":
        assert 'File "solution.py", line 1\n    def add(a, b)\n' in results[0].feedback


def test_a_module_that_compiles_still_passes_and_is_measured(sandbox: Sandbox) -> None:
    code = "def add(a, b):\n    return a + b\n"
    for suite in (CALL, SCRIPT):
        result = sandbox.run(code, suite)
        assert result.status == Status.PASSED, result.feedback
        assert result.time_s > 0 and result.peak_memory_kb > 0, result


def _spin(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def _closed(fd: int) -> bool:
    """Whether descriptor ``fd`` is closed in this process."""
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _charged(group: accounting.RunGroup) -> float:
    """CPU seconds charged to a run that spins 0.3 s untimed, then 0.05 s as the run.

    The run's process exits with status 3 if it still holds the pipe the figure crossed in.
    """
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        status = 1
        try:
            figure = group.descriptors[-1]  # the write end of the untimed figure's pipe
            group.join()
            group.untimed(lambda: _spin(0.3))
            status = 0 if _closed(figure) else 3
            _spin(0.05)
        finally:
            os._exit(status)
    status, rusage = reap_sampling(group, pid, every_s=0.005)
    assert os.waitstatus_to_exitcode(status) == 0, "the run could still write the untimed figure"
    cost = group.finish(rusage)
    group.close()
    return cost.cpu_s


def test_untimed_work_is_not_charged_to_a_sampled_run() -> None:
    assert 0.03 < _charged(accounting.SampledRun()) < 0.2


def test_untimed_work_is_not_charged_to_a_cgroup_run() -> None:
    meter = accounting.detect(root=os.geteuid() == 0)
    if not meter.method.startswith("cgroup"):
        pytest.skip(f"no writable cgroup here ({meter.notes})")
    try:
        assert 0.03 < _charged(meter.new_run(memory_mb=256, processes=16)) < 0.2
    finally:
        meter.close()
