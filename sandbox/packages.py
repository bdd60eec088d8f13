"""Which third-party packages a Python solution may import.

A run sees the standard library and these packages, nothing else that is
installed: not rewardkit, not an evaluation package and its data.  The
default is what LeetCode-style problems expect to import; ``Sandbox(packages=...)``
replaces it.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence

DEFAULT_PACKAGES: tuple[str, ...] = ("sortedcontainers",)


def package_paths(names: Sequence[str]) -> list[str]:
    """The files and folders that make up each named top-level package or module.

    Raises ValueError, naming the package, when one is not installed here.
    """
    paths: list[str] = []
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"not a top-level package name: {name!r}")
        spec = importlib.util.find_spec(name)
        if spec is None:
            raise ValueError(f"package {name!r} is not installed; install it or leave it out of packages=")
        if spec.submodule_search_locations:
            paths.extend(os.path.abspath(p) for p in spec.submodule_search_locations)
        elif spec.origin and os.path.isfile(spec.origin):
            paths.append(os.path.abspath(spec.origin))
        else:
            raise ValueError(f"package {name!r} has no files to show the sandbox (built in?)")
    return sorted(set(paths))
