"""Fixtures of the installed-wheel tests: the wheel of this tree, built once per session,
virtualenvs that install it (one with every extra, one with the core dependencies only), and the
working directory of the README's and the docs' code blocks."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from installed import Installed, build_wheel, install
from test_readme import Tutorial

_COSTS: list[str] = []


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel of a clean copy of this tree (setuptools' build/ folder keeps stale files)."""
    start = time.monotonic()
    built = build_wheel(tmp_path_factory.mktemp("wheel"))
    _COSTS.append(f"built in {time.monotonic() - start:.1f} s")
    return built


def _install(tmp_path_factory: pytest.TempPathFactory, wheel: Path, extras: str) -> Installed:
    made = install(tmp_path_factory.mktemp("installed"), wheel, extras)
    _COSTS.append(f"installed with [{extras}] in {made.install_s:.1f} s ({made.venv})")
    return made


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Installed:
    """The wheel with every extra, in a fresh virtualenv."""
    return _install(tmp_path_factory, wheel, "all")


@pytest.fixture(scope="session")
def core(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Installed:
    """The wheel and its core dependencies in a fresh virtualenv: no extra at all."""
    return _install(tmp_path_factory, wheel, "")


@pytest.fixture(scope="session")
def tutorial(installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> Tutorial:
    """The working directory where the code blocks of the README and the docs run, in order, each
    once for the session."""
    folder = tmp_path_factory.mktemp("readme") / "work"
    folder.mkdir()
    return Tutorial(installed, folder)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What the installed wheel cost, beside the durations."""
    if _COSTS:
        terminalreporter.write_line(f"rewardkit wheel: {', '.join(_COSTS)}")
