"""The built wheel holds every package folder of the tree (SPEC §2: one ``rewardkit`` namespace)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from installed import REPO

ROOTS = {"rewardkit": "rewardkit", "sandbox": "rewardkit/sandbox", "analyzers": "rewardkit/analyzers",
         "trainers": "rewardkit/trainers", "benchmarks": "rewardkit/benchmarks"}


def _tree_folders() -> set[str]:
    """Each folder of the five roots that holds code or data (but `make bench`'s scripts in
    benchmarks/perf), as its path inside the wheel."""
    found = set()
    for folder, inside in ROOTS.items():
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts and path.parent.name != "perf":
                below = path.parent.relative_to(REPO / folder)
                found.add(inside if below == Path(".") else f"{inside}/{below.as_posix()}")
    return found


def test_the_wheel_has_every_package_folder(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name.rsplit("/", 1)[0] for name in archive.namelist() if name.startswith("rewardkit/")}
    missing = _tree_folders() - shipped
    assert not missing, f"package folders missing from the wheel: {sorted(missing)}"
