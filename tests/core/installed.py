"""rewardkit as users get it: the wheel, built from a clean copy of the tree, in a fresh virtualenv.

:func:`install` builds the wheel as ``tests/core/test_packaging.py`` does (a
copy without ``.venv``, ``build/`` or ``*.egg-info``, whose stale files would
hide a package the wheel lacks; ``pip wheel --no-deps --no-build-isolation``),
makes a virtualenv with ``python -m venv`` and installs ``<wheel>[all]`` into
it under the repository's ``constraints.txt`` (the CPU torch build the
Makefile pins; pip's configuration supplies its wheel).  Nothing is written
into the repository.  :class:`Installed` runs the venv's own ``rewardkit``
script and python from a directory outside the repository, with the venv's
``bin`` first on ``PATH`` and no ``PYTHONPATH``, so the checkout can never
stand in for what the wheel lacks.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CONSTRAINTS = REPO / "constraints.txt"
LOCAL_ONLY = (".git", ".venv", "build", "*.egg-info", "out", ".cache", ".typecheck", "*_cache", "__pycache__")
INSTALL_TIMEOUT_S = 1200  # a cold pip cache downloads torch's dependencies, ray, trl...


class InstallError(RuntimeError):
    """A step of building or installing the wheel failed; the message carries pip's output."""


@dataclass(frozen=True)
class Installed:
    """A virtualenv holding the wheel with ``extras`` (none for ""), and how long the install took."""

    venv: Path
    wheel: Path
    extras: str
    install_s: float

    @property
    def bin(self) -> Path:
        return self.venv / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    @property
    def site_packages(self) -> Path:
        (found,) = self.venv.glob("lib/python3*/site-packages")
        return found

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """This process's environment with the venv activated: its ``bin`` first on ``PATH``, no
        ``PYTHONPATH`` and no other venv's ``bin`` (so nothing of the checkout is importable), and
        bytecode written as a user's Python writes it (the venv is installed without it)."""
        env = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONDONTWRITEBYTECODE")}
        other = os.environ.get("VIRTUAL_ENV")
        path = [p for p in env.get("PATH", "").split(os.pathsep)
                if p and not (other and p.startswith(other)) and not p.startswith(str(REPO))]
        env.update(PATH=os.pathsep.join([str(self.bin), *path]), VIRTUAL_ENV=str(self.venv),
                   PYTHONUNBUFFERED="1")
        env.update(extra or {})
        return env

    def run(self, command: Sequence[str], cwd: Path, timeout: float = 300, stdin: str | None = None,
            extra_env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """``command`` in ``cwd`` with the venv's environment; its output as text, never raising on
        a non-zero exit (tests assert on ``returncode`` with the output in the message)."""
        assert_outside_repo(cwd)
        return subprocess.run(list(command), cwd=cwd, env=self.env(extra_env), input=stdin, text=True,
                              capture_output=True, timeout=timeout, check=False)

    def rewardkit(self, *args: str, cwd: Path, timeout: float = 300,
                  stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """The venv's ``rewardkit`` console script with ``args``."""
        return self.run([str(self.bin / "rewardkit"), *args], cwd, timeout, stdin)


def assert_outside_repo(path: Path) -> None:
    """Refuse a working directory inside the checkout: it would put the repository's code on
    ``sys.path`` (``python -c``, ``python -m``) and hide what the wheel lacks."""
    resolved = path.resolve()
    if resolved == REPO or REPO in resolved.parents:
        raise ValueError(f"{path} is inside the repository; installed commands run outside it")


def _pip(args: Sequence[str], python: Path | str, timeout: float) -> None:
    done = subprocess.run([str(python), "-m", "pip", *args], capture_output=True, text=True,
                          timeout=timeout, check=False)
    if done.returncode:
        raise InstallError(f"pip {' '.join(args)} failed ({done.returncode}):\n{done.stdout[-4000:]}"
                           f"\n{done.stderr[-4000:]}")


def build_wheel(into: Path) -> Path:
    """The wheel of a clean copy of the repository, written into ``into``."""
    source = into / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*LOCAL_ONLY))
    _pip(["wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(into), str(source)],
         sys.executable, timeout=300)
    shutil.rmtree(source)
    (wheel,) = into.glob("rewardkit-*.whl")
    return wheel


def install(into: Path, wheel: Path, extras: str = "all") -> Installed:
    """Install ``wheel`` with ``extras`` (none for ``""``) into a fresh virtualenv under ``into``."""
    if not CONSTRAINTS.is_file():
        raise InstallError(f"{CONSTRAINTS} is missing: it pins the torch build the wheel is tested with")
    start = time.monotonic()
    venv = into / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    requirement = f"{wheel}[{extras}]" if extras else str(wheel)
    # --no-compile: pip byte-compiles every module it installs (torch, ray, transformers...), 45 of
    # the 74 s [all] took here; the venv's Python compiles and keeps what a test imports (env())
    _pip(["install", "-q", "--disable-pip-version-check", "--no-compile", requirement,
          "-c", str(CONSTRAINTS)], venv / "bin" / "python", timeout=INSTALL_TIMEOUT_S)
    return Installed(venv=venv, wheel=wheel, extras=extras, install_s=time.monotonic() - start)


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def health(port: int, timeout: float = 2.0) -> bytes | None:
    """The body of ``GET /health`` on the loopback ``port``, or None while nothing answers."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=timeout) as answer:
            return bytes(answer.read())
    except OSError:
        return None


@contextmanager
def serving(command: Sequence[str], port: int, cwd: Path, env: Mapping[str, str], log: Path,
            ready_s: float = 120) -> Iterator[subprocess.Popen[bytes]]:
    """Run a ``rewardkit serve`` command until ``/health`` answers on ``port``; stop it with SIGINT
    when the block ends (SIGKILL 30 s later), even when the block fails."""
    assert_outside_repo(cwd)
    with open(log, "wb") as out:
        process = subprocess.Popen(list(command), cwd=cwd, env=dict(env), stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + ready_s
        while health(port) is None:
            if process.poll() is not None:
                raise RuntimeError(f"{' '.join(command)} exited ({process.returncode}):\n{log.read_text()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{' '.join(command)}: no /health in {ready_s:g} s:\n{log.read_text()}")
            time.sleep(0.2)
        yield process
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes], grace_s: float = 30) -> int:
    """SIGINT (what Ctrl-C sends), then SIGKILL to its whole session if it has not exited in
    ``grace_s``; returns the exit code."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)  # as Ctrl-C: the whole group, a `bash -c` wrapper too
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return int(process.returncode)
