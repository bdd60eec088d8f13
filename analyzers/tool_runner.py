"""In-process analysis of a batch: prepare every source, run every enabled tool over the batch.

Tool runners run in the analysis worker processes (:mod:`.analysis_worker`), whose pool
(:mod:`.pool`) enforces the per-source time budget; ``progress(tool, positions)``
is called before a tool works on the sources at ``positions`` (indices into the
batch), and the pool's deadlines and blame follow it.

One runner per (process, profile) keeps the tools warm. Sources get unique
module names from their content hash, so batch-level tools (pylint, mypy) give
each source the findings it would get alone. Code a source runs from text
(:mod:`.hidden_code`) is a unit of its own, whose findings count for the source
at the line of the ``exec``/``eval``. A tool that raises on a batch is re-run
source by source, so only the source that breaks it carries the failure: an
input fault when the source caused it, else a ToolError (:mod:`.faults`).
Every tool runs under the interpreter's recursion limit of when the runner was
made (mypy raises the process's), so what a source may do does not depend on
which tool ran before.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from .faults import exhaustion_in, input_fault
from .finding import INPUT_FAULT_TOOL, Finding, ToolError
from .profile import Profile
from .report import QualityReport
from .source import Prepared, prepare
from .tempdirs import temp_dir
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

Progress = Callable[[str, tuple[int, ...]], None]


def _no_progress(_tool: str, _positions: tuple[int, ...]) -> None:
    """Progress is not watched (a runner used directly)."""


def module_name(text: str) -> str:
    """The unique, content-derived module name of a source."""
    return "rk_" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True)
class _Owner:
    """A source a unit belongs to: the program itself (``line`` None) or code it runs at ``line``."""

    position: int
    line: int | None = None
    call: str = ""

    def place(self, found: Finding) -> Finding:
        """``found`` as a finding of the source: code run from text reports at the call's line."""
        if self.line is None:
            return found
        return replace(found, line=self.line, message=f"{found.message} (in the code {self.call} "
                                                      f"runs at line {self.line}, its line {found.line})")


@dataclass(frozen=True)
class _Notifier:
    """Tells ``progress`` which sources (positions) a tool turns to, given the units it names."""

    progress: Progress
    owners: dict[str, list[_Owner]]

    def __call__(self, tool: str, units: Sequence[Unit]) -> None:
        """Report that ``tool`` turns to ``units``."""
        self.progress(tool, tuple(sorted({o.position for u in units for o in self.owners[u.name]})))


@dataclass
class _Outcome:
    """One tool's result for one unit: findings, or why there are none."""

    findings: list[Finding] = field(default_factory=list)
    error: ToolError | None = None
    fault: Finding | None = None


@dataclass
class _Account:
    """Everything found for one source so far."""

    findings: list[Finding]
    errors: list[ToolError] = field(default_factory=list)
    faults: list[Finding] = field(default_factory=list)

    def add(self, owner: _Owner, outcome: _Outcome) -> None:
        """Count a tool's outcome for a unit of this source."""
        self.findings += [owner.place(f) for f in outcome.findings]
        self.errors += [outcome.error] if outcome.error else []
        self.faults += [outcome.fault] if outcome.fault else []

    def report(self) -> QualityReport:
        """The fault alone when the source defeated a tool, else every finding and error."""
        if self.faults:
            return QualityReport.from_findings(self.faults)
        return QualityReport.from_findings(self.findings, self.errors)


class ToolRunner:
    """Configured tools for one profile, reused across batches in this process."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._workdir = temp_dir("src-")
        self._tools: dict[str, Tool] = {}
        self._recursion_limit = sys.getrecursionlimit()

    def _tool(self, name: str) -> Tool:
        if name not in self._tools:
            self._tools[name] = TOOLS[name](self.profile)
        return self._tools[name]

    def warm(self) -> None:
        """Start every enabled tool now, so that no source's time pays for it (a tool that
        cannot start is reported with each source later)."""
        for name in self._enabled():
            with contextlib.suppress(Exception):
                self._tool(name)

    def _enabled(self) -> list[str]:
        return [name for name in TOOLS if self.profile.enabled(name)]

    def analyze(self, codes: Sequence[object], progress: Progress = _no_progress) -> list[QualityReport]:
        """Reports for ``codes``, in order; never raises on bad code."""
        prepared: list[Prepared] = []
        for position, code in enumerate(codes):
            progress(INPUT_FAULT_TOOL, (position,))
            prepared.append(prepare(code, self.profile))
        accounts = [_Account([*filter(None, [p.problem]), *p.findings]) for p in prepared]
        units, owners = self._units(prepared)
        notify = _Notifier(progress, owners)
        try:
            for tool_name in self._enabled() if units else []:
                for unit, outcome in self._run_tool(tool_name, units, notify):
                    for owner in owners[unit.name]:
                        accounts[owner.position].add(owner, outcome)
        finally:
            for unit in units:
                unit.path.unlink(missing_ok=True)
        return [account.report() for account in accounts]

    def _units(self, prepared: list[Prepared]) -> tuple[list[Unit], dict[str, list[_Owner]]]:
        """One unit (and file) per distinct text to analyse, and whom each unit's findings go to."""
        units: dict[str, Unit] = {}
        owners: dict[str, list[_Owner]] = {}
        for position, p in enumerate(prepared):
            for owner, text, tree in _parts(p, _Owner(position)):
                name = module_name(text)
                if name not in units:
                    units[name] = self._unit(name, text, tree)
                owners.setdefault(name, []).append(owner)
        return list(units.values()), owners

    def _unit(self, name: str, text: str, tree: ast.Module) -> Unit:
        unit = Unit(name, text, tree, Path(self._workdir.name) / f"{name}.py")
        unit.path.write_text(text, "utf-8")
        return unit

    def _run_tool(self, tool_name: str, batch: list[Unit],
                  notify: _Notifier) -> list[tuple[Unit, _Outcome]]:
        try:
            tool = self._tool(tool_name)
            notify(tool_name, batch)
            results = tool.run(batch, lambda units: notify(tool_name, units))
            return [(u, _Outcome(r)) for u, r in zip(batch, results, strict=True)]
        except Exception as exc:
            if tool_name not in self._tools:  # a tool that cannot start fails every source
                error = ToolError(tool_name, f"unavailable: {type(exc).__name__}: {exc}")
                return [(u, _Outcome(error=error)) for u in batch]
            if len(batch) > 1:
                return [row for unit in batch for row in self._run_tool(tool_name, [unit], notify)]
            self._tools.pop(tool_name, None)  # state may be broken; rebuild next time
            return [(batch[0], self._failure(tool_name, exc))]
        finally:
            sys.setrecursionlimit(self._recursion_limit)

    def _failure(self, tool_name: str, exc: Exception) -> _Outcome:
        """A tool's exception on one unit: an input fault if the source caused it, else an error."""
        exhausted = exhaustion_in(exc)
        if exhausted is not None:
            rule, message = exhausted
            return _Outcome(fault=input_fault(self.profile, rule, f"{tool_name} {message}"))
        return _Outcome(error=ToolError(tool_name, _reason(exc)))


def _parts(prepared: Prepared, owner: _Owner) -> Iterator[tuple[_Owner, str, ast.Module]]:
    """The program and the code it runs from text, each with the owner its findings go to."""
    if prepared.text is None or prepared.tree is None:
        return
    yield owner, prepared.text, prepared.tree
    for hidden in prepared.hidden:
        inner = owner if owner.line is not None else _Owner(owner.position, hidden.line, hidden.call)
        yield from _parts(hidden.code, inner)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    detail = text[0][:300] if text else ""
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
