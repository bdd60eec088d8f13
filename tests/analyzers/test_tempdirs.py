"""The analysis tools' temporary folders do not outlive their processes."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rewardkit.analyzers import tempdirs

POOL_RUN = (
    "from rewardkit.analyzers import analyze_many\n"
    "if __name__ == '__main__':\n"
    "    reports = analyze_many([f'x = {i}\\n' for i in range(6)], workers=2)\n"
    "    assert len(reports) == 6 and not any(r.errors for r in reports)\n"
)


def rewardkit_folders() -> set[Path]:
    """Everything of rewardkit's in the temporary folder (analysis roots, sandbox work dirs...)."""
    return set(Path(tempfile.gettempdir()).glob("rk-*"))


def test_a_process_and_its_pool_workers_leave_no_folders(tmp_path: Path) -> None:
    script = tmp_path / "pool_run.py"
    script.write_text(POOL_RUN)
    before = rewardkit_folders()
    subprocess.run([sys.executable, str(script)], check=True, timeout=300)
    assert rewardkit_folders() - before == set()


def test_roots_of_dead_processes_are_swept_and_live_ones_kept() -> None:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    stale = Path(tempfile.gettempdir()) / f"{tempdirs.PREFIX}{finished.pid}"
    (stale / "src-leftover").mkdir(parents=True)
    assert stale in tempdirs.sweep_stale_roots()
    assert not stale.exists()
    mine = tempdirs.process_root()
    assert mine not in tempdirs.sweep_stale_roots()
    assert mine.is_dir() and mine.name == f"{tempdirs.PREFIX}{os.getpid()}"
    assert tempdirs.temp_dir("src-").name.startswith(str(mine))
