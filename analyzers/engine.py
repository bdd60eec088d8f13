"""In-process analysis of a batch: parse once, run every enabled tool over the batch.

One engine per (process, profile) keeps the tools warm. Sources get unique
module names from their content hash, so batch-level tools (pylint, mypy) give
each source the findings it would get alone. A tool that raises or overruns its
time limit on a batch is re-run source by source, so only the source that
breaks it carries the error.
"""

from __future__ import annotations

import hashlib
import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from .finding import Finding, ToolError
from .profile import Profile
from .report import QualityReport
from .scratch import scratch_dir
from .source import prepare
from .tools.ast_perf import PerfTool
from .tools.ast_reliability import ReliabilityTool
from .tools.bandit_tool import BanditTool
from .tools.base import Tool, Unit
from .tools.deps_tool import DepsTool
from .tools.mypy_tool import MypyTool
from .tools.pylint_tool import PylintTool
from .tools.radon_tool import RadonTool
from .tools.vulture_tool import VultureTool

TOOLS: dict[str, type[Tool]] = {
    cls.name: cls
    for cls in (
        RadonTool, VultureTool, PylintTool, BanditTool, MypyTool, PerfTool, ReliabilityTool,
        DepsTool,
    )
}


class ToolTimeout(BaseException):
    """Raised by the alarm; a BaseException so that tools cannot swallow it."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (main thread only; elsewhere no limit)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def _alarm(_sig: int, _frame: FrameType | None) -> None:
        raise ToolTimeout(f"timed out after {seconds:g}s")

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def module_name(text: str) -> str:
    """The unique, content-derived module name of a source."""
    return "rk_" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


class Engine:
    """Configured tools for one profile, reused across batches in this process."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._workdir = scratch_dir("src-")
        self._tools: dict[str, Tool] = {}

    def _tool(self, name: str) -> Tool:
        if name not in self._tools:
            self._tools[name] = TOOLS[name](self.profile)
        return self._tools[name]

    def analyze(self, codes: Sequence[object]) -> list[QualityReport]:
        """Reports for ``codes``, in order; never raises on bad code."""
        prepared = [prepare(code, self.profile) for code in codes]
        findings: list[list[Finding]] = [[p.problem] if p.problem else [] for p in prepared]
        errors: list[list[ToolError]] = [[] for _ in prepared]
        units: dict[str, Unit] = {}
        slots: dict[str, list[int]] = {}
        root = Path(self._workdir.name)
        for i, p in enumerate(prepared):
            if p.text is None or p.tree is None:
                continue
            name = module_name(p.text)
            if name not in units:
                units[name] = Unit(name, p.text, p.tree, root / f"{name}.py")
                units[name].path.write_text(p.text, "utf-8")
            slots.setdefault(name, []).append(i)
        batch = list(units.values())
        try:
            for tool_name in TOOLS:
                if not batch or not self.profile.enabled(tool_name):
                    continue
                for unit, found, error in self._run_tool(tool_name, batch):
                    for i in slots[unit.name]:
                        findings[i].extend(found)
                        if error:
                            errors[i].append(error)
        finally:
            for unit in batch:
                unit.path.unlink(missing_ok=True)
        return [QualityReport.from_findings(f, e) for f, e in zip(findings, errors, strict=True)]

    def _run_tool(
        self, tool_name: str, batch: list[Unit]
    ) -> list[tuple[Unit, list[Finding], ToolError | None]]:
        per_unit = float(self.profile.threshold("tool_timeout_s"))
        try:
            tool = self._tool(tool_name)
        except Exception as exc:  # a tool that cannot start fails every source
            error = ToolError(tool_name, f"unavailable: {type(exc).__name__}: {exc}")
            return [(u, [], error) for u in batch]
        try:
            with time_limit(per_unit * len(batch)):
                results = tool.run(batch)
            return [(u, r, None) for u, r in zip(batch, results, strict=True)]
        except (Exception, ToolTimeout) as exc:
            if len(batch) == 1:
                self._tools.pop(tool_name, None)  # state may be broken; rebuild next time
                return [(batch[0], [], ToolError(tool_name, _reason(exc)))]
        return [row for unit in batch for row in self._run_tool(tool_name, [unit])]


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    detail = text[0][:300] if text else ""
    if isinstance(exc, ToolTimeout):
        return detail
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
