"""mkdocs hook: lay the package out as it is installed, for the API reference.

The repository maps top-level folders into the ``rewardkit`` namespace
(``sandbox/`` is ``rewardkit.sandbox``), which static analysis of the checkout
cannot see.  Before a build, ``.cache/docs-src/rewardkit`` is made of links to
``rewardkit/``'s entries and to those folders, and mkdocstrings reads that.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

SUBPACKAGES = ("sandbox", "analyzers", "trainers", "benchmarks")


@event_priority(100)  # before mkdocstrings reads its paths
def on_config(config: Any) -> Any:
    """Rebuild the linked layout next to ``mkdocs.yml``."""
    root = Path(config.config_file_path).parent
    package = root / ".cache" / "docs-src" / "rewardkit"
    shutil.rmtree(package.parent, ignore_errors=True)
    package.mkdir(parents=True)
    for entry in (root / "rewardkit").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for name in SUBPACKAGES:
        (package / name).symlink_to(root / name)
    return config
