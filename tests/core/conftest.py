"""Fixtures of the installed-wheel tests: one virtualenv with ``rewardkit[all]`` per session."""

from __future__ import annotations

import pytest
from installed import Installed, install

_MADE: list[Installed] = []


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel of this tree with every extra, in a fresh virtualenv (built once per session)."""
    _MADE.append(install(tmp_path_factory.mktemp("installed")))
    return _MADE[-1]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What the installed wheel cost, beside the durations."""
    for made in _MADE:
        terminalreporter.write_line(f"rewardkit wheel: built in {made.build_s:.1f} s, "
                                    f"installed with [all] in {made.install_s:.1f} s ({made.venv})")
