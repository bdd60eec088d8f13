"""Pylint in-process, one persistent linter per process (start-up paid once).

Only the structure and style/documentation messages of the catalog (plus the
profile's ``[pylint] enable``) are on, so cross-module checks such as
duplicate-code never run and sources in one batch cannot affect each other.
Progress is reported module by module (pylint names each one to its reporter
as it builds its tree and as it checks it).  Pylint turns an exception in a
module into a fatal message; the linter here keeps the exception, so that the
tool runner can tell a source that defeated pylint from a pylint fault.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import astroid
from astroid import nodes
from astroid.manager import AstroidManager
from pylint.lint import PyLinter, Run
from pylint.reporters import CollectingReporter

from ..catalog import RULES
from ..finding import Finding
from ..profile import Profile
from ..tempdirs import temp_dir
from .base import Progress, Tool, Unit

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


class _OutsideStandardLibrary(set[str]):
    """astroid's ``module_denylist``, which also holds every module outside the standard library."""

    def __contains__(self, name: object) -> bool:
        return super().__contains__(name) or (
            isinstance(name, str) and name.split(".")[0] not in sys.stdlib_module_names)


def _standard_library_only() -> None:
    """Let astroid build no module but the standard library's (and the sources it is given).

    The messages enabled here read a module's own structure, never what an
    import holds; yet astroid infers through imports as it builds a tree (an
    attribute assigned on an imported object is enough), and a package the
    size of transformers took it 69 s, so a source that merely used one
    scored 0 for an analysis timeout.  A denied import is Uninferable, and
    the findings no longer depend on what is installed beside the analyzers.
    """
    denylist = _OutsideStandardLibrary(AstroidManager.brain["module_denylist"])
    AstroidManager.brain["module_denylist"] = denylist  # what every AstroidManager() reads
    astroid.MANAGER.module_denylist = denylist


class _Linter(PyLinter):
    """A linter that keeps, per module, the exception behind a fatal message."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.crashes: dict[str, Exception] = {}

    def get_ast(self, filepath: str, modname: str, data: str | None = None) -> nodes.Module | None:
        try:
            return super().get_ast(filepath, modname, data)
        except Exception as exc:
            self.crashes[modname] = exc
            raise

    def check_astroid_module(self, ast_node: nodes.Module, *args: Any, **kwargs: Any) -> bool | None:
        try:
            return super().check_astroid_module(ast_node, *args, **kwargs)
        except Exception as exc:
            self.crashes[ast_node.name] = exc
            raise


class _Run(Run):
    LinterClass = _Linter


class _Reporter(CollectingReporter):
    """Collects the messages and names each module pylint turns to."""

    def __init__(self, on_module: Callable[[str], None]) -> None:
        super().__init__()
        self._on_module = on_module

    def on_set_current_module(self, module: str, filepath: str | None) -> None:
        super().on_set_current_module(module, filepath)
        self._on_module(module)


class PylintTool(Tool):
    """Structure (R09xx, C0302, R1702) and naming/docstring (C0103, C011x) messages."""

    name = "pylint"

    def __init__(self, profile: Profile) -> None:
        super().__init__(profile)
        _standard_library_only()
        self._dir = temp_dir("pylint-")
        root = Path(self._dir.name)
        (root / "empty.cfg").write_text("")
        (root / "warmup.py").write_text('"""Warm-up module."""\n')
        run = _Run(
            [*_arguments(profile, root / "empty.cfg"), str(root / "warmup.py")],
            reporter=CollectingReporter(), exit=False,
        )
        self._linter: _Linter = run.linter  # type: ignore[assignment]

    def run(self, units: Sequence[Unit], progress: Progress) -> list[list[Finding]]:
        """One pylint check of the batch on the warm linter; a fatal message raises, from its cause."""
        index = {u.name: i for i, u in enumerate(units)}

        def on_module(module: str) -> None:
            if module in index:
                progress([units[index[module]]])

        reporter = _Reporter(on_module)
        self._linter.set_reporter(reporter)
        self._linter.crashes = {}
        try:
            self._linter.check([str(u.path) for u in units])
        finally:
            for unit in units:
                astroid.MANAGER.astroid_cache.pop(unit.name, None)
        out: list[list[Finding]] = [[] for _ in units]
        for msg in reporter.messages:
            if msg.msg_id.startswith("F"):
                raise RuntimeError(f"{msg.symbol}: {msg.msg}") from self._linter.crashes.get(msg.module)
            found = self.emit(msg.msg_id, f"{msg.symbol}: {msg.msg}", msg.line)
            if found is not None:
                out[index[msg.module]].append(found)
        return out
