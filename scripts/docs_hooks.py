"""mkdocs hook: the API reference reads the package as installed (see ``package_view.py``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

sys.path.insert(0, str(Path(__file__).parent))
import package_view  # beside this hook, which mkdocs loads by path


@event_priority(100)  # before mkdocstrings reads its paths
def on_config(config: Any) -> Any:
    """Rebuild ``.cache/docs-src/rewardkit`` next to ``mkdocs.yml``."""
    root = Path(config.config_file_path).parent
    package_view.build(root, root / ".cache" / "docs-src")
    return config
