"""The Ray backend on a local Ray instance: order, verdicts, repeats, faults, no leftovers."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import psutil
import pytest

from rewardkit.optional import MissingExtra
from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite
from rewardkit.sandbox.backends import ray as ray_backend

ray = pytest.importorskip("ray", reason="the ray package is not installed (pip install 'rewardkit[ray]')")

QUICK = Limits(time_s=2, memory_mb=256)
ADD = TestSuite.from_dict({"mode": "stdio", "cases": [
    {"input": "1 2\n", "output": "3\n"}, {"input": "5 7\n", "output": "12\n"}]})
ONE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "ok\n"}]})
TWICE = TestSuite.from_dict({"mode": "call", "entry_point": "twice",
                             "cases": [{"args": [2], "expected": 4}, {"args": [-1], "expected": -2}]})
GOOD = "a, b = map(int, input().split())\nprint(a + b)\n"
WRONG = "a, b = map(int, input().split())\nprint(a - b)\n"
SLEEPER = "import time\ntime.sleep(3)\nprint('ok')\n"
WORKER_MARK = "runtime.worker import main"  # in the argv of every sandbox worker


@pytest.fixture
def sb(ray_instance: None) -> Iterator[Sandbox]:
    with Sandbox(backend="ray", limits=QUICK) as sandbox:
        yield sandbox


def ray_sandbox_workers() -> list[psutil.Process]:
    """Sandbox workers run by the Ray worker processes of the Ray instance this process started."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if WORKER_MARK not in " ".join(proc.info["cmdline"] or ()):
            continue
        try:
            parents = proc.parents()
            if parents and parents[0].name().startswith("ray::") and \
                    os.getpid() in {parent.pid for parent in parents}:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def gone(proc: psutil.Process) -> bool:
    try:
        return proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_until(check: Callable[[], bool], timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def kill_ray_worker_of_long_job(min_age_s: float = 1.0) -> psutil.Process:
    """SIGKILL the Ray worker whose sandbox worker has been running a job for ``min_age_s``.

    Returns that sandbox worker, which loses its parent.
    """
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for worker in ray_sandbox_workers():
            try:  # a run is the worker's child, or its fork server's; it runs as a sandbox uid
                runs = [p for p in worker.children(recursive=True) if p.uids().real != 0]
                if any(time.time() - child.create_time() > min_age_s for child in runs):
                    ray_worker = worker.parent()
                    assert ray_worker is not None
                    ray_worker.kill()
                    return worker
            except psutil.Error:
                continue
        time.sleep(0.05)
    raise AssertionError("no long sandbox job was seen running under a Ray worker")


def test_batch_keeps_order_and_verdicts(sb: Sandbox) -> None:
    jobs = [
        (GOOD, ADD), (WRONG, ADD), ("while True:\n    pass\n", ADD), ("raise ValueError('no')\n", ADD),
        ("def twice(x):\n    return 2 * x\n", TWICE), ("def twice(x):\n    return x\n", TWICE),
    ] * 2
    results = sb.run_many(jobs)
    expected = [Status.PASSED, Status.WRONG_ANSWER, Status.TIMEOUT, Status.RUNTIME_ERROR,
                Status.PASSED, Status.WRONG_ANSWER] * 2
    assert [r.status for r in results] == expected
    assert results[1].failed_case == 0 and "Expected:\n3" in results[1].feedback
    assert results[3].tests_total == 2 and "ValueError" in results[3].feedback
    assert results[0].time_s > 0 and results[0].peak_memory_kb > 0
    assert sb.workers == 2  # the local instance's two CPUs, one per task


def test_repeats_give_medians_and_spread(sb: Sandbox) -> None:
    result = sb.run(GOOD, ADD, repeats=3)
    assert result.passed and result.repeats == 3
    assert set(result.spread) == {"time_s", "wall_s", "peak_memory_kb", "integral_kb_s"}


def test_each_node_gives_the_local_isolation(sb: Sandbox) -> None:
    isolation = sb.isolation
    assert "network_namespace" in isolation and "unprivileged_uid" in isolation
    with Sandbox(workers=1) as local:
        expected = local.isolation
    uid, expected_uid = isolation.pop("unprivileged_uid"), expected.pop("unprivileged_uid")
    assert (uid is None) == (expected_uid is None)  # each worker picks its own uid
    assert isolation == expected


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may undo Ray's nice 15")
def test_jobs_run_at_normal_priority_not_rays_nice_15(sb: Sandbox) -> None:
    result = sb.run("import os\nprint(os.nice(0))\n", TestSuite.from_dict(
        {"mode": "stdio", "cases": [{"input": "", "output": "0\n"}]}))
    assert result.passed, result.feedback


def test_instruction_meter_runs_on_ray(ray_instance: None) -> None:
    program = '#include <stdio.h>\nint main(void){puts("ok");return 0;}\n'  # C: quick under valgrind
    with Sandbox(backend="ray", meter="instructions", limits=QUICK) as sandbox:
        result = sandbox.run(program, ONE, language="c")
    assert result.passed and result.instructions is not None and result.instructions > 0


@pytest.mark.parametrize(("retries", "outcome"), [(0, Status.SANDBOX_ERROR), (1, Status.PASSED)])
def test_a_killed_ray_worker_is_retried_then_reported(ray_instance: None, retries: int,
                                                      outcome: Status) -> None:
    jobs = [(GOOD, ADD), (WRONG, ADD), (SLEEPER, ONE)] + [(GOOD, ADD)] * 4
    with Sandbox(backend="ray", limits=Limits(time_s=10), retries=retries) as sandbox, \
            ThreadPoolExecutor(1) as driver:
        batch = driver.submit(sandbox.run_many, jobs)
        orphan = kill_ray_worker_of_long_job()
        results = batch.result(timeout=60)
    assert results[2].status == outcome
    if outcome == Status.SANDBOX_ERROR:
        assert "WorkerCrashedError" in results[2].feedback and results[2].tests_total == 1
    others = [r.status for i, r in enumerate(results) if i != 2]
    assert others == [Status.PASSED, Status.WRONG_ANSWER] + [Status.PASSED] * 4
    # the sandbox worker of the killed Ray worker ends by itself once its run is over
    assert wait_until(lambda: gone(orphan))


def test_no_answer_in_time_is_a_sandbox_error(ray_instance: None) -> None:
    with Sandbox(backend="ray", limits=Limits(time_s=10), timeout_s=1.0, retries=0) as sandbox:
        start = time.monotonic()
        result = sandbox.run(SLEEPER, ONE)
    assert result.status == Status.SANDBOX_ERROR and "no result within 1 s" in result.feedback
    assert time.monotonic() - start < 2.5


def test_a_resource_no_node_has_ends_in_a_sandbox_error(ray_instance: None) -> None:
    with Sandbox(backend="ray", resources={"sandbox": 1}, timeout_s=1.0, retries=1) as sandbox:
        assert sandbox.workers == 1
        assert sandbox.run(GOOD, ADD).status == Status.SANDBOX_ERROR


def test_bad_options_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TypeError, match=r"not \['colour', 'speed'\]"):
        Sandbox(backend="ray", speed=2, colour="red")
    with pytest.raises(ValueError, match="retries"):
        Sandbox(backend="ray", retries=-1)
    with pytest.raises(ValueError, match="num_cpus"):
        Sandbox(backend="ray", num_cpus=0)
    with pytest.raises(ValueError, match="timeout_s"):
        Sandbox(backend="ray", timeout_s=0)
    monkeypatch.setattr(ray_backend, "ray", None)
    with pytest.raises(MissingExtra, match=r"pip install 'rewardkit\[ray\]'"):
        Sandbox(backend="ray")


def test_no_sandbox_worker_outlives_ray(ray_instance: None) -> None:
    with Sandbox(backend="ray", limits=QUICK) as sandbox:
        assert all(r.passed for r in sandbox.run_many([(GOOD, ADD)] * 4))
    warm = ray_sandbox_workers()  # kept inside Ray's worker processes after close
    assert warm
    ray.shutdown()
    assert wait_until(lambda: all(gone(p) for p in warm))


def test_a_reward_scores_in_a_ray_task(ray_instance: None) -> None:
    """A reward shipped to a Ray task (which pickles it) scores there what it scores here."""
    from rewardkit import rewards

    reward = rewards.pass_rate()
    tests = [{"mode": "stdio", "cases": [{"input": "2 3\n", "output": "5\n"}]}] * 2
    here = reward([GOOD, WRONG], tests=tests)
    task = ray.remote(lambda scored, completions, suites: scored(completions, tests=suites))
    there = ray.get(task.remote(reward, [GOOD, WRONG], tests), timeout=300)
    assert there == here == [1.0, 0.0]
