"""The sandbox worker: a warm process that runs one job at a time for its parent.

Started once per pool slot (``python -s -c BOOT``) with a scrubbed environment,
it moves itself into private namespaces, pre-imports what Python solutions
usually need, and then serves frames on stdin/stdout:

``begin``  write the solution into a fresh work dir, compile or syntax-check it;
           for ``module`` jobs start the long-lived call server child
``run``    (program jobs) run once with the given stdin (a sealed memory file), measured;
           then the work dir holds the build again, and nothing else (:mod:`.workdir`).
           A test program (Rust ``unittest``, ``pytest``) reports its verdicts on a pipe
           of its own, each frame bearing a nonce (:func:`_test_verdicts`)
``call``   (module jobs) forward one call to the server child, measured
``calls``  (module jobs) forward a batch of calls to it at once; the reply holds their results,
           as many as fit in one reply (``results`` collects the rest)
``end``    stop the job, report the module child's cost, delete the work dir
``pin``    from now on, pin every run to one CPU: the ``slot``-th this worker may use

Runs are forked by the worker's fork server (:mod:`.fork_server`) where a run's
cost does not depend on its parent (a cgroup and a pid namespace per run), else
by the worker itself; either way the run's first process does :func:`.launch.enter`.

Expected outputs and check code never reach this process: it only runs code
and reports what happened, so a solution cannot read what it is judged by.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import json
import math
import os
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

from . import (
    RUNTIME_MOUNT,
    accounting,
    boot_code,
    callgrind,
    isolation,
    launch,
    mounts,
    pmu,
    protocol,
    pytest_runner,
    scratch,
    view,
    workdir,
)
from .callgrind import VALGRIND_SLOWDOWN
from .fork_client import ForkClient, ForkServerError
from .languages import DEFAULT_EDITION, Language, fill, find_tool, home_rustc, resolve_language, source_name
from .launch import RunSpec
from .supervise import REPLY_PIPE_BYTES, Child, Usage, defer_to_runs
from .workdir import Build

COMPILE_OUTPUT_CAP = 1 << 20
PR_SET_DUMPABLE = 4
BATCH_REPLY_S = 5.0  # a batch of calls is answered in parts at least this often
# What a runtime prints when it runs out of memory (Python, C++, Java, Node).
_OOM_MARKERS = ("MemoryError", "bad_alloc", "OutOfMemoryError", "heap out of memory")


@dataclass
class Job:
    """The job in progress: its work dir, language, kind, limits, instruction counter and how to
    start it."""

    workdir: str
    language: Language
    kind: str  # "program" | "module"
    limits: dict[str, Any]
    counter: str | None  # what counts instructions: "pmu" or "valgrind"; None under the time meter
    source_file: str
    argv: list[str] | None = None  # exec'd command; None means the fork fast path
    prelude: bool = False
    module: Child | None = None
    awaited: int = 0  # results of the module child's latest batch not yet collected
    batch_deadline: float | None = None  # when that batch's time (``budget_s``) is spent
    tests: bool = False  # built with the language's test runner (suite mode "unittest")
    pytest: bool = False  # run by the pytest runner beside the suite's test module (mode "pytest")
    edition: str = DEFAULT_EDITION
    build: Build | None = None  # a program job's built files, put back after each run

    @property
    def meter(self) -> str:
        """``instructions`` when something counts them, else ``time``."""
        return "time" if self.counter is None else "instructions"

    @property
    def slowdown(self) -> int:
        """How many times longer runs take under this meter (valgrind is ~60x slower)."""
        return VALGRIND_SLOWDOWN if self.counter == "valgrind" else 1

    @property
    def time_limit(self) -> float:
        """Wall-clock seconds one run (or one call) may take."""
        return float(self.limits["time_s"]) * self.slowdown

    @property
    def cpu_limit(self) -> int:
        """CPU seconds for the child's whole life (a module child serves many calls)."""
        total = float(self.limits.get("cpu_total_s", self.limits["time_s"]))
        return math.ceil(total * self.slowdown) + 1


class Worker:
    """Serves the parent's frames: one job at a time, each run in a fresh, limited child."""

    def __init__(self, tool_path: str, packages: list[str], hidden: list[str]) -> None:
        self.runtime_dir = os.path.dirname(os.path.abspath(__file__))
        defer_to_runs()
        # the interpreter and this runtime stay visible even when installed under a covered
        # folder (a checkout in /tmp): exec'd children (valgrind's python) import them again
        # a rustup toolchain under a home directory is shown to runs too (read-only)
        self.tools = {"rustc": rustc} if (rustc := home_rustc(tool_path)) else {}
        keep = sorted({sys.base_prefix, sys.prefix, os.path.dirname(os.path.realpath(sys.executable)),
                       self.runtime_dir, *(os.path.dirname(os.path.dirname(t)) for t in self.tools.values())})
        self.iso = isolation.enter_worker_namespaces(keep, packages, hidden, self.runtime_dir)
        if self.iso.view is not None:  # runs see the runtime apart from the rest of rewardkit
            self.runtime_dir = RUNTIME_MOUNT
        self.accounting = accounting.detect(root=os.geteuid() == 0)
        self.iso.accounting = self.accounting.to_dict()
        self.forker = self._fork_server()
        if self.iso.unprivileged_uid is None:  # runs share this worker's uid: keep them off its memory
            mounts.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        # In a container (this worker is its pid 1), runs cannot get scratch of their own: it is
        # emptied after each run instead.
        self.sweep_scratch = os.getpid() == 1 and self.iso.scratch != "per-run"
        if self.sweep_scratch:
            self.iso.scratch = "emptied after each run"
        self.tool_path = tool_path
        self.python = sys.executable
        self.job: Job | None = None
        self._startup: dict[tuple[str, str, str | None, bool], dict[str, float]] = {}
        # Work dirs have fixed names: paths end up in the child's environment and
        # hashed strings, so a fixed path keeps instruction counts identical.
        if self.iso.mount_namespace:  # /tmp is private to this worker
            self._root = "/tmp/rewardkit"  # nosec B108 - on the tmpfs of this worker's own mount namespace
            os.makedirs(self._root, exist_ok=True)
        else:
            self._root = tempfile.mkdtemp(prefix=f"rewardkit-{os.getpid()}-")
        os.chmod(self._root, 0o711)  # nosec B103 - the sandbox uid may pass through, not list
        self._meter_log: callgrind.LogFifo | None = None
        # the instruction meter's counter: the PMU's instruction event where the kernel has one
        self.pmu_event, self.pmu_note = pmu.host_event()
        self.cpus = sorted(os.sched_getaffinity(0))  # the CPUs this worker was started with
        self.cpu: int | None = None  # the CPU this worker and every run are pinned to (the ``pin`` op)

    def _fork_server(self) -> ForkClient | None:
        """A fork server for this worker's runs, where a run's cost does not depend on its parent
        (a cgroup and a pid namespace per run); None (runs forked here) elsewhere, or when it
        cannot start, which the isolation notes say."""
        if self.accounting.method not in ("cgroup-v1", "cgroup-v2") or not self.iso.pid_namespace_per_run:
            return None
        try:
            server = ForkClient(self.iso)
        except (OSError, ForkServerError) as exc:
            self.iso.notes.append(f"no fork server ({exc}): runs are forked by the worker")
            return None
        self.iso.runs_forked_by = "fork server"
        return server

    @property
    def meter_log(self) -> callgrind.LogFifo:
        """The instruction meter's log FIFO, made on first use (inside the view when there is one)."""
        if self._meter_log is None:
            if self.iso.view is not None:
                self._meter_log = callgrind.LogFifo(self.iso.view.root + view.METER_LOG, view.METER_LOG)
            else:
                path = os.path.join(self._root, "callgrind-log")
                self._meter_log = callgrind.LogFifo(path, path)
        return self._meter_log

    # -- protocol ------------------------------------------------------------------
    def handle(self, message: dict[str, Any]) -> dict[str, Any]:
        """Answer one frame from the parent (hello, begin, pin, run, call, calls, results or end)."""
        op = message.get("op")
        if op == "hello":
            return {"ok": True, "pid": os.getpid(), "python": sys.version.split()[0],
                    "isolation": self.iso.to_dict() | {"pmu": {"counts": self.pmu_event is not None,
                                                               "note": self.pmu_note}}}
        if op == "begin":
            self.end()
            return self.begin(message)
        if op == "pin":
            return self.pin(int(message.get("slot", 0)), bool(message.get("always", True)),
                            message.get("workers"))
        if self.job is None:
            return {"ok": False, "error": f"no job begun before {op!r}"}
        if op == "run":
            return self.run(str(message.get("stdin", "")))
        if op == "call":
            return self.call(message)
        if op == "calls":
            return self.calls(message)
        if op == "results":
            return self.results()
        if op == "end":
            return self.end()
        return {"ok": False, "error": f"unknown op {op!r}"}

    def pin(self, slot: int, always: bool = True, workers: int | None = None) -> dict[str, Any]:
        """Pin this worker and every later run to one CPU: the ``slot``-th (mod their count) of
        those it was started with, so workers given slots 0, 1, ... spread over the CPUs.

        With ``always`` (a measurement protocol's pinning) always; otherwise only when its pool
        has one worker per CPU (``workers``), where it places each worker's job on a CPU of
        its own: a job's processes (and the parent's thread that drives the job, which the
        pool keeps beside it) then wake each other on one CPU rather than across two, and a
        run's extra threads cannot take time from another worker's run.  Compilers are
        never pinned.  Answers with the CPU, or None when the worker stays free.
        """
        if not always and workers != len(self.cpus):
            return {"ok": True, "cpu": None}
        self.cpu = self.cpus[slot % len(self.cpus)]
        os.sched_setaffinity(0, {self.cpu})
        if self.forker is not None:
            self.forker.pin({self.cpu})
        return {"ok": True, "cpu": self.cpu}

    # -- jobs ------------------------------------------------------------------------
    def begin(self, message: dict[str, Any]) -> dict[str, Any]:
        """Start a job: write and compile the code; module jobs also load it in a call server."""
        try:
            language = resolve_language(str(message.get("language", "python")))
        except ValueError as exc:
            return {"ok": False, "status": "compile_error", "message": str(exc)}
        limits = protocol.LIMIT_DEFAULTS | dict(message.get("limits", {}))
        meter = str(message.get("meter", "time"))
        counter = pmu.counter_for(str(message.get("counter", "auto")), self.pmu_event is not None) \
            if meter == "instructions" else None
        if counter is None and meter == "instructions":
            return {"ok": False, "error": f"no PMU counter on this host ({self.pmu_note})",
                    "worker_error": True}
        job = self._new_job(language, str(message["code"]), str(message.get("kind", "program")),
                            limits, counter)
        job.prelude = bool(message.get("prelude", False))
        job.tests = bool(message.get("tests", False))
        if isinstance(message.get("pytest"), str):
            job.pytest = True
            with open(os.path.join(job.workdir, pytest_runner.TESTS), "w", encoding="utf-8",
                      errors="surrogatepass") as fh:
                fh.write(message["pytest"])
        job.edition = str(message.get("edition") or DEFAULT_EDITION)
        self.job = job
        failure = self._compile(job)
        if failure is not None:
            return failure
        if job.kind != "module":
            job.build = Build.record(job.workdir)
            return {"ok": True}
        return self._start_module(job)

    def _new_job(self, language: Language, code: str, kind: str, limits: dict[str, Any],
                 counter: str | None, name: str = "job") -> Job:
        folder = os.path.join(self._root, name)
        workdir.remove(folder)
        os.mkdir(folder, 0o700)
        name = source_name(language, code)
        with open(os.path.join(folder, name), "w", encoding="utf-8", errors="surrogatepass") as fh:
            fh.write(code)
        return Job(folder, language, kind, limits, counter, name)

    def _env(self, job: Job) -> dict[str, str]:
        return {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "HOME": job.workdir,
            "TMPDIR": job.workdir,
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "GOCACHE": os.path.join(job.workdir, ".gocache"),
            "GOPATH": os.path.join(job.workdir, ".gopath"),
            "GO111MODULE": "off",
            "GOTOOLCHAIN": "local",
        }

    def _compile(self, job: Job) -> dict[str, Any] | None:
        language = job.language
        values = {"src": job.source_file, "memory_mb": str(int(job.limits["memory_mb"])),
                  "main_class": job.source_file[:-5] if language.name == "java" else "main",
                  "python": self.python, "edition": job.edition}
        compile_argv, run_argv = (language.test_compile, language.test_run) if job.tests \
            else (language.compile, language.run)
        if job.tests and not compile_argv:
            return _compile_error(f"{language.name} has no built-in test runner: unittest mode "
                                  "cannot judge it")
        if job.pytest and language.name != "python":
            return _compile_error(f"pytest mode runs Python solutions, not {language.name}")
        if language.name == "python":
            if job.pytest:
                job.argv = [self.python, "-s", "-c", boot_code(self.runtime_dir, "pytest_runner")]
            elif job.meter == "instructions":
                job.argv = self._python_argv(job)
            elif job.kind == "module":
                return None  # its own child checks the syntax first (_start_module): one fork, not two
            return self._python_syntax(job)
        if compile_argv:
            failure = self._run_compiler(job, compile_argv, values)
            if failure is not None:
                return failure
        if job.tests:  # the test code is in the program: the run must not read it from the source
            os.unlink(os.path.join(job.workdir, job.source_file))
        run = fill(run_argv, **values)
        tool = run[0] if run[0].startswith(("./", "/")) else find_tool(run[0], self.tool_path)
        if tool is None:
            return _compile_error(f"{run[0]} not found: the {language.name} runtime is not installed")
        job.argv = [tool, *run[1:]]
        return None

    def _run_compiler(self, job: Job, template: tuple[str, ...],
                      values: dict[str, str]) -> dict[str, Any] | None:
        """Compile in a limited child; a compile error when the tool is missing or fails."""
        language = job.language
        tool = self.tools.get(template[0]) or find_tool(template[0], self.tool_path)
        if tool is None:
            return _compile_error(f"{template[0]} not found: the {language.name} "
                                  "toolchain is not installed where the sandbox runs")
        argv = [tool, *fill(template[1:], **values)]
        child = self._spawn(job, "exec", os.devnull, argv=argv, compile_step=True)
        child.pump(time.monotonic() + float(job.limits["compile_time_s"]))
        usage = child.reap()
        if usage.exit_code == 0:
            return None
        text = (bytes(child.stdout) + bytes(child.stderr)).decode("utf-8", "replace")
        reason = "compiler timed out" if usage.killed == "timeout" else text[-4000:]
        return _compile_error(reason or f"compiler exited with {usage.exit_code}")

    def _python_argv(self, job: Job) -> list[str]:
        boot = boot_code(self.runtime_dir, "harness")
        if job.kind == "module":
            extra = ["module", job.source_file, "3", "4"] + (["prelude"] if job.prelude else [])
        else:
            extra = ["program", job.source_file]
        return [self.python, "-s", "-c", boot, *extra]

    def _python_syntax(self, job: Job) -> dict[str, Any] | None:
        child = self._spawn(job, "syntax", os.devnull, compile_step=True)
        child.pump(time.monotonic() + float(job.limits["compile_time_s"]))
        usage = child.reap()
        if usage.exit_code == 0:
            return None
        text = child.stderr_tail().strip() or f"syntax check ended with {usage.killed or usage.signal}"
        return _compile_error(text)

    def _target(self, job: Job, module: bool) -> tuple[str, list[str]]:
        """What a run of the job starts: ``exec`` of its argv (under valgrind when valgrind counts
        its instructions), or its Python file forked from here as a ``module`` or a ``program``."""
        if job.argv is None:
            return ("module" if module else "program"), []
        if job.counter != "valgrind":
            return "exec", job.argv
        valgrind = find_tool("valgrind", self.tool_path)
        if valgrind is None:
            raise RuntimeError("valgrind is not installed: meter='instructions' needs it")
        return "exec", callgrind.argv(valgrind, self.meter_log.path, job.argv)

    def _spawn(self, job: Job, target: str, stdin: str | int, argv: list[str] | None = None,
               compile_step: bool = False, rpc: bool = False, gate: bool = False) -> Child:
        """Start one run of ``target`` (:class:`.launch.RunSpec`): its pipes, its cgroup, its
        namespaces, its limits; forked by the fork server when there is one, else from here.
        ``stdin``: a file to open as the run's input, or a descriptor that becomes it (and is
        closed here).

        ``gate``: the run checks the source's syntax first, as part of the run (its limits,
        uid, group and memory), but its CPU time is not the run's (:meth:`accounting.RunGroup.untimed`).
        """
        counted = job.counter is not None and not compile_step and job.argv is not None
        under_valgrind = counted and job.counter == "valgrind"
        spec = RunSpec(target, _child_limits(job, compile_step, under_valgrind), job.workdir,
                       self._env(job), path=os.path.join(job.workdir, job.source_file),
                       argv=argv or [], prelude=job.prelude, gate=gate,
                       deterministic=job.meter == "instructions",
                       cpus=self.cpus if self.cpu is not None and compile_step else None)
        memory = _group_memory_mb(int(job.limits["memory_mb"]), compile_step, under_valgrind)
        group = self.accounting.new_run(memory, spec.limits.processes,
                                        execs=job.argv is not None and not compile_step)
        pipes = _Pipes.open(stdin, rpc, self.meter_log.fresh_reader() if under_valgrind else None)
        go = None
        if counted and job.counter == "pmu":
            held, go = os.pipe()
            pipes.child.append(held)
            spec.hold = len(pipes.child) - 1
        pidfd, reaper = None, None
        try:
            if self.forker is not None:
                pid, pidfd = self.forker.spawn(spec, pipes.child, group)
                reaper = self.forker.reap
            else:
                pid = isolation.fork_run(lambda: launch.enter(self.iso, spec, group, pipes.child))
        except BaseException:
            pipes.close()
            group.close()
            if go is not None:
                os.close(go)
            raise
        group.started(pid)
        for fd in pipes.child:
            os.close(fd)
        cap = int(job.limits["output_kb"]) * 1024
        child = Child(pid, self.iso, group, pipes.stdout, pipes.stderr,
                      COMPILE_OUTPUT_CAP if compile_step else cap, request_fd=pipes.request,
                      reply_fd=pipes.reply, log_fd=pipes.log, pidfd=pidfd, reaper=reaper)
        if go is not None:
            self._attach_counter(child, go)
        return child

    def _attach_counter(self, child: Child, go: int) -> None:
        """Open the PMU counter on the held run, then let it ``exec``; if the kernel refuses, the
        run ends unstarted and the job fails as the worker's fault, not the solution's."""
        assert self.pmu_event is not None  # nosec B101 - a "pmu" job exists only with the event
        try:
            child.counter_fd = pmu.open_counter(self.pmu_event, child.pid)
        except OSError as exc:
            os.close(go)
            child.reap()
            raise RuntimeError(f"the instruction counter could not be attached: {exc}") from exc
        with contextlib.suppress(BrokenPipeError):  # the run already gone: its reap says why
            os.write(go, launch.GO)
        os.close(go)

    # -- program jobs ------------------------------------------------------------------
    def run(self, stdin: str) -> dict[str, Any]:
        """Run the program job once with ``stdin``, measured; the report carries its output."""
        job = self._current_job()
        if job.kind != "program":
            return {"ok": False, "error": "run is for program jobs"}
        target, argv = self._target(job, module=False)
        reports = job.tests or job.pytest
        child = self._spawn(job, target, _sealed_input(stdin), argv=argv, rpc=reports)
        deadline = time.monotonic() + job.time_limit
        verdicts = _test_verdicts(child, deadline) if reports else None
        child.pump(deadline)
        usage = child.reap()
        self._after_run(job)  # first: the report may measure the language's start-up in the space
        return self._report(job, child, usage) | ({"verdicts": verdicts} if reports else {})

    def _report(self, job: Job, child: Child, usage: Usage) -> dict[str, Any]:
        stderr = child.stderr_tail()
        report = {"ok": True, "outcome": _outcome(usage, stderr, job), **usage.to_dict(),
                  "stdout": bytes(child.stdout).decode("utf-8", "replace"), "stderr": stderr,
                  "instructions": None}
        if job.counter is not None:
            report["instructions"] = child.instructions()
        if job.argv is not None:  # exec'd: take the language's start-up cost off
            startup = self.startup_cost(job)
            report["time_s"] = max(0.0, usage.time_s - startup["time_s"])
            if report["instructions"] is not None:
                report["instructions"] = max(0, report["instructions"] - int(startup["instructions"]))
            report["startup_subtracted"] = startup
        return report

    def startup_cost(self, job: Job) -> dict[str, float]:
        """CPU seconds and instructions an empty program of this language costs; for a pytest
        job, the pytest runner on an empty test module (pytest's own start-up).

        Measured once per worker (median of 3 for time) and subtracted from
        exec'd runs, so reported figures cover the solution's own work.
        """
        key = (job.language.name, job.kind, job.counter, job.pytest)
        if key not in self._startup:
            self._startup[key] = {"time_s": 0.0, "instructions": 0.0}  # guards recursion
            probe = self._new_job(job.language, job.language.hello, job.kind, dict(job.limits),
                                  job.counter, name="probe")
            probe.prelude = job.prelude
            if job.pytest:
                probe.pytest = True
                with open(os.path.join(probe.workdir, pytest_runner.TESTS), "w", encoding="utf-8"):
                    pass
            times, counts = [], []
            if self._compile(probe) is None:
                for _ in range(1 if job.counter == "valgrind" else 3):
                    usage, count = self._probe_once(probe)
                    times.append(usage.time_s)
                    counts.append(count or 0)
            shutil.rmtree(probe.workdir, ignore_errors=True)
            if times:
                self._startup[key] = {"time_s": statistics.median(times),
                                      "instructions": float(statistics.median(counts))}
        return self._startup[key]

    def _probe_once(self, probe: Job) -> tuple[Usage, int | None]:
        target, argv = self._target(probe, module=probe.kind == "module")
        if probe.kind == "module":
            child = self._spawn(probe, target, os.devnull, argv=argv, rpc=True)
            child.pump(time.monotonic() + probe.time_limit, want_frame=True)
            child.close_requests()
            child.pump(time.monotonic() + probe.time_limit)
        else:
            child = self._spawn(probe, target, os.devnull, argv=argv, rpc=probe.pytest)
            deadline = time.monotonic() + probe.time_limit
            if probe.pytest:
                _test_verdicts(child, deadline)
            child.pump(deadline)
        usage = child.reap()
        return usage, child.instructions()

    # -- module jobs ---------------------------------------------------------------------
    def _start_module(self, job: Job) -> dict[str, Any]:
        target, argv = self._target(job, module=True)
        # the syntax check _compile left to this child, before the module loads
        child = self._spawn(job, target, os.devnull, argv=argv, rpc=True, gate=job.argv is None)
        job.module = child
        hello = child.pump(time.monotonic() + job.time_limit, want_frame=True)
        if hello is not None and hello.get("ok"):
            return {"ok": True, "names": hello.get("names", [])}
        result = self._finish_module(job)
        if hello is not None and "compile_error" in hello:
            return _compile_error(str(hello["compile_error"]))
        error = (hello or {}).get("error") or result.get("stderr") or "the module did not load"
        if hello is not None and str(error).startswith(("SyntaxError", "IndentationError", "TabError")):
            return {"ok": False, "status": "compile_error", "message": error}
        return {"ok": False, "status": "load_failed", "message": error,
                "traceback": (hello or {}).get("traceback", ""), "result": result}

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        """Forward one call to the module job's server child and return its reply."""
        job = self._current_job()
        child = job.module
        if child is None or child.exited:
            return {"ok": False, "error": "the solution process is gone", "gone": True}
        child.send({k: message[k] for k in ("name", "args", "kwargs", "return_arg") if k in message})
        started = time.monotonic()
        reply = child.pump(started + job.time_limit, want_frame=True)
        elapsed = time.monotonic() - started
        if reply is None:
            return {"ok": False, "gone": True, "elapsed_s": elapsed,
                    "error": "timed out" if child.killed == "timeout" else "the solution exited"}
        reply["elapsed_s"] = elapsed
        return reply

    def calls(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a batch of calls to the module job's server child; answer with their results.

        The child runs them one after the other, a reply frame each.  Each call
        has the job's limit for one call (from the result before it) and,
        with ``budget_s``, the batch all of them together (the suite's time
        left); past either, the child is killed.  See :meth:`results`.
        """
        job = self._current_job()
        child = job.module
        if child is None or child.exited:
            return {"ok": True, "results": [], "gone": True, "error": "the solution process is gone"}
        if job.awaited:
            return {"ok": False, "error": f"{job.awaited} results of the last batch are not collected"}
        batch = message.get("calls")
        if not isinstance(batch, list) or not batch:
            return {"ok": False, "error": "calls needs a non-empty list of calls"}
        child.send({"name": message.get("name"), "calls": batch})
        job.awaited = len(batch)
        budget = message.get("budget_s")
        job.batch_deadline = None if budget is None else time.monotonic() + float(budget)
        return self.results()

    def results(self) -> dict[str, Any]:
        """The next results of the batch in progress, in order: all of them, or as many as
        come in :data:`BATCH_REPLY_S` seconds or to about one output cap of bytes (at least
        one), so that the reply stays within the size the parent reads and the time it waits
        for one call; ``gone`` when the child ended before the rest."""
        job = self._current_job()
        child = job.module
        if child is None or not job.awaited:
            return {"ok": False, "error": "no batch of calls in progress"}
        first, started = child.reply_bytes, time.monotonic()
        cap = int(job.limits["output_kb"]) * 1024
        out = protocol.JsonTexts()  # passed on as the child wrote them (checked, not re-encoded)
        while job.awaited and (not out or (child.reply_bytes - first < cap
                                           and time.monotonic() - started < BATCH_REPLY_S)):
            deadline = time.monotonic() + job.time_limit
            if job.batch_deadline is not None:
                deadline = min(deadline, job.batch_deadline)
            reply = child.pump(deadline, want_frame=True, text=True)
            if reply is None:
                job.awaited = 0
                return {"ok": True, "results": out, "gone": True,
                        "error": "timed out" if child.killed == "timeout" else "the solution exited"}
            job.awaited -= 1
            out.append(reply)
        return {"ok": True, "results": out}

    def _finish_module(self, job: Job) -> dict[str, Any]:
        child = job.module
        if child is None:
            raise RuntimeError("the job has no module child to finish")
        job.module = None
        child.close_requests()  # EOF: the server loop ends by itself
        child.pump(time.monotonic() + 1.0)
        usage = child.reap()
        return self._report(job, child, usage)

    def _current_job(self) -> Job:
        """The job in progress (handle() answers run and call without one itself)."""
        if self.job is None:
            raise RuntimeError("no job in progress")
        return self.job

    def end(self) -> dict[str, Any]:
        """Finish the job, if any: stop a module child, report its cost, delete the work dir."""
        job, self.job = self.job, None
        if job is None:
            return {"ok": True}
        result = self._finish_module(job) if job.module is not None else {"ok": True}
        if self.sweep_scratch:
            self._reclaim_root()
            scratch.empty(self._root, own={"callgrind-log"})
        workdir.remove(job.workdir)
        return result

    def _after_run(self, job: Job) -> None:
        """Remove what a run left behind, so the next run starts clean: its scratch, and in its
        work dir all but the build, which gets its content back if the run changed it."""
        if self.sweep_scratch:
            self._reclaim_root()
            scratch.empty(self._root, own={os.path.basename(job.workdir), "callgrind-log"})
        if job.build is not None:
            job.build.restore()

    def _reclaim_root(self) -> None:
        """In a container, where runs have this worker's uid: make its root a folder of its
        own mode again, whatever a run put at that path or did to its mode."""
        if not os.path.isdir(self._root) or os.path.islink(self._root):
            workdir.remove(self._root)
            os.mkdir(self._root)
        os.chmod(self._root, 0o711)  # nosec B103 - the sandbox uid may pass through, not list


def _test_verdicts(child: Child, deadline: float) -> list[dict[str, Any]]:
    """A test program's verdicts (rewardkit.sandbox.rust_tests, .pytest_runner): it reads a nonce
    from its request pipe before any test runs, and writes frames bearing it on its reply pipe; a
    frame without it (the solution's) is dropped.  Returns when the program has ended (or at
    ``deadline``)."""
    nonce = secrets.token_hex(16)
    child.send({"nonce": nonce})
    verdicts = []
    while (frame := child.pump(deadline, want_frame=True)) is not None:
        if frame.pop("nonce", None) == nonce:
            verdicts.append(frame)
    return verdicts


# why the worker killed a run (Child.kill) -> the run's outcome
_KILLED_OUTCOME = {"timeout": "timeout", "output": "output_exceeded", "malformed": "runtime_error"}


def _outcome(usage: Usage, stderr: str, job: Job) -> str:
    if usage.killed in _KILLED_OUTCOME:
        return _KILLED_OUTCOME[usage.killed]
    memory_kb = int(job.limits["memory_mb"]) * 1024
    tail = stderr[-2000:]
    if usage.oom_killed or any(marker in tail for marker in _OOM_MARKERS) or usage.peak_kb > memory_kb:
        return "memory_exceeded"
    if usage.signal in (24, 9) and "RecursionError" not in tail:  # SIGXCPU / SIGKILL by rlimit
        return "timeout"
    if usage.exit_code == 0 and usage.signal is None:
        return "ok"
    return "runtime_error"


@dataclass
class _Pipes:
    """A run's pipes: the child's ends in their order (stdin, stdout, stderr[, requests,
    replies]) and the worker's ends (the meter's log is the worker's FIFO, read only)."""

    child: list[int]
    stdout: int
    stderr: int
    request: int | None = None
    reply: int | None = None
    log: int | None = None

    @classmethod
    def open(cls, stdin: str | int, rpc: bool, log: int | None) -> _Pipes:
        """The pipes, and the run's input: the file at path ``stdin``, opened, or the descriptor
        ``stdin``; ``rpc`` adds the call request and reply pipes."""
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdin_fd = os.open(stdin, os.O_RDONLY) if isinstance(stdin, str) else stdin
        pipes = cls([stdin_fd, out_w, err_w], out_r, err_r, log=log)
        if rpc:
            req_r, pipes.request = os.pipe()
            pipes.reply, rep_w = os.pipe()
            with contextlib.suppress(OSError):  # past the user's pipe quota: the default size
                fcntl.fcntl(rep_w, fcntl.F_SETPIPE_SZ, REPLY_PIPE_BYTES)
            pipes.child += [req_r, rep_w]
        return pipes

    def close(self) -> None:
        """Close every end, the child's and the worker's (a run that could not be started)."""
        for fd in [*self.child, self.stdout, self.stderr, self.request, self.reply, self.log]:
            if fd is not None:
                os.close(fd)


_SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


def _sealed_input(text: str) -> int:
    """A run's input: a memory file holding ``text``, sealed against any change, at offset 0.

    It is a regular file (a program may seek it, mmap it or read its size), in no
    folder a run can fill or replace, and charged to this worker.
    """
    fd = os.memfd_create("stdin", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        rest = memoryview(text.encode("utf-8", "surrogatepass"))
        while rest:
            rest = rest[os.write(fd, rest):]
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _child_limits(job: Job, compile_step: bool, under_valgrind: bool) -> isolation.ChildLimits:
    """The rlimits of one run: a compiler's, or the solution's under the job's limits."""
    language = job.language
    cpu = int(job.limits["compile_time_s"]) + 1 if compile_step else job.cpu_limit
    bounded = language.address_space_limit and not compile_step and not under_valgrind
    return isolation.ChildLimits(
        cpu_s=cpu,
        address_space_mb=int(job.limits["memory_mb"]) if bounded else None,
        file_size_mb=int(job.limits["file_size_mb"]),
        open_files=256,
        processes=max(language.processes, 256) if compile_step else language.processes,
    )


def _group_memory_mb(memory_mb: int, compile_step: bool, under_valgrind: bool) -> int | None:
    """The run's cgroup memory limit: the job's, none for compilers, room for valgrind's own."""
    if compile_step:
        return None
    return memory_mb * 4 + 1024 if under_valgrind else memory_mb


def _compile_error(message: str) -> dict[str, Any]:
    return {"ok": False, "status": "compile_error", "message": message.strip()[-4000:]}


def main() -> None:
    """Serve frames from stdin until EOF.

    ``argv[1]`` is extra PATH for toolchains; ``argv[2]``, JSON, the importable
    packages' paths (``packages``), folders runs must not see (``hidden``) and
    folders to add to ``sys.path`` (``sys_path``).
    """
    tool_path = sys.argv[1] if len(sys.argv) > 1 else ""
    setup = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    sys.path.extend(setup.get("sys_path", []))
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but frames may reach the parent's pipe
    worker = Worker(tool_path, list(setup.get("packages", [])), list(setup.get("hidden", [])))
    gc.collect()
    gc.freeze()  # forked children then copy fewer pages
    while True:
        try:
            message = protocol.read_frame(stdin)
        except protocol.ProtocolError:
            break
        try:
            reply = worker.handle(message)
        except Exception as exc:
            reply = {"ok": False, "error": f"worker error: {exc!r}", "worker_error": True}
        protocol.write_frame(stdout, reply)
    worker.end()
    if worker.forker is not None:
        worker.forker.close()
    worker.accounting.close()
    shutil.rmtree(worker._root, ignore_errors=True)


if __name__ == "__main__":
    main()
