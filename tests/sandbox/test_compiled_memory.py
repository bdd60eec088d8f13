"""Peak memory of compiled programs is the program's own, not its Python launcher's (issue 15).

The run's first process is a fork of a Python process that execs the program;
Linux keeps the launcher's high-water mark in ``ru_maxrss`` across the exec.
Each accounting method that can run here is checked with real C programs: an
empty one reads well under the launcher's footprint, and one that touches
8 MiB more reads at least ~8 MiB more.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from rewardkit.sandbox import Sandbox
from rewardkit.sandbox.runtime import accounting

EMPTY = "int main(void){return 0;}\n"
# touches 8 MiB page by page and holds it 50 ms, so a 2-50 ms sampler sees it too
TOUCH_8MIB = ("#include <stdlib.h>\n#include <unistd.h>\n"
              "int main(void){volatile char*p=malloc(8<<20);"
              "for(int i=0;i<(8<<20);i+=4096)p[i]=1;usleep(50000);return p[4096]-1;}\n")
SUITE = {"mode": "stdio", "cases": [{"input": "", "output": ""}]}
EIGHT_MIB_KB = 8 * 1024

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler here")


def _launcher_kb() -> float:
    """This process's resident memory: what a fork of it starts with."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return float(line.split()[1])
    raise AssertionError("no VmRSS")


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("compiled")
    built = {}
    for name, source in (("empty", EMPTY), ("touch", TOUCH_8MIB)):
        (folder / f"{name}.c").write_text(source)
        subprocess.run(["gcc", "-O2", "-o", str(folder / name), str(folder / f"{name}.c")], check=True)
        built[name] = str(folder / name)
    return built


def reap_sampling(group: accounting.RunGroup, pid: int, every_s: float) -> tuple[int, Any]:
    """Start ``group``'s run of the forked ``pid`` and wait for it, sampling the group's memory
    every ``every_s`` seconds as a worker does; its wait status and rusage."""
    group.started(pid)
    while True:
        done, status, rusage = os.wait4(pid, os.WNOHANG)
        if done:
            return status, rusage
        group.memory_kb()
        time.sleep(every_s)


def _exec_run(group: accounting.RunGroup, binary: str) -> float:
    """Fork this (large) Python process, exec ``binary`` in the fork, sample it, return its peak KiB."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            group.join()
            os.execv(binary, [binary])
        finally:
            os._exit(127)
    status, rusage = reap_sampling(group, pid, every_s=0.002)
    assert os.waitstatus_to_exitcode(status) == 0
    cost = group.finish(rusage)
    group.close()
    return cost.peak_kb


@needs_gcc
def test_sampled_method_measures_the_exec_d_program(programs: dict[str, str]) -> None:
    launcher = _launcher_kb()
    empty = _exec_run(accounting.SampledRun(execs=True), programs["empty"])
    touch = _exec_run(accounting.SampledRun(execs=True), programs["touch"])
    assert empty < launcher / 2, (empty, launcher)
    assert touch - empty >= EIGHT_MIB_KB * 0.95, (empty, touch)


@needs_gcc
def test_cgroup_method_measures_the_program(programs: dict[str, str]) -> None:
    with Sandbox(workers=1) as sb:
        if not sb.isolation["accounting"]["method"].startswith("cgroup"):
            pytest.skip("no per-run cgroup here")
        first = sb.run(EMPTY, SUITE, language="c")
        touch = sb.run(TOUCH_8MIB, SUITE, language="c")
        again = sb.run(EMPTY, SUITE, language="c")
    assert first.passed and touch.passed and again.passed, (first.feedback, touch.feedback)
    # A run is charged for the page cache it brings in: the first one may pay for libc's pages
    # (768 KiB once, when other tests had pushed them out), which the next runs find cached.
    empty = min(first.peak_memory_kb, again.peak_memory_kb)
    assert empty < 4096, empty  # the worker itself is ~11 MB
    assert touch.peak_memory_kb - empty >= EIGHT_MIB_KB * 0.95, (first, touch, again)
