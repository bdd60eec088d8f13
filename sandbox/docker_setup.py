"""``rewardkit docker setup|status``: make the docker backend usable on this machine.

Setup is idempotent: it installs Debian's ``docker.io`` when the docker CLI or
daemon is missing (root and apt only), starts ``dockerd`` in the background
when the engine does not answer (there may be no systemd), and builds the
sandbox image when it is absent, with the build script shipped in this
package (``image/build-image.sh``: debootstrap, no registry).  The build
caches Debian's packages and the root filesystem under :func:`default_cache`.

Environment: ``REWARDKIT_SKIP_DOCKER=1`` skips setup; ``REWARDKIT_IMAGE``,
``REWARDKIT_CACHE``, ``REWARDKIT_DEBIAN_MIRROR``, ``REWARDKIT_DOCKERD_LOG``
and ``REWARDKIT_DOCKERD_TIMEOUT`` override the defaults.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess  # nosec B404 - drives apt-get, dockerd and the docker CLI
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .backends.docker import DEFAULT_IMAGE, _quiet

BUILD_SCRIPT = Path(__file__).resolve().parent / "image" / "build-image.sh"
DEFAULT_DOCKERD_LOG = "/var/log/rewardkit-dockerd.log"


class SetupError(RuntimeError):
    """A step of the set-up failed; the message says which and what to do."""


def default_cache() -> Path:
    """Where the image build keeps its caches: ``$REWARDKIT_CACHE``, else the user's cache folder."""
    if os.environ.get("REWARDKIT_CACHE"):
        return Path(os.environ["REWARDKIT_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "rewardkit", "docker")


def build_key() -> str:
    """The build script's hash, as the script labels the images it builds (``rewardkit.build``)."""
    return hashlib.sha256(BUILD_SCRIPT.read_bytes()).hexdigest()[:12]


def default_image() -> str:
    """The sandbox image tag: ``$REWARDKIT_IMAGE`` or ``rewardkit-sandbox:latest``."""
    return os.environ.get("REWARDKIT_IMAGE") or DEFAULT_IMAGE


@dataclass
class DockerState:
    """What is there: the CLI, the daemon binary, the engine's version, the image's id and size."""

    cli: str | None
    dockerd: str | None
    engine: str | None
    image: str
    image_id: str | None
    image_mb: float | None
    image_build: str | None = None  # the build script's hash the image carries (``rewardkit.build``)

    @property
    def current(self) -> bool:
        """Whether the image was built by this rewardkit's build script (what runs need is in it)."""
        return self.image_id is not None and self.image_build == build_key()

    @property
    def ready(self) -> bool:
        """The docker backend can run: the engine answers and the image is present."""
        return self.engine is not None and self.image_id is not None

    def lines(self) -> list[str]:
        """One line per part, for ``rewardkit docker status``."""
        image = (f"{self.image} ({self.image_id[:19]}, {self.image_mb:.0f} MB)"
                 if self.image_id and self.image_mb is not None else f"{self.image}: missing")
        if self.image_id and not self.current:
            image += "; built by another build script: `rewardkit docker setup` rebuilds it"
        return [f"docker CLI:   {self.cli or 'missing'}",
                f"dockerd:      {self.dockerd or 'missing'}",
                f"engine:       {'version ' + self.engine if self.engine else 'not answering'}",
                f"image:        {image}",
                f"build cache:  {default_cache()}",
                "ready:        " + ("yes" if self.ready else "no; run `rewardkit docker setup`")]


def inspect(image: str | None = None) -> DockerState:
    """The state of the CLI, the engine and the image, changing nothing."""
    image = image or default_image()
    cli, dockerd = shutil.which("docker"), shutil.which("dockerd")
    engine = image_id = build = None
    image_mb = None
    if cli is not None:
        version = _docker("version", "--format", "{{.Server.Version}}")
        engine = version.stdout.strip() if version.returncode == 0 else None
    if engine is not None:
        found = _docker("image", "inspect", "--format",
                        '{{.Id}}|{{.Size}}|{{index .Config.Labels "rewardkit.build"}}', image)
        if found.returncode == 0:
            image_id, size, label = found.stdout.strip().split("|", 2)
            image_mb = int(size) / 1e6
            build = label if label and label != "<no value>" else None
    return DockerState(cli, dockerd, engine, image, image_id, image_mb, build)


def setup(image: str | None = None, cache: Path | None = None, rebuild: bool = False,
          log: TextIO = sys.stderr) -> DockerState:
    """Install, start and build what is missing; the final state, or :class:`SetupError`."""
    image = image or default_image()

    def say(message: str) -> None:
        print(f"docker setup: {message}", file=log, flush=True)

    state = inspect(image)
    if state.engine is None:
        _start_engine(state, say)
        state = inspect(image)
        say(f"docker engine is up (version {state.engine})")
    if state.current and not rebuild:
        say(f"image {image} is present")
        return state
    if state.image_id is not None and not rebuild:
        say(f"image {image} was built by another version of rewardkit's build script; rebuilding it")
    say(f"building image {image} (cache: {cache or default_cache()})")
    _build_image(image, cache or default_cache(), rebuild)
    state = inspect(image)
    if state.image_id is None:
        raise SetupError(f"the build ended but image {image} is still missing")
    return state


def _start_engine(state: DockerState, say: Callable[[str], None]) -> None:
    if os.geteuid() != 0:
        raise SetupError("the docker engine is not running and starting it needs root "
                         "(run `sudo rewardkit docker setup`, or start docker your usual way)")
    if state.cli is None or state.dockerd is None:
        if shutil.which("apt-get") is None:
            raise SetupError("docker is not installed and there is no apt-get here: install docker")
        say("installing Debian's docker.io")
        _run(["apt-get", "update", "-qq"])
        _run(["apt-get", "install", "-y", "-qq", "docker.io"], {"DEBIAN_FRONTEND": "noninteractive"})
    log_path = Path(os.environ.get("REWARDKIT_DOCKERD_LOG") or DEFAULT_DOCKERD_LOG)
    if subprocess.run(["pgrep", "-x", "dockerd"], capture_output=True, check=False).returncode != 0:  # nosec
        say(f"starting dockerd (log: {log_path})")
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as out:
            subprocess.Popen([shutil.which("dockerd") or "dockerd"], stdin=subprocess.DEVNULL,  # nosec B603
                             stdout=out, stderr=out, start_new_session=True)
    else:
        say("dockerd is running but not answering yet; waiting for it")
    timeout = float(os.environ.get("REWARDKIT_DOCKERD_TIMEOUT") or 60)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _docker("info").returncode == 0:
            return
        time.sleep(1)
    tail = log_path.read_text(errors="replace").splitlines()[-20:] if log_path.exists() else []
    raise SetupError("\n".join([*tail, f"dockerd did not answer within {timeout:g} s; see {log_path}"]))


def _build_image(image: str, cache: Path, rebuild: bool) -> None:
    if os.geteuid() != 0:
        raise SetupError(f"image {image} is missing and building it (debootstrap) needs root: "
                         "run `sudo rewardkit docker setup`")
    env = {"REWARDKIT_IMAGE": image, "REWARDKIT_CACHE": str(cache)}
    _run(["bash", str(BUILD_SCRIPT), *(["--force"] if rebuild else [])], env, quiet=False)


def _run(argv: list[str], env: dict[str, str] | None = None, quiet: bool = True) -> None:
    """Run a set-up step; its failure is a :class:`SetupError` with the step's last output."""
    output = subprocess.PIPE if quiet else None
    done = subprocess.run(argv, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,  # nosec B603
                          stdout=output, stderr=output, text=True, check=False)
    if done.returncode != 0:
        tail = ((done.stdout or "") + (done.stderr or "")).strip().splitlines()[-20:]
        raise SetupError("\n".join([*tail, f"`{' '.join(argv)}` failed with exit status {done.returncode}"]))



def _docker(*args: str) -> subprocess.CompletedProcess[str]:
    return _quiet(["docker", *args])
