"""The filesystem view (sandbox/runtime/view.py), built and entered for real in a private mount namespace.

A checkout whose venv lies under /tmp (a clean clone in /tmp, as CI may make)
must stay visible to runs although each run gets a fresh /tmp, and what the
view covers inside it (site-packages, rewardkit's sources) must stay covered.
Needs root (mount namespaces); everything happens in a forked helper, so the
test process's own mounts are untouched.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from rewardkit.sandbox.runtime import RUNTIME_MOUNT, mounts, view

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mount namespaces need root")

CHECKOUT = "/tmp/co"  # nosec B108 - inside the helper's private /tmp
SITE = f"{CHECKOUT}/.venv/lib/python3.11/site-packages"


def _layout() -> None:
    """A checkout with a venv, an allowed package, an answer key and rewardkit's sources."""
    for folder in (f"{SITE}/allowed", f"{SITE}/answer_key", f"{CHECKOUT}/.venv/bin",
                   f"{CHECKOUT}/benchmarks", f"{CHECKOUT}/sandbox/runtime"):
        os.makedirs(folder)
    for path in (f"{SITE}/allowed/__init__.py", f"{SITE}/answer_key/__init__.py",
                 f"{CHECKOUT}/.venv/bin/python", f"{CHECKOUT}/benchmarks/references.json",
                 f"{CHECKOUT}/sandbox/runtime/harness.py"):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("x = 1\n")


def _seen_by_a_run(built: view.View) -> dict[str, bool]:
    """Enter the view in a grandchild (as a run does) and report which paths it can see."""
    workdir = "/tmp/rewardkit/job"  # nosec B108 - the helper's private /tmp
    os.makedirs(workdir, exist_ok=True)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the run
        try:
            mounts.unshare(mounts.CLONE_NEWNS, "unshare")
            built.enter(workdir, fresh_proc=False)
            paths = [f"{SITE}/allowed/__init__.py", f"{SITE}/answer_key", f"{CHECKOUT}/.venv/bin/python",
                     f"{CHECKOUT}/benchmarks", f"{CHECKOUT}/sandbox/runtime/harness.py",
                     f"{RUNTIME_MOUNT}/harness.py", "/tmp/leftover"]
            os.write(write, json.dumps({p: os.path.exists(p) for p in paths}).encode())
            with open("/tmp/leftover", "w", encoding="utf-8"):  # nosec B108 - for the next run to miss
                pass
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    return json.loads(os.read(read, 65536) or b"{}")


def _helper(out: int) -> None:
    mounts.unshare(mounts.CLONE_NEWNS, "unshare")
    mounts.mount("none", "/", None, mounts.MS_REC | mounts.MS_PRIVATE)
    mounts.mount("tmpfs", "/tmp", "tmpfs", mounts.MS_NOSUID | mounts.MS_NODEV, "size=64m")  # nosec B108
    _layout()
    built = view.build([sys.base_prefix, f"{CHECKOUT}/.venv"], [f"{SITE}/allowed"], [CHECKOUT, SITE],
                       f"{CHECKOUT}/sandbox/runtime")
    first = _seen_by_a_run(built)
    os.write(out, json.dumps({"in_scratch": built.in_scratch, "first": first,
                              "second": _seen_by_a_run(built)}).encode())


def test_a_checkout_under_tmp_stays_visible_and_covered() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - helper with its own mounts
        try:
            _helper(write)
        except BaseException as exc:  # the test prints why
            os.write(write, json.dumps({"error": repr(exc)}).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    report = json.loads(os.read(read, 65536) or b"{}")
    assert report and "error" not in report, f"the helper could not build or enter the view: {report}"
    assert f"{CHECKOUT}/.venv" in report["in_scratch"]
    for run in ("first", "second"):
        seen = report[run]
        assert seen[f"{SITE}/allowed/__init__.py"] and seen[f"{CHECKOUT}/.venv/bin/python"], seen
        assert seen[f"{RUNTIME_MOUNT}/harness.py"], seen  # the runtime, apart from its package
        assert not seen[f"{CHECKOUT}/sandbox/runtime/harness.py"], seen
        assert not seen[f"{SITE}/answer_key"] and not seen[f"{CHECKOUT}/benchmarks"], seen
    assert not report["second"]["/tmp/leftover"], "a run's /tmp is fresh"
