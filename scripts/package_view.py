"""Lay the package out as it is installed, out of links, for tools that read the checkout.

The repository maps top-level folders into the ``rewardkit`` namespace
(``sandbox/`` is ``rewardkit.sandbox``), which mypy and griffe cannot follow
in an editable install.  ``python scripts/package_view.py DEST`` makes
``DEST/rewardkit`` of links to ``rewardkit/``'s entries and to those folders.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

SUBPACKAGES = ("sandbox", "analyzers", "trainers", "benchmarks")


def build(root: Path, dest: Path) -> Path:
    """Make ``dest/rewardkit`` afresh for the checkout at ``root``; return it."""
    package = dest / "rewardkit"
    shutil.rmtree(dest, ignore_errors=True)
    package.mkdir(parents=True)
    for entry in (root / "rewardkit").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry.resolve())
    for name in SUBPACKAGES:
        (package / name).symlink_to((root / name).resolve())
    return package


if __name__ == "__main__":
    build(Path(__file__).resolve().parent.parent, Path(sys.argv[1]).resolve())
