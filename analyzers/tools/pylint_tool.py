"""Pylint in-process, one persistent linter per process (start-up paid once).

Only the structure and style/documentation messages of the catalog (plus the
profile's ``[pylint] enable``) are on, so cross-module checks such as
duplicate-code never run and sources in one batch cannot affect each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import astroid
from pylint.lint import Run
from pylint.reporters import CollectingReporter

from ..catalog import RULES
from ..finding import Finding
from ..profile import Profile
from ..scratch import scratch_dir
from .base import Tool, Unit

_LIMITS = (
    "max_args", "max_attributes", "max_branches", "max_returns", "max_statements",
    "max_locals", "max_nested_blocks", "max_module_lines",
)


def _arguments(profile: Profile, rcfile: Path) -> list[str]:
    messages = sorted(
        {r.rule for r in RULES if r.tool == "pylint" and r.rule != "*"}
        | set(profile.pylint_extra)
    )
    limits = [
        f"--{name.replace('_', '-')}={profile.threshold(name)}" for name in _LIMITS
    ]
    return [
        f"--rcfile={rcfile}", "--disable=all", f"--enable={','.join(messages)}",
        "--jobs=1", "--persistent=n", "--score=n", "--reports=n", *limits,
    ]


class PylintTool(Tool):
    """Structure (R09xx, C0302, R1702) and naming/docstring (C0103, C011x) messages."""

    name = "pylint"

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        self._dir = scratch_dir("pylint-")
        root = Path(self._dir.name)
        (root / "empty.cfg").write_text("")
        (root / "warmup.py").write_text('"""Warm-up module."""\n')
        run = Run(
            [*_arguments(profile, root / "empty.cfg"), str(root / "warmup.py")],
            reporter=CollectingReporter(), exit=False,
        )
        self._linter = run.linter

    def run(self, units: Sequence[Unit]) -> list[list[Finding]]:
        """One pylint check of the batch on the warm linter; a fatal message raises."""
        reporter = CollectingReporter()
        self._linter.set_reporter(reporter)
        try:
            self._linter.check([str(u.path) for u in units])
        finally:
            for unit in units:
                astroid.MANAGER.astroid_cache.pop(unit.name, None)
        index = {u.name: i for i, u in enumerate(units)}
        out: list[list[Finding]] = [[] for _ in units]
        for msg in reporter.messages:
            if msg.msg_id.startswith("F"):
                raise RuntimeError(f"{msg.symbol}: {msg.msg}")
            found = self.emit(msg.msg_id, f"{msg.symbol}: {msg.msg}", msg.line)
            if found is not None:
                out[index[msg.module]].append(found)
        return out
