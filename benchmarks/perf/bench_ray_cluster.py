"""Ray cluster benchmark: sandbox jobs/s and analysed sources/s on 1, 2 and 3 nodes of one cluster.

Ray's own ``ray.cluster_utils.Cluster`` runs a head with no CPUs (it only
serves the driver) and three nodes that declare one CPU and ``{"sandbox": 1}``
each, all on this machine.  A run on n nodes leaves the other 3 - n held by a
placement group (a reservation of their CPU and tag, no process), so its tasks
can only land on n nodes; the cluster is not rebuilt between runs.  Measured,
for n = 1, 2, 3:

* ``Sandbox(backend="ray", resources={"sandbox": 1}, workers=n)``: jobs per
  second of a batch of CPU-bound Python jobs of about 0.2 s, beside the local
  backend with ``workers=n`` (the reference);
* ``analyze_many(backend="ray", workers=n)``: sources per second (and chunks per
  second: the batch is cut into about two chunks a node), beside the local
  analysis pool with ``workers=n``.

Every setup takes its turn, batch by batch, so that load from elsewhere on a
shared machine hits them alike; each figure is the median of 3 batches, each
after a warm-up batch.  Printed beside them: cluster / local, and the scaling
n / 1 of each.  On a machine with fewer cores than nodes the extra nodes add
slots, not cores: the output says where the cores run out, and the driver,
four raylets and Ray's head daemons share those same cores.  Ray's temp dir is
a private one while the cluster runs: ``Cluster`` publishes its address there,
and any ``ray.init()`` on the machine would otherwise join it.

Run: ``python benchmarks/perf/bench_ray_cluster.py`` (``make bench`` runs it).
"""

from __future__ import annotations

import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from bench_ray import ONE, sized_job

from rewardkit.analyzers import analyze_many, clear_cache
from rewardkit.analyzers.pool import chunked
from rewardkit.sandbox import Sandbox

NODES = 3
ROUNDS = 3
JOBS = 12
SOURCES = 96
SANDBOX = {"sandbox": 1}

try:
    import ray
    from ray.cluster_utils import Cluster
    from ray.util.placement_group import placement_group, remove_placement_group
except ImportError:  # the [ray] extra is not installed: main() says so
    ray = None  # type: ignore[assignment]


def source(name: str, n: int) -> str:
    """A module of 55 lines of the kind a model writes, its names made from ``name``."""
    arms = "".join(f"    elif code == {k}:\n        return 'v{k}'\n" for k in range(1, 8))
    return (
        "import hashlib\nimport subprocess\n\n\n"
        f"def run_{name}(cmd, retries={n}):\n"
        "    out = ''\n    for attempt in range(retries):\n"
        "        try:\n            out += str(subprocess.call(cmd, shell=True))\n"
        "        except:\n            pass\n    return out\n\n\n"
        f"def label_{name}(code):\n    if code == 0:\n        return 'zero'\n{arms}    return 'other'\n\n\n"
        f"def digest_{name}(text: str) -> str:\n    return hashlib.md5(text.encode()).hexdigest()\n\n\n"
        f"def common_{name}(xs, ys):\n    seen = list(ys)\n    hits = []\n    for x in xs:\n"
        "        if x in seen:\n            hits.append(x)\n    return hits\n\n\n"
        f"class Store_{name}:\n    def __init__(self, size):\n        self.size = size + {n}\n"
        "        self.items = []\n\n    def push(self, item):\n        self.items.append(item)\n"
        "        return len(self.items) <= self.size\n"
    )


def sources(count: int, salt: int) -> list[str]:
    """``count`` distinct modules, new for each ``salt``: no batch finds another's reports cached."""
    return [source(f"{salt}_{i}".replace("-", "m"), i) for i in range(count)]


class SandboxNodes:
    """A head and ``NODES`` sandbox nodes; :meth:`use` leaves only some of them free."""

    def __init__(self) -> None:
        self._private = tempfile.TemporaryDirectory(prefix="rk-ray-", ignore_cleanup_errors=True)
        self._outer = os.environ.get("RAY_TMPDIR")
        os.environ["RAY_TMPDIR"] = self._private.name
        self.cluster = Cluster(initialize_head=True,
                               head_node_args={"num_cpus": 0, "include_dashboard": False})
        for _ in range(NODES):
            self.cluster.add_node(num_cpus=1, resources=SANDBOX)
        self.cluster.wait_for_nodes()
        ray.init(address=self.cluster.address, include_dashboard=False, log_to_driver=False,
                 logging_level=logging.ERROR)
        self._held: Any = None

    def use(self, count: int) -> None:
        """Hold all but ``count`` nodes with a placement group (one bundle a node)."""
        if self._held is not None:
            remove_placement_group(self._held)
            self._held = None
        if count < NODES:
            bundles = [{"CPU": 1.0, **SANDBOX}] * (NODES - count)
            self._held = placement_group(bundles, strategy="STRICT_SPREAD")
            if not self._held.wait(60):
                raise RuntimeError("the placement group holding the other nodes was not placed")

    def shutdown(self) -> None:
        """Stop Ray in this process and every node, and put Ray's temp dir back."""
        ray.shutdown()
        self.cluster.shutdown()
        if self._outer is None:
            del os.environ["RAY_TMPDIR"]
        else:
            os.environ["RAY_TMPDIR"] = self._outer
        self._private.cleanup()


def timed(run: Callable[[], int]) -> float:
    """Items per second of ``run()``, which returns how many items it did."""
    start = time.perf_counter()
    done = run()
    return done / (time.perf_counter() - start)


def sandbox_batch(sb: Sandbox, code: str) -> float:
    """Jobs per second of ``JOBS`` copies of ``code``, after a warm-up batch that starts the workers."""
    sb.run_many([(code, ONE)] * sb.workers)

    def run() -> int:
        results = sb.run_many([(code, ONE)] * JOBS)
        failed = sorted({r.status.value for r in results if not r.passed})
        if failed:
            raise RuntimeError(f"some jobs did not pass: {failed}")
        return len(results)

    return timed(run)


def analysis_batch(workers: int, backend: str, salt: int) -> float:
    """Sources per second of ``SOURCES`` new sources, after a warm-up batch that warms the engines."""
    analyze_many(sources(2 * workers, -salt), workers=workers, backend=backend)

    def run() -> int:
        reports = analyze_many(sources(SOURCES, salt), workers=workers, backend=backend)
        if any(r.errors for r in reports):
            raise RuntimeError(f"analysis failed: {[r.errors for r in reports if r.errors][:1]}")
        return len(reports)

    clear_cache()
    return timed(run)


def report(title: str, unit: str, cluster: dict[int, float], local: dict[int, float]) -> None:
    """One line per node count: both rates, their ratio, and the scaling from one node."""
    print(f"  {title}")
    print(f"    nodes  cluster {unit:>9s}  local {unit:>9s}  cluster/local  scaling n/1: cluster, local")
    for n in sorted(cluster):
        print(f"    {n:5d}  {cluster[n]:17.2f}  {local[n]:15.2f}  {cluster[n] / local[n]:13.2f}"
              f"  {cluster[n] / cluster[1]:12.2f}x {local[n] / local[1]:6.2f}x")


def main() -> None:
    """Measure 1, 2 and 3 nodes and the local references in turns, and print the figures."""
    cores = os.cpu_count() or 1
    print(f"ray cluster benchmark on {cores} cores, python {sys.version.split()[0]}")
    if ray is None:
        print("  ray: not measured (pip install 'rewardkit[ray]')")
        return
    print(f"  cluster: a head with 0 CPUs and {NODES} nodes of 1 CPU and {SANDBOX} each, on this machine")
    if cores < NODES:
        print(f"  only {cores} cores: nodes beyond {cores} add slots, not cores (no real parallelism"
              " past that); the driver and Ray's daemons share the same cores")
    counts = range(1, NODES + 1)
    cluster = SandboxNodes()
    local = {n: Sandbox(workers=n) for n in counts}
    on_ray = {n: Sandbox(backend="ray", resources=SANDBOX, workers=n) for n in counts}
    rates: dict[str, dict[int, list[float]]] = {
        key: {n: [] for n in counts} for key in ("ray jobs", "local jobs", "ray sources", "local sources")}
    chunks = {n: len(chunked(sources(SOURCES, 0), n)) for n in counts}  # as analyze_many cuts them
    try:
        code = sized_job(local[1])
        for round_ in range(ROUNDS):
            for n in counts:
                cluster.use(n)
                salt = 10 * round_ + n
                rates["ray jobs"][n].append(sandbox_batch(on_ray[n], code))
                rates["ray sources"][n].append(analysis_batch(n, "ray", salt))
                rates["local jobs"][n].append(sandbox_batch(local[n], code))
                rates["local sources"][n].append(analysis_batch(n, "local", 100 + salt))
    finally:
        for sb in (*local.values(), *on_ray.values()):
            sb.close()
        cluster.shutdown()
    median = {key: {n: statistics.median(v) for n, v in by_n.items()} for key, by_n in rates.items()}
    print(f"  median of {ROUNDS} batches each, setups taken in turns")
    report(f"sandbox: {JOBS} CPU-bound jobs of ~0.2 s each", "jobs/s",
           median["ray jobs"], median["local jobs"])
    lines = sources(1, 0)[0].count("\n")
    report(f"analysis: {SOURCES} sources of {lines} lines each", "sources/s",
           median["ray sources"], median["local sources"])
    print("    ray chunks/s: " + ", ".join(
        f"{n} node{'s' if n > 1 else ''} {median['ray sources'][n] * chunks[n] / SOURCES:.2f}"
        f" ({chunks[n]} chunks)" for n in counts))


if __name__ == "__main__":
    main()
