"""The Ray backends on a 3-node cluster: Ray's own ``cluster_utils.Cluster``, nodes removed mid-batch.

The head node has one CPU and no ``sandbox`` resource; two more nodes have one
CPU and ``{"sandbox": 1}`` each.  Which node ran a job is read from the process
tree: a sandbox worker lives in a Ray worker process, whose parent is its
node's raylet.  Nodes are removed with ``Cluster.remove_node``, either shut
down (the raylet tells the cluster at once) or crashed (every process of the
node killed: the cluster learns it from Ray's health checks, which run here every second and
declare a node dead after 3 failures, where Ray's defaults take about 15 s),
and added back before the next test.  Ray's temp dir is a private one while
the cluster runs: ``Cluster`` publishes its address there, and any
``ray.init()`` on the machine (another test run beside this one) would join it.
"""

from __future__ import annotations

import logging
import re
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import leftovers
import psutil
import pytest
from test_ray_backend import ADD, GOOD, ONE, QUICK, SLEEPER, TWICE, WRONG, gone, wait_until

from rewardkit.analyzers import QualityReport, analyze_many, batch
from rewardkit.sandbox import ExecutionResult, Limits, Sandbox, Status

ray = pytest.importorskip("ray", reason="the ray package is not installed (pip install 'rewardkit[ray]')")
cluster_utils = pytest.importorskip("ray.cluster_utils")

SANDBOX_NODE = {"num_cpus": 1, "resources": {"sandbox": 1}}
# A crashed node is found by the head's health checks: each waits up to Ray's 10 s timeout for a
# live node's answer, so a busy machine fails none, and a dead node's refusal counts at once.
HEALTH_CHECKS = {"health_check_period_ms": 1000, "health_check_failure_threshold": 3}
JOBS = [(GOOD, ADD), (WRONG, ADD), ("raise ValueError('no')\n", ADD),
        ("def twice(x):\n    return 2 * x\n", TWICE), ("def twice(x):\n    return x\n", TWICE)]
VERDICTS = [Status.PASSED, Status.WRONG_ANSWER, Status.RUNTIME_ERROR, Status.PASSED, Status.WRONG_ANSWER]
RAY_FAULT = re.compile(r"^ray task failed: (NodeDiedError|WorkerCrashedError)\b")
CODES: list[object] = [
    "import subprocess\n\ndef run(cmd):\n    return subprocess.call(cmd, shell=True)\n",
    "def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n",
    "def broken(:\n",
    b"x = eval(input())\n",
    "try:\n    pass\nexcept:\n    pass\n",
    "import pickle\n\ndef load(blob):\n    return pickle.loads(blob)\n",
    "def f(a, b, c, d, e, f, g):\n    return a\n",
    "import hashlib\n\ndef digest(b):\n    return hashlib.md5(b).hexdigest()\n",
    "class A:\n    def m(self):\n        assert self\n        return 1\n",
]


class Nodes:
    """The cluster under test: a head without the ``sandbox`` resource and sandbox nodes."""

    def __init__(self) -> None:
        self.before = leftovers.Snapshot.take()  # what was on the machine before the cluster
        self.cluster = cluster_utils.Cluster(initialize_head=True, head_node_args={
            "num_cpus": 1, "include_dashboard": False, "_system_config": HEALTH_CHECKS})
        self.head = self.cluster.head_node
        self.top_up()
        ray.init(address=self.cluster.address, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.ERROR)

    def sandbox_nodes(self) -> list[Any]:
        """The live sandbox nodes (``ray._private.node.Node``), in node id order."""
        return sorted(self.cluster.worker_nodes, key=lambda node: node.node_id)

    def top_up(self, count: int = 2) -> None:
        """Add sandbox nodes until there are ``count``."""
        while len(self.cluster.worker_nodes) < count:
            self.cluster.add_node(**SANDBOX_NODE)
        self.cluster.wait_for_nodes(timeout=60)  # a crashed node counts until Ray declares it dead

    def raylets(self) -> dict[int, str]:
        """Raylet pid -> node id, for every live node."""
        return {node.all_processes["raylet"][0].process.pid: node.node_id
                for node in self.cluster.list_all_nodes()}

    def shutdown(self) -> None:
        """Stop Ray in this process and every node."""
        ray.shutdown()
        self.cluster.shutdown()


@pytest.fixture(scope="module")
def nodes() -> Iterator[Nodes]:
    ray.shutdown()  # a Ray instance another test module left running
    with tempfile.TemporaryDirectory(prefix="rk-ray-", ignore_cleanup_errors=True) as private, \
            pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_TMPDIR", private)
        cluster = Nodes()
        yield cluster
        cluster.shutdown()


@pytest.fixture
def two_sandbox_nodes(nodes: Nodes) -> Nodes:
    nodes.top_up(2)
    return nodes


def node_of(proc: psutil.Process, raylets: dict[int, str]) -> str | None:
    """The node id of the raylet ``proc`` runs under, if any."""
    for parent in proc.parents():
        if parent.pid in raylets:
            return raylets[parent.pid]
    return None


def sandbox_workers(raylets: dict[int, str]) -> dict[psutil.Process, str]:
    """Every sandbox worker under one of these raylets -> its node id."""
    found = {}
    for proc in psutil.process_iter(["cmdline"]):
        if leftovers.WORKER_MARK in " ".join(proc.info["cmdline"] or ()):
            try:
                node = node_of(proc, raylets)
            except psutil.Error:
                continue
            if node is not None:
                found[proc] = node
    return found


class Watch:
    """Records, while open, on which nodes sandbox workers are seen (sampled every 50 ms)."""

    def __init__(self, nodes: Nodes) -> None:
        self.raylets = nodes.raylets()
        self.seen: set[str] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.seen.update(sandbox_workers(self.raylets).values())
            self._stop.wait(0.05)

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def runs_task(node: Any, nodes: Nodes, title: str) -> bool:
    """Whether a Ray worker process on ``node`` is running the task ``title`` (its process title)."""
    raylet = {pid: ident for pid, ident in nodes.raylets().items() if ident == node.node_id}
    for proc in psutil.process_iter(["cmdline"]):
        if " ".join(proc.info["cmdline"] or ()).startswith(title):
            try:
                if node_of(proc, raylet) is not None:
                    return True
            except psutil.Error:
                continue
    return False


def runs_long_job(node: Any, nodes: Nodes, min_age_s: float) -> bool:
    """Whether a sandbox worker on ``node`` has had a run going for ``min_age_s``."""
    for worker, ident in sandbox_workers(nodes.raylets()).items():
        try:
            if ident == node.node_id and any(time.time() - run.create_time() > min_age_s
                                             for run in worker.children()):
                return True
        except psutil.Error:
            continue
    return False


def test_jobs_spread_over_the_sandbox_nodes_only(two_sandbox_nodes: Nodes) -> None:
    with Sandbox(backend="ray", resources={"sandbox": 1}, limits=QUICK) as sb, \
            Watch(two_sandbox_nodes) as watch:
        assert sb.workers == 2  # two sandbox slots, not the cluster's three CPUs
        results = sb.run_many(JOBS * 3)
    assert [r.status for r in results] == VERDICTS * 3
    assert results[1].failed_case == 0 and "Expected:\n3" in results[1].feedback
    assert watch.seen == {node.node_id for node in two_sandbox_nodes.sandbox_nodes()}
    assert two_sandbox_nodes.head.node_id not in watch.seen


def test_slots_are_counted_node_by_node(two_sandbox_nodes: Nodes) -> None:
    # the cluster's totals (3 CPUs, 4 half tags) would promise 3 slots: the head's CPU has no tag
    with Sandbox(backend="ray", resources={"sandbox": 0.5}) as sb:
        assert sb.workers == 2
    two_sandbox_nodes.cluster.remove_node(two_sandbox_nodes.sandbox_nodes()[0])
    with Sandbox(backend="ray", resources={"sandbox": 0.5}) as sb:
        assert sb.workers == 1


def expected_or_fault(result: ExecutionResult, verdict: Status) -> bool:
    """The job's own verdict, or a sandbox_error that names the Ray fault."""
    if result.status == Status.SANDBOX_ERROR:
        return bool(RAY_FAULT.match(result.feedback))
    return result.status == verdict


@pytest.mark.parametrize(("graceful", "retries"), [(True, 0), (True, 1), (False, 1)],
                         ids=["shut-down-no-retry", "shut-down-retried", "crashed-retried"])
def test_a_node_removed_mid_batch_loses_no_job(two_sandbox_nodes: Nodes, graceful: bool,
                                               retries: int) -> None:
    nodes = two_sandbox_nodes
    doomed = nodes.sandbox_nodes()[0]
    jobs = [(SLEEPER, ONE), (SLEEPER, ONE), *JOBS]  # a sleeper on each node first: one slot each
    verdicts = [Status.PASSED, Status.PASSED, *VERDICTS]
    with Sandbox(backend="ray", resources={"sandbox": 1}, limits=Limits(time_s=10),
                 retries=retries) as sb, ThreadPoolExecutor(1) as driver:
        batch_run = driver.submit(sb.run_many, jobs)
        assert wait_until(lambda: runs_long_job(doomed, nodes, 0.5), timeout=60), \
            "no sleeper was seen running on the node to remove"
        orphans = [proc for proc, node in sandbox_workers(nodes.raylets()).items()
                   if node == doomed.node_id]
        nodes.cluster.remove_node(doomed, allow_graceful=graceful)
        results = batch_run.result(timeout=90)
    assert all(expected_or_fault(r, v) for r, v in zip(results, verdicts, strict=True)), \
        [(r.status.value, r.feedback[:120]) for r in results]
    faults = [i for i, r in enumerate(results) if r.status == Status.SANDBOX_ERROR]
    if retries:
        assert faults == []  # the lost sleeper ran again on the other node
    else:
        assert len(faults) == 1 and faults[0] in (0, 1)
        assert results[faults[0]].tests_total == 1
    # the removed node's sandbox workers end once their runs are over
    assert orphans and wait_until(lambda: all(gone(proc) for proc in orphans), timeout=20)


def summary(report: QualityReport) -> tuple[Any, ...]:
    return report.score, report.findings, report.errors


def test_analyze_many_over_the_cluster_with_a_node_removed(two_sandbox_nodes: Nodes) -> None:
    nodes = two_sandbox_nodes
    batch.clear_cache()
    local = [summary(r) for r in analyze_many(CODES, workers=1)]
    batch.clear_cache()
    doomed = nodes.sandbox_nodes()[0]
    with ThreadPoolExecutor(1) as driver:
        analysis = driver.submit(analyze_many, CODES, backend="ray")
        assert wait_until(lambda: runs_task(doomed, nodes, "ray::_work"), timeout=60), \
            "no analysis chunk was seen on the node to remove"
        nodes.cluster.remove_node(doomed)
        reports = analysis.result(timeout=180)
    failed = [i for i, r in enumerate(reports) if summary(r) != local[i]]
    assert failed, "the removed node's chunk was not lost"
    for i in failed:
        reasons = [(e.tool, e.reason) for e in reports[i].errors]
        assert len(reasons) == 1 and re.fullmatch(
            r"analysis worker failed: (NodeDiedError|WorkerCrashedError)", reasons[0][1]), reasons
    nodes.top_up(2)
    again = analyze_many(CODES, backend="ray")  # the failed sources were not cached
    assert [summary(r) for r in again] == local
    batch.clear_cache()


def test_no_sandbox_worker_outlives_the_cluster(two_sandbox_nodes: Nodes) -> None:
    with Sandbox(backend="ray", resources={"sandbox": 1}, limits=QUICK) as sb:
        assert all(r.passed for r in sb.run_many([(GOOD, ADD)] * 4))
    warm = list(sandbox_workers(two_sandbox_nodes.raylets()))
    assert warm
    two_sandbox_nodes.shutdown()
    assert wait_until(lambda: all(gone(proc) for proc in warm), timeout=20)
    leftovers.assert_clean(two_sandbox_nodes.before)
