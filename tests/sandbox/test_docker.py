"""The docker backend against a real engine (SPEC §3.1, §6).

Skipped only when REWARDKIT_SKIP_DOCKER=1; without an engine or image these
tests fail, telling you to run ``rewardkit docker setup``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import time
from collections.abc import Iterator

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite
from rewardkit.sandbox.backends.docker import LABEL, docker_factory, leftover_containers

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(os.environ.get("REWARDKIT_SKIP_DOCKER") == "1",
                       reason="REWARDKIT_SKIP_DOCKER=1: docker backend tests skipped on request"),
]

ADD = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "2 3\n", "output": "5\n"},
                                                      {"input": "10 -4\n", "output": "6\n"}]})
ADD_CODE = "a, b = map(int, input().split())\nprint(a + b)\n"
QUICK = Limits(time_s=3, memory_mb=256, output_kb=1024)
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def expect(output: str) -> TestSuite:
    return TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": output}]})


def new_containers(before: set[str]) -> set[str]:
    """Sandbox containers that exist now and did not before (module fixtures hold theirs)."""
    return set(leftover_containers()) - before


def running_sandbox_names() -> list[str]:
    out = subprocess.run(["docker", "ps", "--format", "/{{.Names}}", "--filter", f"label={LABEL}"],
                         capture_output=True, text=True, check=True)
    return out.stdout.split()


@pytest.fixture(scope="module")
def fresh() -> Iterator[Sandbox]:
    """One container per job (the default)."""
    before = set(leftover_containers())
    with Sandbox(backend="docker", workers=1, limits=QUICK) as sb:
        yield sb
    assert new_containers(before) == set()


@pytest.fixture(scope="module")
def warm() -> Iterator[Sandbox]:
    """One warm container serving every job."""
    before = set(leftover_containers())
    with Sandbox(backend="docker", workers=1, warm_pool=True, limits=QUICK) as sb:
        yield sb
    assert new_containers(before) == set()


def test_stdio_pass(fresh: Sandbox) -> None:
    before = set(leftover_containers())
    result = fresh.run(ADD_CODE, ADD)
    assert result.status == Status.PASSED, result.feedback
    assert result.tests_passed == 2
    assert new_containers(before) == set()  # fresh mode: the container went with the job


def test_runs_are_sched_other_in_a_container(warm: Sandbox) -> None:
    """The worker in the container defers to its runs (SCHED_BATCH); they start as SCHED_OTHER."""
    result = warm.run("import os\nprint(os.sched_getscheduler(0), os.sched_getscheduler(1))\n",
                      expect(f"{os.SCHED_OTHER} {os.SCHED_BATCH}\n"))
    assert result.passed, result.feedback


def test_call_mode_pass(fresh: Sandbox) -> None:
    suite = {"mode": "call", "entry_point": "Solution.twoSum",
             "cases": [{"args": [[2, 7, 11, 15], 9], "expected": [0, 1]},
                       {"args": [[3, 2, 4], 6], "expected": [1, 2]}]}
    code = ("class Solution:\n"
            "    def twoSum(self, nums: List[int], target: int) -> List[int]:\n"
            "        seen = {}\n"
            "        for i, n in enumerate(nums):\n"
            "            if target - n in seen:\n"
            "                return [seen[target - n], i]\n"
            "            seen[n] = i\n")
    result = fresh.run(code, suite)
    assert result.status == Status.PASSED, result.feedback


def test_wrong_answer(fresh: Sandbox) -> None:
    result = fresh.run("a, b = map(int, input().split())\nprint(a - b)\n", ADD)
    assert result.status == Status.WRONG_ANSWER
    assert result.tests_passed == 0


def test_timeout_leaves_no_container() -> None:
    before = set(leftover_containers())
    sb = Sandbox(backend="docker", workers=1, limits=Limits(time_s=1))
    try:
        result = sb.run("while True:\n    pass\n", ADD)
        assert result.status == Status.TIMEOUT, result.feedback
    finally:
        sb.close()
    assert new_containers(before) == set()


def test_hung_worker_is_killed_and_its_container_removed() -> None:
    before = set(leftover_containers())
    factory, fresh = docker_factory(Limits(time_s=60))
    assert fresh
    worker = factory()
    assert len(new_containers(before)) == 1
    hang = {"op": "begin", "kind": "module", "language": "python", "code": "import time\ntime.sleep(60)\n",
            "limits": {"time_s": 60}, "meter": "time"}
    with pytest.raises(RuntimeError, match="did not answer"):
        worker.request(hang, timeout=1)  # WorkerGone: the CLI is killed, the container removed
    assert not worker.alive
    assert new_containers(before) == set()


def test_no_network(fresh: Sandbox) -> None:
    code = ("import os, socket\n"
            "print(sorted(os.listdir('/sys/class/net')))\n"
            "socket.create_connection(('1.1.1.1', 53), timeout=3)\n"
            "print('connected')\n")
    result = fresh.run(code, expect("['lo']\nconnected\n"))
    assert result.status == Status.RUNTIME_ERROR, result.feedback
    assert "OSError" in result.feedback or "unreachable" in result.feedback


def test_read_only_root_and_hidden_host(fresh: Sandbox) -> None:
    code = ("import os\n"
            "out = []\n"
            "for path in ('/etc/rk', '/rk', '/var/tmp/rk', '/opt/rewardkit/runtime/rk', '/usr/bin/rk'):\n"
            "    try:\n"
            "        open(path, 'w').write('x')\n"
            "        out.append('wrote ' + path)\n"
            "    except OSError:\n"
            "        out.append('denied')\n"
            "open('/tmp/rk-scratch', 'w').write('tmp is writable')\n"
            f"out.append('host visible' if os.path.exists({REPO!r}) else 'host hidden')\n"
            "out.append(str(os.getuid()))\n"
            "print(' '.join(out))\n")
    result = fresh.run(code, expect("denied denied denied denied denied host hidden 65534\n"))
    assert result.status == Status.PASSED, result.feedback


@pytest.mark.parametrize("loop", ["os.fork()", "try:\n        os.fork()\n    except OSError:\n        pass"])
def test_fork_bomb_is_contained(warm: Sandbox, loop: str) -> None:
    started = time.monotonic()
    result = warm.run(f"import os\nwhile True:\n    {loop}\n", expect("done\n"))
    assert result.status in (Status.TIMEOUT, Status.RUNTIME_ERROR), result.feedback
    assert time.monotonic() - started < 30
    after = warm.run(ADD_CODE, ADD)  # the same container is clean and usable again
    assert after.status == Status.PASSED, after.feedback


def test_leftover_daemon_and_files_are_gone_between_jobs(warm: Sandbox) -> None:
    daemon = ("import os, time\n"
              "if os.fork() == 0:\n"
              "    os.setsid()\n"
              "    if os.fork() == 0:\n"
              "        open('/tmp/rk-daemon', 'w').write(str(os.getpid()))\n"
              "        time.sleep(600)\n"
              "    os._exit(0)\n"
              "time.sleep(0.3)\n"
              "print('done')\n")
    assert warm.run(daemon, expect("done\n")).status == Status.PASSED
    probe = ("import os\n"  # the container holds the worker (pid 1) and this probe, nothing else
             "others = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())]\n"
             "print('gone' if not others and not os.path.exists('/tmp/rk-daemon') else f'left {others}')\n")
    result = warm.run(probe, expect("gone\n"))
    assert result.status == Status.PASSED, result.feedback


@pytest.mark.parametrize("code", ["x = bytearray(1 << 34)\n",
                                  "x = []\nwhile True:\n    x.append(' ' * (1 << 20))\n"])
def test_memory_bomb(fresh: Sandbox, code: str) -> None:
    result = fresh.run(code, expect("done\n"))
    assert result.status in (Status.MEMORY_EXCEEDED, Status.RUNTIME_ERROR), result.feedback
    assert not result.passed


def test_isolation_reports_the_container(warm: Sandbox) -> None:
    container = warm.isolation["container"]
    assert container["network"] == "none" and container["read_only_root"]
    assert container["user"] == "65534:65534"


def test_warm_pool_reuses_one_container_and_is_faster(fresh: Sandbox, warm: Sandbox) -> None:
    name = warm.isolation["container"]["name"]
    warm_times, fresh_times = [], []
    for _ in range(5):
        started = time.monotonic()
        assert warm.run(ADD_CODE, ADD).status == Status.PASSED
        warm_times.append(time.monotonic() - started)
    for _ in range(3):
        started = time.monotonic()
        assert fresh.run(ADD_CODE, ADD).status == Status.PASSED
        fresh_times.append(time.monotonic() - started)
    assert warm.isolation["container"]["name"] == name
    assert f"/{name}" in running_sandbox_names()
    assert statistics.median(warm_times) < statistics.median(fresh_times)


def test_run_many_in_parallel_containers() -> None:
    before = set(leftover_containers())
    with Sandbox(backend="docker", workers=2, limits=QUICK) as sb:
        results = sb.run_many([(ADD_CODE, ADD), ("print(1)\n", ADD), (ADD_CODE, ADD)])
    assert [r.status for r in results] == [Status.PASSED, Status.WRONG_ANSWER, Status.PASSED]
    assert new_containers(before) == set()


def test_missing_image_says_what_to_run() -> None:
    """The hint names a command an installed user has (the wheel has no scripts/ or Makefile)."""
    with pytest.raises(RuntimeError, match=r"run `rewardkit docker setup`") as raised:
        Sandbox(backend="docker", image="rewardkit-sandbox:no-such-tag")
    assert "make docker" not in str(raised.value) and "scripts/" not in str(raised.value)


def test_a_run_cannot_reach_the_worker_in_its_container(warm: Sandbox) -> None:
    """The solution shares the worker's uid in the container; the worker is not dumpable,
    so the run can neither write frames to its stdout nor read its memory or environment."""
    probe = ("import sys\n"
             "opened = []\n"
             "for path, mode in (('/proc/1/fd/1', 'wb'), ('/proc/1/mem', 'rb'), ('/proc/1/environ', 'rb')):\n"
             "    try:\n"
             "        open(path, mode)\n"
             "        opened.append(path)\n"
             "    except OSError:\n"
             "        pass\n"
             "print(opened)\n")
    result = warm.run(probe, expect("[]\n"))
    assert result.status == Status.PASSED, result.feedback
