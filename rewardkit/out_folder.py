"""Output folders: a command does not silently replace what an earlier run wrote there.

``bench``, ``optimize`` and ``train`` check their ``--out`` before doing any
work, and go on only with ``--force`` when an earlier run's files are there.
"""

from __future__ import annotations

from pathlib import Path

FORCE_HELP = "replace what an earlier run wrote in --out (refused otherwise)"


def earlier_run(out: str | Path, pattern: str) -> str | None:
    """Why writing into ``out`` would replace an earlier run, or None.

    ``pattern`` is a glob of what every run writes there (``report.json``; ``*``
    for anything at all, as a trainer's checkpoints take any name).
    """
    found = sorted(Path(out).glob(pattern)) if Path(out).is_dir() else []
    if not found:
        return None
    return (f"{found[0]} is an earlier run's; give another --out, or --force to replace "
            f"{'it' if pattern != '*' else 'the folder'}")
