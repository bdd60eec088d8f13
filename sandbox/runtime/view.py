"""The filesystem a run sees: what programs need to run, and nothing that judges them.

:func:`build` makes, once per worker, a root holding read-only binds of the
system (``/usr``, ``/etc`` and the merged-usr links), the Python prefixes, the
sandbox runtime (at ``RUNTIME_MOUNT``), a minimal ``/dev``, and nothing else: not the home
directories, not the repository, not the benchmark data.  Every
``site-packages``/``dist-packages`` folder in it is an empty tmpfs into which
only the allow-listed packages are bound back, and pytest with what it imports
(:data:`TEST_RUNNER`, for ``pytest`` suites, where installed), so a solution
can import the standard library and those packages and cannot read rewardkit,
an evaluation package's data or anything else installed beside them.

:meth:`View.enter` runs in each run's first process, in a mount namespace of its
own: fresh tmpfs at ``/tmp``, ``/var/tmp`` and ``/dev/shm`` (so nothing one
run writes is seen by a later one, and what it writes there is charged to its
memory), its work dir bound in at the same path, ``/proc`` of its own pid
namespace, then ``chroot`` into the view.
"""

from __future__ import annotations

import glob
import importlib.util
import os
import sys
from dataclasses import dataclass, field

from . import RUNTIME_MOUNT, callgrind
from .mounts import (
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    bind_read_only,
    mount,
)

ROOT = "/tmp/rewardkit-view"  # nosec B108 - inside the worker's private /tmp
SYSTEM = ("usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
DEVICES = ("null", "zero", "full", "random", "urandom")
SCRATCH = ("tmp", "var/tmp", "dev/shm")
SCRATCH_OPTIONS = "mode=1777,size=1g"  # the run's memory cgroup is the real bound
METER_LOG = "/.callgrind-log"  # the instruction meter's FIFO, at the view's read-only top
# pytest and the packages it imports (its ``py`` shim module too): ``pytest`` suites run it.
TEST_RUNNER = ("pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py")


def package_folders() -> list[str]:
    """Every folder third-party Python packages may be installed in, for any prefix in use."""
    prefixes = {sys.base_prefix, sys.prefix, "/usr", "/usr/local"}
    found: set[str] = set()
    for prefix in prefixes:
        for pattern in ("lib/python3*/site-packages", "lib/python3*/dist-packages",
                        "lib/python3/dist-packages", "local/lib/python3*/dist-packages"):
            found.update(p for p in glob.glob(os.path.join(prefix, pattern)) if os.path.isdir(p))
    found.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p))
    return sorted(found)


def test_runner_paths() -> list[str]:
    """The files and folders of :data:`TEST_RUNNER`'s packages that are installed here."""
    paths: list[str] = []
    for name in TEST_RUNNER:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.submodule_search_locations:
            paths += [os.path.abspath(p) for p in spec.submodule_search_locations]
        elif spec is not None and spec.origin and os.path.isfile(spec.origin):
            paths.append(os.path.abspath(spec.origin))
    return paths


@dataclass
class View:
    """A built view: its root, and the folders it shows that lie where runs get fresh scratch
    (a checkout and its venv under /tmp), which :meth:`enter` shows again over the scratch."""

    root: str
    in_scratch: list[str] = field(default_factory=list)

    def enter(self, workdir: str, fresh_proc: bool) -> None:
        """In a run's first process, in its own mount namespace: fresh scratch, its work dir, chroot."""
        flags = MS_NOSUID | MS_NODEV
        # descriptors of what the scratch will cover, opened first: a recursive bind of one
        # brings back the folder with the covers inside it (emptied site-packages)
        kept = [(path, os.open(self.root + path, os.O_PATH | os.O_DIRECTORY)) for path in self.in_scratch]
        for name in SCRATCH:
            mount("tmpfs", f"{self.root}/{name}", "tmpfs", flags, SCRATCH_OPTIONS)
        for path, fd in kept:
            os.makedirs(self.root + path, mode=0o755, exist_ok=True)
            mount(f"/proc/self/fd/{fd}", self.root + path, None, MS_BIND | MS_REC)
            os.close(fd)
        target = self.root + workdir
        os.makedirs(target, mode=0o711, exist_ok=True)
        mount(workdir, target, None, MS_BIND)  # writable: the run's own work dir
        if fresh_proc:
            mount("proc", f"{self.root}/proc", "proc", flags | MS_NOEXEC)
        else:
            mount("/proc", f"{self.root}/proc", None, MS_BIND | MS_REC)
        os.chroot(self.root)
        os.chdir(workdir)


def build(keep_paths: list[str], packages: list[str], hidden: list[str], runtime_dir: str) -> View:
    """Make the view under :data:`ROOT` (root, in the worker's private mount namespace).

    ``hidden`` are folders covered wherever they are (rewardkit's own
    checkout or install, which may lie under ``/usr``); ``runtime_dir`` is
    shown at ``RUNTIME_MOUNT`` only, so no part of rewardkit is importable.
    """
    os.makedirs(ROOT, exist_ok=True)
    mount("tmpfs", ROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    for name in SYSTEM:
        source = "/" + name
        if os.path.islink(source):
            os.symlink(os.readlink(source), _inside(source))
        elif os.path.isdir(source):
            _bind(source)
    _devices()
    for name in ("proc", *SCRATCH):
        os.makedirs(_inside("/" + name), exist_ok=True)
    # Show what runs need, cover what they must not see, show again what a cover hid
    # (a venv inside a hidden checkout), cover again what that brought back (its
    # site-packages), and last show the allowed packages.
    covers = [*hidden, *package_folders()]
    covered: set[str] = set()
    _show(keep_paths)
    _cover(covers, covered)
    _show(keep_paths)
    _cover(covers, covered)
    _show([*packages, *test_runner_paths(), *keep_paths])
    os.makedirs(_inside(RUNTIME_MOUNT))
    bind_read_only(runtime_dir, _inside(RUNTIME_MOUNT))
    callgrind.make_fifo(ROOT + METER_LOG)
    mount("none", ROOT, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    scratch = tuple(f"/{name}/" for name in SCRATCH)
    return View(ROOT, sorted(p for p in set(keep_paths) if p.startswith(scratch) and os.path.isdir(p)))


def _show(paths: list[str]) -> None:
    """Bind each existing path that the view does not show yet."""
    for path in sorted(set(paths)):
        if os.path.exists(path) and not os.path.exists(_inside(path)):
            _bind(path)


def _cover(folders: list[str], covered: set[str]) -> None:
    """An empty tmpfs over each folder the view shows that is not covered yet."""
    for folder in folders:
        if folder not in covered and os.path.isdir(_inside(folder)):
            mount("tmpfs", _inside(folder), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
            covered.add(folder)


def _inside(path: str) -> str:
    return ROOT + os.path.abspath(path)


def _bind(source: str) -> None:
    """Bind ``source`` read-only at the same path inside the view, making the mount point."""
    target = _inside(source)
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        _touch(target)
    bind_read_only(source, target)


def _touch(path: str) -> None:
    """An empty file to mount a file on."""
    with open(path, "a", encoding="utf-8"):
        pass


def _devices() -> None:
    """A /dev with the harmless character devices and the standard links."""
    os.makedirs(_inside("/dev"), exist_ok=True)
    for name in DEVICES:
        target = _inside(f"/dev/{name}")
        _touch(target)
        mount(f"/dev/{name}", target, None, MS_BIND)  # writable: /dev/null takes output
    for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                       ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(link, _inside(f"/dev/{name}"))

