"""Mypy in-process (``mypy.api.run``), one call per batch, warm incremental cache.

Each process type-checks in a private cache directory seeded from a shared
snapshot of the standard-library cache (built once per mypy version under
``$REWARDKIT_CACHE_DIR``, default ``~/.cache/rewardkit``), so only the first
process on a machine pays for typeshed. Third-party imports are treated as
missing (``--no-site-packages``): results do not depend on what is installed.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import mypy.api
import mypy.version

from ..finding import Finding
from ..profile import Profile
from ..tempdirs import temp_dir
from .base import Progress, Tool, Unit

# The last line of an internal error's traceback, when mypy ran out of memory or recursion.
_EXHAUSTED = re.compile(r"^(MemoryError|RecursionError)\b", re.MULTILINE)
_RESET_AFTER = 2000  # modules checked before the private cache is re-seeded
# mypy sets the process's collector thresholds so high that each run's garbage stays (~5 MiB a
# run: a worker reached 2 GiB after ~370 runs, and then scored innocent sources as too big for
# the analysis).  A full collection every few runs keeps a worker near its warm size.
_COLLECT_EVERY = 8
_WARMUP = (  # standard-library modules generated code imports most; cached in the snapshot
    "import bisect, collections, dataclasses, functools, heapq, itertools, json, math, os\n"
    "import random, re, string, subprocess, sys, threading, time, typing\n"
)


def snapshot_dir() -> Path:
    """Where the shared standard-library cache of this mypy/Python pair lives."""
    root = Path(os.environ.get("REWARDKIT_CACHE_DIR", Path.home() / ".cache" / "rewardkit"))
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    return root / f"mypy-{mypy.version.__version__}-py{py}"


@contextlib.contextmanager
def _output_captured(limit: int = 4096) -> Iterator[list[str]]:
    """Capture what is written to file descriptors 1 and 2, where mypy prints an internal
    error's traceback past ``mypy.api``'s own capture (it would reach the caller's terminal);
    the yielded list holds the tail afterwards."""
    captured: list[str] = []
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield captured
        finally:
            for stream in (sys.stdout, sys.stderr):
                stream.flush()
            for fd, copy in enumerate(saved, start=1):
                os.dup2(copy, fd)
                os.close(copy)
            sink.seek(max(0, sink.seek(0, os.SEEK_END) - limit))
            captured.append(sink.read().decode("utf-8", "replace"))


class MypyTool(Tool):
    """Type errors (``arg-type``, ``return-value``...) and missing annotations."""

    name = "mypy"

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        self._dir = temp_dir("mypy-")
        root = Path(self._dir.name)
        (root / "empty.ini").write_text("")
        self._cache = root / "cache"
        self._args = [
            f"--config-file={root / 'empty.ini'}", f"--cache-dir={self._cache}",
            "--output=json", "--no-error-summary", "--no-color-output",
            "--ignore-missing-imports", "--no-site-packages", "--follow-imports=silent",
            "--show-traceback",  # an internal error names its cause (see _mypy)
        ]
        if profile.threshold("mypy_disallow_untyped_defs"):
            self._args.append("--disallow-untyped-defs")
        self._checked = 0
        self._runs = 0
        self._seed(root / "warmup.py")

    def _seed(self, warmup: Path) -> None:
        shutil.rmtree(self._cache, ignore_errors=True)
        shared = snapshot_dir()
        if shared.is_dir():
            shutil.copytree(shared, self._cache)
            return
        warmup.write_text(_WARMUP)
        self._mypy([warmup])
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=_make_parent(shared)))
        shutil.copytree(self._cache, staging / "c")
        with contextlib.suppress(OSError):  # another process published first
            os.rename(staging / "c", shared)
        shutil.rmtree(staging, ignore_errors=True)

    def _mypy(self, paths: Sequence[Path]) -> list[dict[str, object]]:
        """Mypy's errors for ``paths``.

        A blocking error in one file (a relative import, say) stops mypy for
        the whole batch, so a batch that ends that way is checked file by file,
        and a single file's blocking errors are its findings.
        """
        with _output_captured() as traceback_text:
            out, err, status = mypy.api.run([*self._args, *map(str, paths)])
        self._collect_now_and_then()
        items = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        if status in (0, 1) or (status == 2 and items and len(paths) == 1):
            return items
        if status == 2 and items:
            return [item for path in paths for item in self._mypy([path])]
        text = (out + err).strip()
        exhausted = _EXHAUSTED.search(traceback_text[0])
        if exhausted is not None:  # the source defeated mypy (see faults.exhaustion_in)
            raise (MemoryError if exhausted.group(1) == "MemoryError" else RecursionError)(
                f"mypy internal error: {exhausted.group(1)}")
        raise RuntimeError(f"mypy exit {status}: {text[-300:]}")

    def _collect_now_and_then(self) -> None:
        """Collect mypy's garbage every ``_COLLECT_EVERY`` runs."""
        self._runs += 1
        if self._runs % _COLLECT_EVERY == 0:
            gc.collect()

    def run(self, units: Sequence[Unit], progress: Progress) -> list[list[Finding]]:
        """Mypy's errors for the batch (one call: mypy reports no progress within it),
        re-seeding its warm cache every so many files."""
        if self._checked > _RESET_AFTER:
            self._seed(Path(self._dir.name) / "warmup.py")
            self._checked = 0
            progress(units)
        self._checked += len(units)
        index = {u.name: i for i, u in enumerate(units)}
        out: list[list[Finding]] = [[] for _ in units]
        for item in self._mypy([u.path for u in units]):
            if item.get("severity") != "error":
                continue
            unit = index.get(Path(str(item["file"])).stem)
            if unit is None:
                continue
            code = str(item.get("code") or "misc")
            line = item["line"] if isinstance(item["line"], int) else 1
            found = self.emit(code, str(item["message"]), line)
            if found is not None:
                out[unit].append(found)
        return out


def _make_parent(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.parent
