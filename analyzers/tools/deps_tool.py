"""Imports of packages and modules listed in the dependency advisory table."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from ..advisories import advisory_table
from ..finding import Finding
from .base import PerUnitTool, Unit

_RULE = {"vulnerable": "vulnerable-import", "unsafe": "unsafe-import",
         "obsolete": "obsolete-import"}


def imported_modules(nodes: list[ast.AST]) -> list[tuple[str, int]]:
    """Absolute dotted module names imported, with their lines (``from a import b``: a, a.b)."""
    out: list[tuple[str, int]] = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.append((node.module, node.lineno))
            out += [(f"{node.module}.{a.name}", node.lineno) for a in node.names]
    return out


class DepsTool(PerUnitTool):
    """One finding per (advisory, import line)."""

    name = "rk-deps"

    def check(self, unit: Unit) -> Iterable[Finding | None]:
        """Match each imported module against the advisory table."""
        seen: set[tuple[str, int]] = set()
        for module, line in imported_modules(unit.nodes):
            for entry in advisory_table():
                name = entry["module"]
                hit = module == name or module.startswith(name + ".")
                if not hit or (name, line) in seen:
                    continue
                seen.add((name, line))
                ids = f" ({', '.join(entry['ids'])})" if entry["ids"] else ""
                yield self.emit(
                    _RULE[entry["kind"]],
                    f"import of {name} [{entry['package']}]: {entry['summary']}{ids}",
                    line, entry["cwe"], entry["severity"],
                )
