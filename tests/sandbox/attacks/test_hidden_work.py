"""Work hidden from the efficiency meter in processes it does not wait for (SPEC §4.6).

Every variant in :data:`corpus.VARIANTS` does the honest program's work (about
0.13 s of CPU with 150 MB touched page by page) in some other process: a
forked child that answers through a pipe and blocks, a child the kernel reaps
because SIGCHLD is ignored, a ``python3 -c`` from ``subprocess.Popen`` or
``os.posix_spawn``, a double-fork daemon, a multiprocessing process or pool
worker, or a waited child that holds the memory; a thread is the control.
The property, for each variant: **either the run fails, or**

    time_s         >= 0.6 * honest time_s
    peak_memory_kb >= 0.6 * honest peak_memory_kb
    integral_kb_s  >= 0.4 * honest integral_kb_s

where "honest" is the smaller of two runs of the honest program in the same
sandbox, one just before and one just after the variant (so that a burst of
load during one honest run cannot make a fair variant look like a cheat).

Why these factors.  The honest program's own spread, measured on the 2-core
development machine (8-10 reruns per mode, stdio/call/script): CPU time
within -1%/+3% of the median, peak within 0.1%, integral within -5%/+3% when
quiet; the integral follows wall time, so with other work on the machine one
honest run's integral came out up to 1.5x its twin's in the same test.  With
the accounting that charges the whole tree, the hiding variants measured
within 0.9-1.15x of the honest program on every metric.  So 0.6 and 0.4 leave
a wide margin for honest reruns, while every hiding variant measured on the
code before the fix falls far below them: about 0.012 s (0.09x), 15 MB
(0.09x) and 2,000-3,000 KiB*s (0.15x) for the variants that hide a whole
process, and an integral of about 0.15x for those whose child is waited for
(time and peak do reach the parent through ``wait4``).  A run that ends in
``sandbox_error`` is not an acceptable way to fail: that is the
infrastructure breaking, not the sandbox refusing the trick.

All variants and all three modes run on the local backend, plus
``Sandbox(repeats=3)`` and C; the docker (fresh container and warm pool) and
Ray backends run the two simplest hiding tricks in stdio mode.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable

import pytest

from rewardkit.sandbox import ExecutionResult, Sandbox, Status, TestSuite

from . import corpus

TIME_FACTOR = 0.6
PEAK_FACTOR = 0.6
INTEGRAL_FACTOR = 0.4

Recorder = Callable[[str, object], None]


def figures(result: ExecutionResult) -> str:
    """One line: status, CPU time, peak and integral."""
    return (f"{result.status.value}: {result.time_s:.3f} s / {result.peak_memory_kb / 1024:.0f} MB / "
            f"{result.integral_kb_s:,.0f} KiB*s")


def shortfalls(honest: list[ExecutionResult], hiding: ExecutionResult) -> list[str]:
    """Each metric on which ``hiding`` measured below its factor of the smaller honest figure."""
    found = []
    for name, factor in (("time_s", TIME_FACTOR), ("peak_memory_kb", PEAK_FACTOR),
                         ("integral_kb_s", INTEGRAL_FACTOR)):
        reference = min(float(getattr(run, name)) for run in honest)
        value = float(getattr(hiding, name))
        if value < factor * reference:
            found.append(f"{name} {value:,.3f} < {factor} x honest {reference:,.3f} "
                         f"({value / reference if reference else 0:.2f}x)")
    return found


def assert_measured_alike(sandbox: Sandbox, honest_code: str, hiding_code: str, suite: TestSuite,
                          record: Recorder, language: str = "python",
                          repeats: int | None = None) -> None:
    """Run honest, hiding, honest again; the hiding run must fail or measure like the honest."""
    before = sandbox.run(honest_code, suite, language=language, repeats=repeats)
    assert before.passed, f"the honest program must pass: {before.feedback}"
    hiding = sandbox.run(hiding_code, suite, language=language, repeats=repeats)
    after = sandbox.run(honest_code, suite, language=language, repeats=repeats)
    assert after.passed, f"the honest program must pass: {after.feedback}"
    record("honest", f"{figures(before)} | {figures(after)}")
    record("hiding", figures(hiding))
    assert hiding.status != Status.SANDBOX_ERROR, f"the sandbox broke: {hiding.feedback}"
    if not hiding.passed:
        return  # refusing the trick is fine
    problems = shortfalls([before, after], hiding)
    assert problems == [], (
        "the hiding variant measured cheaper than the same work done honestly:\n  "
        + "\n  ".join(problems)
        + f"\n  honest {figures(before)} and {figures(after)}; hiding {figures(hiding)}")


# -- local: every variant, every mode ---------------------------------------------------------------
@pytest.mark.parametrize("mode", corpus.MODES)
@pytest.mark.parametrize("variant", corpus.VARIANTS, ids=lambda v: v.name)
def test_hidden_work_is_measured(local_sandbox: Sandbox, variant: corpus.Variant, mode: str,
                                 record_property: Recorder) -> None:
    """The variant does the honest work elsewhere; it fails or measures like the honest program."""
    suite = TestSuite.from_dict(corpus.suite(mode))
    assert_measured_alike(local_sandbox, corpus.program(corpus.HONEST, mode),
                          corpus.program(variant, mode), suite, record_property)


@pytest.mark.parametrize("variant", [corpus.FORK_PIPE_BLOCK, corpus.SIGCHLD_IGNORED],
                         ids=lambda v: v.name)
def test_hidden_work_is_measured_with_repeats(variant: corpus.Variant,
                                              record_property: Recorder) -> None:
    """Medians of three runs (``Sandbox(repeats=3)``) are no easier to fool than one run."""
    suite = TestSuite.from_dict(corpus.suite("stdio"))
    with Sandbox(workers=1, repeats=3) as sandbox:
        assert_measured_alike(sandbox, corpus.program(corpus.HONEST, "stdio"),
                              corpus.program(variant, "stdio"), suite, record_property)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed: no C toolchain here")
@pytest.mark.parametrize("name", ["fork-pipe-block", "sigchld-ignored"])
def test_hidden_work_in_c_is_measured(local_sandbox: Sandbox, name: str,
                                      record_property: Recorder) -> None:
    """The same tricks in C (stdio, ``language="c"``): fork + pipe, and SIGCHLD ignored."""
    suite = TestSuite.from_dict(corpus.C_SUITE)
    assert_measured_alike(local_sandbox, corpus.C_PROGRAMS["honest"], corpus.C_PROGRAMS[name], suite,
                          record_property, language="c")


# -- other backends: the representative tricks --------------------------------------------------------
@pytest.mark.parametrize("backend_sandbox", ["docker-fresh", "docker-warm", "ray"], indirect=True)
@pytest.mark.parametrize("variant", [corpus.FORK_PIPE_BLOCK, corpus.SIGCHLD_IGNORED],
                         ids=lambda v: v.name)
def test_hidden_work_is_measured_on_every_backend(backend_sandbox: Sandbox, variant: corpus.Variant,
                                                  record_property: Recorder) -> None:
    """Docker (fresh container and warm pool) and Ray measure the whole tree too."""
    suite = TestSuite.from_dict(corpus.suite("stdio"))
    assert_measured_alike(backend_sandbox, corpus.program(corpus.HONEST, "stdio"),
                          corpus.program(variant, "stdio"), suite, record_property)
