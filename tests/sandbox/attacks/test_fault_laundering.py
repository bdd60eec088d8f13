"""Fault laundering: a wrong program that breaks its own resources must not read as our fault.

``sandbox_error`` means the infrastructure failed, and every reward component
of such a completion is None: a policy that turns its failure into one opts out
of its negative reward.  Each program here is wrong (it prints ``wrong``) and
first does something to its own work dir or scratch that made the worker raise,
or fail to give the next case its input: fill it to the last byte under names
the sweep kept, fill it before the worker measures a language's start-up, nest
folders deeper than a recursive delete goes, take its own write permission
away, put a symlink where its work dir was, or fill a container's /tmp past the
container's memory.  Every one must come out as the run's own verdict (here
``wrong_answer``, or ``memory_exceeded``), never ``sandbox_error``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from rewardkit.sandbox import Limits, Sandbox, Status, TestSuite

from . import BACKENDS

TWICE = TestSuite.from_dict({"mode": "stdio", "cases": [{"input": "1\n", "output": "right\n"}] * 2})

# 64 MB files (the file-size limit) under a name the build's files have, until the disk is full;
# its input file is kept too (renamed), so that removing it frees no space
FILL_KEPT = """
import os
try:
    os.rename('.stdin', 'Stdin.class')
except OSError:
    pass
chunk = b'x' * (1 << 20)
try:
    for n in range(64):
        with open(f'Fill{n}.class', 'wb') as handle:
            for _ in range(64):
                handle.write(chunk)
except OSError:
    pass
print('wrong')
"""

# a chain of folders deeper than the interpreter's recursion limit
DEEP_TREE = """
import os
for _ in range(3000):
    os.mkdir('d')
    os.chdir('d')
open('leaf', 'w').write('x')
print('wrong')
"""

# a file left in a work dir the run then made read-only (its uid owns the dir in a container)
READ_ONLY_WORKDIR = """
import os
open('left', 'w').write('x')
os.mkdir('sub')
open('sub/left', 'w').write('x')
os.chmod('sub', 0o500)
os.chmod('.', 0o500)
print('wrong')
"""

# the work dir moved away and a symlink put in its place (its parent is the run's uid's in a
# container)
MOVED_WORKDIR = """
import os
here = os.getcwd()
try:
    os.rename(here, here + '-moved')
    os.symlink('/nonexistent', here)
except OSError:
    pass
print('wrong')
"""

ATTACKS = {"fill-kept-names": FILL_KEPT, "deep-tree": DEEP_TREE,
           "read-only-workdir": READ_ONLY_WORKDIR, "moved-workdir": MOVED_WORKDIR}


@pytest.mark.parametrize("backend_sandbox", BACKENDS, indirect=True)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_broken_work_dir_is_the_runs_outcome(backend_sandbox: Sandbox, attack: str) -> None:
    """The wrong program is judged wrong, on every case, and the worker goes on."""
    result = backend_sandbox.run(ATTACKS[attack], TWICE)
    assert result.status == Status.WRONG_ANSWER, (result.status, result.feedback)
    assert result.tests_total == 2
    after = backend_sandbox.run("input()\nprint('right')\n", TWICE)
    assert after.passed, f"the next job on the worker: {after.status} {after.feedback}"


# a compiled program's first run fills the work dir: the worker then measures the language's
# start-up (once per worker) in a folder beside it
FILL_C = r"""
#include <stdio.h>
#include <string.h>
int main(void) {
    static char chunk[1 << 20];
    char name[32];
    memset(chunk, 'x', sizeof chunk);
    for (int n = 0; n < 64; n++) {
        snprintf(name, sizeof name, "fill%d", n);
        FILE *f = fopen(name, "wb");
        if (!f) break;
        int full = 0;
        for (int i = 0; i < 64 && !full; i++) full = fwrite(chunk, 1, sizeof chunk, f) != sizeof chunk;
        fclose(f);
        if (full) break;
    }
    puts("wrong");
    return 0;
}
"""


@pytest.fixture
def fresh_local() -> Iterator[Sandbox]:
    """A local worker of its own, which has measured no language's start-up yet."""
    with Sandbox(workers=1) as sandbox:
        yield sandbox


def test_a_full_disk_before_the_start_up_probe_is_the_runs_outcome(fresh_local: Sandbox) -> None:
    result = fresh_local.run(FILL_C, TWICE, language="c")
    if result.status == Status.COMPILE_ERROR and "not installed" in result.feedback:
        pytest.skip(f"no C compiler: {result.feedback}")
    assert result.status == Status.WRONG_ANSWER, (result.status, result.feedback)


# a container's memory is one cgroup: files in its tmpfs are memory that no process's resident
# set shows, so at the container's limit the kernel's OOM killer would pick the worker
FILL_TMP = """
chunk = b'x' * (1 << 20)
try:
    for n in range(12):
        with open(f'/tmp/fill{n}', 'wb') as handle:
            for _ in range(40):
                handle.write(chunk)
except OSError:
    pass
print('wrong')
"""


@pytest.fixture
def small_container() -> Iterator[Sandbox]:
    """A warm container for runs of 100 MB: its whole memory was smaller than its full /tmp."""
    if os.environ.get("REWARDKIT_SKIP_DOCKER") == "1":
        pytest.skip("REWARDKIT_SKIP_DOCKER=1: docker backend skipped on request")
    try:
        sandbox = Sandbox(backend="docker", workers=1, warm_pool=True, limits=Limits(memory_mb=100))
    except RuntimeError as exc:  # no CLI, no engine or no image: check_docker says which
        pytest.skip(f"docker backend unavailable: {exc}")
    with sandbox:
        yield sandbox


def test_a_full_tmp_does_not_take_the_container_down(small_container: Sandbox) -> None:
    result = small_container.run(FILL_TMP, TWICE)
    assert result.status == Status.MEMORY_EXCEEDED, (result.status, result.feedback)
