"""``rewardkit docker setup|status``: what an installed user runs instead of the checkout's scripts.

Only the cheap paths run here (the engine is up and the image present): the
image build itself takes minutes and is what ``make docker`` exercises.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rewardkit.sandbox import docker_setup

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(os.environ.get("REWARDKIT_SKIP_DOCKER") == "1",
                       reason="REWARDKIT_SKIP_DOCKER=1: docker backend tests skipped on request"),
]


def rewardkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rewardkit", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120, check=False)


def test_setup_with_the_engine_up_and_the_image_present_changes_nothing(tmp_path: Path) -> None:
    before = docker_setup.inspect()
    assert before.ready, "\n".join(before.lines())
    done = rewardkit("docker", "setup", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"image {before.image} is present" in done.stderr
    assert "docker backend ready" in done.stdout and "Traceback" not in done.stderr
    assert docker_setup.inspect().image_id == before.image_id  # not rebuilt
    assert list(tmp_path.iterdir()) == []


def test_an_image_from_another_build_script_is_rebuilt(tmp_path: Path) -> None:
    """An image an older build script made may lack what runs now need (pytest for pytest
    suites): setup tells it by the ``rewardkit.build`` label and rebuilds it."""
    state = docker_setup.inspect()
    if not state.current:  # an unlabelled or older image: setup rebuilds it now
        done = rewardkit("docker", "setup", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "built by another version of rewardkit's build script; rebuilding" in done.stderr
    state = docker_setup.inspect()
    assert state.current and state.image_build == docker_setup.build_key()


def test_status_says_what_is_there(tmp_path: Path) -> None:
    ready = rewardkit("docker", "status", cwd=tmp_path)
    assert ready.returncode == 0, ready.stdout + ready.stderr
    assert "engine:       version " in ready.stdout and "ready:        yes" in ready.stdout
    missing = rewardkit("docker", "status", "--image", "rewardkit-sandbox:no-such-tag", cwd=tmp_path)
    assert missing.returncode == 1
    assert "rewardkit-sandbox:no-such-tag: missing" in missing.stdout
    assert "run `rewardkit docker setup`" in missing.stdout


def test_the_build_script_ships_in_the_package_and_parses() -> None:
    assert docker_setup.BUILD_SCRIPT.is_file()
    assert subprocess.run(["bash", "-n", str(docker_setup.BUILD_SCRIPT)], check=False).returncode == 0


def test_the_build_cache_is_outside_the_package(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("REWARDKIT_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert docker_setup.default_cache() == tmp_path / "rewardkit" / "docker"
    monkeypatch.setenv("REWARDKIT_CACHE", str(tmp_path / "mine"))
    assert docker_setup.default_cache() == tmp_path / "mine"
