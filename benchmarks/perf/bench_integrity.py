"""Integrity benchmark: what whole-tree accounting costs, and what hiding work still saves.

1. The per-run work that charging a run for its whole tree adds, each part
   measured in the same run beside a plain fork-and-wait of a forked Python
   child (the local backend's fast path): a fresh cgroup made, joined, read and
   removed; fresh mount and IPC namespaces with new tmpfs scratch and the
   chroot into the filesystem view.  Beside them, the whole per-run overhead of
   a trivial solution and a bare ``python -c pass`` spawn (target: the
   overhead stays at most half a spawn).  Needs root (skipped otherwise).
2. Honest programs against variants that hide the same work in processes the
   solution does not wait for, or in tmpfs, on the local backend and the
   docker warm pool: time, peak memory and integral, and their ratio to the
   honest program's (1.0 means nothing was hidden).

3. The instruction meter against attacks on it: a forged total written into
   valgrind's log, a FIFO planted where the count used to be read from, and the
   same work done in a forked child or a spawned ``python3 -c`` (which must be
   counted): each count beside the honest program's.

4. Suite code from an untrusted source (``Sandbox(trust_suites=False)``, the
   reward service's setting): a HumanEval-style script job and a stdio job with
   an evaluator, judged with the check or evaluator in a sandboxed referee,
   beside the same jobs judged in-process (the reference).

5. The attack corpus, every class: each attack test module run with pytest,
   its attacks counted as defended (passed) or not, on the backends it covers
   (local, docker fresh and warm pool, Ray; docker is skipped where no engine
   runs).  Every attack earned reward it did not deserve on the code before
   its fix; the figure is how many still do (0 expected).

The measurement-stability figures with whole-tree accounting in place are
section 2 of ``bench_sandbox.py``.  Run: ``python benchmarks/perf/bench_integrity.py``.
"""

from __future__ import annotations

import collections
import os
import resource
import statistics
import subprocess  # nosec B404 - the reference timing spawns Python itself
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any
from xml.etree import ElementTree  # nosec B405 - parses pytest's report of our own run

from rewardkit.sandbox import Sandbox, TestSuite
from rewardkit.sandbox.runtime import accounting, mounts, view

ONE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "", "output": "ok\n"}]})
WORK = ("x = bytearray(150 * 1024 * 1024)\nfor i in range(0, len(x), 4096):\n    x[i] = 1\n"
        "s = 0\nfor i in range(1_200_000):\n    s += i\n")
HONEST = WORK + "print('ok')\n"
VARIANTS = {
    "fork, answer through a pipe, block": (
        "import os, time\nr, w = os.pipe()\nif os.fork() == 0:\n"
        + "".join(f"    {line}\n" for line in WORK.splitlines())
        + "    os.write(w, b'ok')\n    time.sleep(60)\nprint(os.read(r, 2).decode())\n"),
    "child auto-reaped (SIGCHLD ignored)": (
        "import os, signal, time\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\nr, w = os.pipe()\n"
        "if os.fork() == 0:\n" + "".join(f"    {line}\n" for line in WORK.splitlines())
        + "    os.write(w, b'ok')\n    os._exit(0)\nprint(os.read(r, 2).decode())\ntime.sleep(0.05)\n"),
    "python3 -c child, not waited": (
        "import subprocess, sys\np = subprocess.Popen([sys.executable, '-c', " + repr(WORK + "print('ok')")
        + "], stdout=subprocess.PIPE)\nprint(p.stdout.read().decode().strip())\n"),
    "150 MB kept in tmpfs (/tmp)": (
        "for n in range(3):\n    open(f'/tmp/keep{n}', 'wb').write(b'x' * (50 * 1024 * 1024))\n"
        "s = 0\nfor i in range(1_200_000):\n    s += i\nprint('ok')\n"),
}


def median_ms(fn: Callable[[], object], count: int) -> float:
    """Median wall milliseconds of ``count`` calls."""
    samples = []
    for _ in range(count):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def _fork_wait(child: Callable[[], None]) -> None:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            child()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _measure_parts(out: int) -> None:
    """In a forked helper with its own mount namespace: time each added part, write the figures."""
    mounts.unshare(mounts.CLONE_NEWNS, "unshare")
    mounts.mount("none", "/", None, mounts.MS_REC | mounts.MS_PRIVATE)
    mounts.mount("tmpfs", "/tmp", "tmpfs", mounts.MS_NOSUID | mounts.MS_NODEV, "size=64m")  # nosec B108
    root = view.build([sys.base_prefix, sys.prefix], [], [], os.path.dirname(view.__file__))
    workdir = "/tmp/rewardkit/job"  # nosec B108 - in this helper's private /tmp
    os.makedirs(workdir)
    meter = accounting.detect(root=True)

    def with_group() -> None:
        group = meter.new_run(256, 64)
        _fork_wait(group.join)
        group.finish(resource.getrusage(resource.RUSAGE_CHILDREN))
        group.close()

    def with_view() -> None:
        def enter() -> None:
            mounts.unshare(mounts.CLONE_NEWNS | mounts.CLONE_NEWIPC, "unshare")
            root.enter(workdir, fresh_proc=False)
        _fork_wait(enter)

    figures = [median_ms(lambda: _fork_wait(lambda: None), 200), median_ms(with_group, 200),
               median_ms(with_view, 200)]
    os.write(out, (" ".join(f"{f:.3f}" for f in figures) + f" {meter.method}").encode())
    meter.close()


def section_cost() -> None:
    """Print section 1: the added per-run cost against fork-and-wait, the overhead and a spawn."""
    print("\n[1] per-run cost of whole-tree accounting and fresh scratch")
    if os.geteuid() != 0:
        print("  skipped: needs root (cgroups, namespaces)")
        return
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - helper
        try:
            _measure_parts(write)
        except BaseException as exc:  # the parent prints why
            os.write(write, f"error {type(exc).__name__}: {exc}".encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    answer = os.read(read, 1000).decode()
    if answer.startswith("error"):
        print(f"  not measured: {answer}")
        return
    fork_ms, group_ms, view_ms, method = answer.split()
    plain, group, fresh = float(fork_ms), float(group_ms), float(view_ms)
    print(f"  fork + wait of a Python child            {plain:6.3f} ms  (reference)")
    print(f"  + fresh {method} group, joined, read, removed  {group - plain:+6.3f} ms")
    print(f"  + mount/IPC namespaces, scratch, chroot  {fresh - plain:+6.3f} ms")
    with Sandbox(workers=1) as sb:
        for _ in range(10):
            sb.run("print('ok')", ONE)
        overhead = median_ms(lambda: sb.run("print('ok')", ONE), 200)
    spawn = median_ms(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), 50)  # nosec B603
    print(f"  whole run of a trivial solution          {overhead:6.2f} ms; bare `python -c pass` "
          f"{spawn:6.2f} ms; ratio {overhead / spawn:.3f} (target <= 0.5)")


def section_hiding() -> None:
    """Print section 2: honest against hiding variants, local and docker warm pool."""
    print("\n[2] hiding work: each variant against the honest program (ratio 1.0 = nothing hidden)")
    backends: list[tuple[str, dict[str, Any]]] = [("local", {})]
    if os.environ.get("REWARDKIT_SKIP_DOCKER") != "1":
        backends.append(("docker warm pool", {"backend": "docker", "warm_pool": True}))
    for name, options in backends:
        try:
            with Sandbox(workers=1, **options) as sb:
                method = sb.isolation.get("accounting", {}).get("method")
                print(f"  {name} (accounting: {method})")
                honest = sb.run(HONEST, ONE, repeats=3)
                print(f"    {'honest':38s} {honest.time_s:6.3f} s {honest.peak_memory_kb / 1024:7.1f} MB"
                      f" {honest.integral_kb_s / 1024:8.1f} MB·s")
                for label, code in VARIANTS.items():
                    r = sb.run(code, ONE, repeats=3)
                    print(f"    {label:38s} {r.time_s:6.3f} s {r.peak_memory_kb / 1024:7.1f} MB"
                          f" {r.integral_kb_s / 1024:8.1f} MB·s  {r.status.value:8s} ratios "
                          f"{r.time_s / honest.time_s:4.2f} {r.peak_memory_kb / honest.peak_memory_kb:4.2f}"
                          f" {r.integral_kb_s / honest.integral_kb_s:4.2f}")
        except RuntimeError as exc:
            print(f"  {name}: not measured ({exc})")


LOOP = "s = 0\nfor i in range(300000):\n    s += i\n"
METER_VARIANTS = {
    "forged total in valgrind's log": LOOP + "open('/.callgrind-log', 'w').write('==1== Collected : 1\\n')\n",
    "FIFO planted as callgrind.out": "import os\nos.mkfifo('callgrind.out')\n" + LOOP,
    "work in a forked child": "import os\nif os.fork() == 0:\n"
                              + "".join(f"    {line}\n" for line in LOOP.splitlines())
                              + "    os._exit(0)\nos.wait()\n",
    "work in a spawned python3 -c": "import subprocess, sys\nsubprocess.run([sys.executable, '-c', "
                                    + repr(LOOP) + "], check=True)\n",
}


def section_meter() -> None:
    """Print section 3: instruction counts of attacks on the meter against the honest count."""
    print("\n[3] instruction meter: attacks against the honest count (ratio >= 1: nothing hidden)")
    with Sandbox(workers=1, meter="instructions") as sb:
        honest = sb.run(LOOP + "print('ok')\n", ONE)
        print(f"  {'honest':34s} {honest.instructions or 0:>13,}")
        for label, code in METER_VARIANTS.items():
            r = sb.run(code + "print('ok')\n", ONE)
            ratio = (r.instructions or 0) / (honest.instructions or 1)
            print(f"  {label:34s} {r.instructions or 0:>13,}  {r.status.value:8s} ratio {ratio:.2f}")


REFEREED_JOBS: dict[str, tuple[str, dict[str, Any]]] = {
    "script job (check with 8 calls)": (
        "def add(a, b):\n    return a + b\n",
        {"mode": "script", "entry_point": "add", "definitions": "import math\n",
         "check": "def check(candidate):\n" + "".join(f"    assert candidate({i}, 1) == {i + 1}\n"
                                                      for i in range(8))}),
    "stdio job, 4 cases, evaluator": (
        "print(int(input()) * 2)\n",
        {"mode": "stdio", "evaluator": "def evaluate(expected, actual):\n    return expected.split() == "
                                      "actual.split()\n",
         "cases": [{"input": f"{i}\n", "output": f"{2 * i}\n"} for i in range(4)]}),
}


def section_referee() -> None:
    """Per-job cost of running the suite's own code in a sandboxed referee."""
    print("\n[4] suite code from an untrusted source: refereed vs in-process (the reference)")
    with Sandbox(workers=1) as trusting, Sandbox(workers=1, trust_suites=False) as refereeing:
        for label, (code, tests) in REFEREED_JOBS.items():
            suite = TestSuite.from_dict(tests)
            for sb in (trusting, refereeing):
                assert sb.run(code, suite).passed  # warm both, and check they judge alike
            local = median_ms(lambda: trusting.run(code, suite), 30)  # noqa: B023 - called at once
            refereed = median_ms(lambda: refereeing.run(code, suite), 30)  # noqa: B023
            print(f"  {label:34s} in-process {local:6.2f} ms  refereed {refereed:6.2f} ms  "
                  f"(+{refereed - local:.2f} ms, x{refereed / local:.2f})")


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ATTACK_FILES = ("tests/sandbox/attacks", "tests/analyzers/attacks", "tests/sandbox/test_hostile.py",
                "tests/sandbox/test_verdicts.py", "tests/rewards/test_laundered_faults.py",
                "tests/rewards/test_integrity_rewards.py", "tests/analyzers/test_hidden_code_report.py",
                "tests/analyzers/test_mypy_hog_budget.py", "tests/serve/test_analysis_hog.py")


def section_corpus() -> None:
    """Print section 5: how many attacks of each corpus file are defended, from one pytest run."""
    print("\n[5] the attack corpus: attacks defended per file (pytest, every backend it covers)")
    paths = [path for path in ATTACK_FILES if os.path.exists(os.path.join(REPO, path))]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "corpus.xml")
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=no",
                        f"--junitxml={report}", *paths],
                       cwd=REPO, capture_output=True, text=True, check=False)  # nosec B603
        cases = ElementTree.parse(report).getroot().iter("testcase")  # nosec B314 - our own report
        counts: dict[str, collections.Counter[str]] = {}
        for case in cases:
            verdict = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")),
                           "defended")
            module = case.get("classname", "?")  # the test module, or module.Class
            counts.setdefault(module, collections.Counter())[verdict] += 1
    total: collections.Counter[str] = collections.Counter()
    for module, outcome in sorted(counts.items()):
        total.update(outcome)
        print(f"  {module:58s} defended {outcome['defended']:3d}  not defended "
              f"{outcome['failure'] + outcome['error']:2d}  skipped {outcome['skipped']:2d}")
    elapsed = time.perf_counter() - started
    print(f"  all: {total['defended']} defended, {total['failure'] + total['error']} not defended, "
          f"{total['skipped']} skipped, in {elapsed:.0f} s ({time.strftime('%Y-%m-%d')})")


def main() -> None:
    """Run the five sections."""
    print(f"integrity benchmark on {os.cpu_count()} cores, python {sys.version.split()[0]}")
    section_cost()
    section_hiding()
    section_meter()
    section_referee()
    section_corpus()


if __name__ == "__main__":
    main()
