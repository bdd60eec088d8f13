"""The built wheel holds every package folder of the tree (SPEC §2: one ``rewardkit`` namespace)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LOCAL_ONLY = (".git", ".venv", "build", "*.egg-info", "out", ".cache", ".typecheck", "*_cache", "__pycache__")
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


def test_the_wheel_has_every_package_folder(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a clean copy: setuptools' build/ folder keeps stale files
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*LOCAL_ONLY))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(tmp_path), str(source)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("rewardkit-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = {name.rsplit("/", 1)[0] for name in archive.namelist() if name.startswith("rewardkit/")}
    missing = _tree_folders() - shipped
    assert not missing, f"package folders missing from the wheel: {sorted(missing)}"
