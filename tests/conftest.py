"""Shared fixtures (one warm local sandbox, one local Ray instance, the fitted tiny model) and the
split of the suite into a parallel part and a serial part.

``make test`` runs the suite twice over: ``-m "not serial"`` on pytest-xdist
workers (``--dist loadgroup``), then ``-m serial`` in one process with
nothing beside it.  :data:`SERIAL` names the tests that go in the serial
part: those that assert on wall-clock or CPU time, compare the measured cost
of two runs, or look for leftovers machine-wide.  Tests that share a costly
fixture are kept on one xdist worker (:data:`GROUPS`), so that the fixture is
built once per run: the wheel and its virtualenvs, the Ray instance, and the
module fixtures that run a batch of real work.

Torch is imported only when a test asks for the model or for one torch thread,
so that the tests that need neither start without it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from local_ray import LocalRay

from rewardkit.sandbox import Sandbox
from rewardkit.sandbox.runtime import pmu

if TYPE_CHECKING:
    from tiny_lm import TinyLM


# Test files (or node id prefixes) of the serial part, relative to tests/.
SERIAL = (
    "analyzers/test_mypy_hog_budget.py",  # the hog's and the honest source's times compared
    "analyzers/test_time_budget.py",  # wall clock against the budget
    "analyzers/test_tempdirs.py",  # every rk-* folder of the machine's temporary folder
    "formats/test_agree_kodcode.py",  # KodCode's harness: pytest started under a 3 s wall clock
    "sandbox/attacks/test_hidden_work.py",  # measured time and memory compared with an honest run
    "sandbox/test_accounting.py",  # CPU time and peak memory measured; cgroups looked for
    "sandbox/test_meters.py::test_peak_memory_and_integral_follow_the_allocation",  # integrals compared
    "sandbox/test_batched_calls.py::test_a_call_that_never_returns_ends_the_batch_at_its_limit",
    "sandbox/test_docker.py",  # every rewardkit container of the machine; wall clock
    "sandbox/test_leftover_check.py",  # plants what the other tests' leftover checks look for
    "sandbox/test_suite_time.py",  # wall clock against the suite's limit
    "sandbox/test_ray_backend.py::test_no_answer_in_time_is_a_sandbox_error",
    "sandbox/test_ray_cluster.py",  # Ray's health checks against the time a crashed node takes
    "sandbox/test_worker_faults.py::test_a_stopped_worker_gives_sandbox_error_within_the_reply_timeout",
    "rewards/test_noise_floor.py::test_identical_work_scores_zero_in_the_median",  # times compared
    "rewards/test_paired_efficiency.py",  # gains measured in rounds: their signs asserted
    "serve/test_analysis_hog.py",  # a small request's time compared with a hog's
    "serve/test_client_restart.py::test_a_service_that_does_not_come_back",
    "serve/test_fair_share.py",  # turns of the scheduler timed
    "trainers/test_generators.py::test_timeout_gives_empty_text",
    "trainers/test_generators.py::test_optimize_against_an_unreachable_server_fails_fast",
)
# Test files whose tests share a costly fixture -> their group: one xdist worker runs them all, so
# that the fixture is built once (the wheel and its virtualenvs; the Ray instance; a module's batch).
GROUPS = {"core/test_extras.py": "wheel", "core/test_packaging.py": "wheel",
          "core/test_readme.py": "wheel", "core/test_wheel.py": "wheel",
          "analyzers/test_ray_batch.py": "ray", "sandbox/test_ray_backend.py": "ray",
          "sandbox/attacks/test_instruction_meter.py": "meter attacks",  # the attacks under valgrind
          "sandbox/test_pmu_meter.py": "pmu meter",  # the counted runs
          "formats/test_agree_mbpp.py": "mbpp corpus",  # the corpus judged by MBPP's harness
          "trainers/test_afterburner.py": "afterburner",  # the optimisation run
          "envs/test_verifiers.py": "verifiers"}  # verifiers' port files, removed once its tests end
# A test of another file that runs on the Ray or the docker backend (a parameter names it) joins
# the "ray" or the "docker" group: a sandbox fixture of each built once, and the leftover checks
# after a docker test never see the containers of another worker's docker test.
BACKEND_PARAMETER = re.compile(r"\[(?:.*-)?(ray|docker)(?:-.*)?\]$")


def group(nodeid: str) -> str | None:
    """The group of the test ``nodeid`` (``tests/...::name[params]``), or None for a test of its own."""
    path = nodeid.partition("::")[0].removeprefix("tests/")
    if path in GROUPS:
        return GROUPS[path]
    backend = BACKEND_PARAMETER.search(nodeid)
    return backend.group(1) if backend else None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` with the groups of :func:`group`: each group goes to one worker whole,
    every other test on its own to whichever worker is free.  (xdist's ``xdist_group`` marks
    would do this, but xdist 3.8 puts their names in ``item._nodeid``, which pytest 9 ignores.)"""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return group(nodeid) or nodeid

    return GroupScheduling(config, log)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m serial``, skip importing the test files that hold no serial test (importing
    them all, trl's and ray's imports among them, takes seconds)."""
    root = config.rootpath / "tests"
    if config.option.markexpr != "serial" or not collection_path.name.startswith("test_") \
            or collection_path.suffix != ".py" or not collection_path.is_relative_to(root):
        return None
    path = collection_path.relative_to(root).as_posix()
    return None if any(entry.partition("::")[0] == path for entry in SERIAL) else True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests of :data:`SERIAL` ``serial``."""
    root = config.rootpath / "tests"
    for item in items:
        path = item.path.relative_to(root).as_posix() if item.path.is_relative_to(root) else ""
        name = f"{path}::{item.name}"
        if any(name == entry or name.startswith((f"{entry}::", f"{entry}[")) for entry in SERIAL):
            item.add_marker(pytest.mark.serial)


@pytest.fixture(scope="session")
def ray_local() -> Iterator[LocalRay]:
    """The Ray instance every Ray test of this process shares (a stop and a start cost seconds)."""
    ray = pytest.importorskip("ray", reason="the ray package is not installed (pip install 'rewardkit[ray]')")
    ray.shutdown()
    local = LocalRay(ray)
    yield local
    ray.shutdown()


@pytest.fixture
def ray_instance(ray_local: LocalRay) -> None:
    """The session's Ray instance, up (a test may have stopped it)."""
    ray_local.ensure()


@pytest.fixture
def valgrind_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The instruction meter counts with valgrind (exact run to run) whatever the host has."""
    monkeypatch.setenv(pmu.CHOICE, "valgrind")


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(workers=2) as sb:
        yield sb


@contextmanager
def torch_on_one_thread() -> Iterator[None]:
    """Torch on one thread: on a busy two-core machine two threads wait on each other (~10x slower)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """:func:`torch_on_one_thread` for the rest of the module."""
    with torch_on_one_thread():
        yield


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> TinyLM:
    """The fitted tiny model of :mod:`tiny_lm`, built once for the session (trainers load it by its
    path; nothing writes to it)."""
    from tiny_lm import build

    with torch_on_one_thread():
        return build(tmp_path_factory.mktemp("tiny"))
