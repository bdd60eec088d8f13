"""The dependency advisory table (``data/advisories.json``) and its refresh.

Each entry names an importable module, its package, a kind (``vulnerable``:
known advisories; ``unsafe``: unsafe by design; ``obsolete``: deprecated or
removed stdlib module), ids, severity and CWE. Modules that bandit's import
blacklist already reports (pickle, telnetlib, Crypto.*...) are left out.

Refresh where a network is available::

    pip-audit -f json > audit.json      # or OSV records: a JSON list or one record
    python -m rewardkit.analyzers.advisories audit.json [-o analyzers/data/advisories.json]

A pip-audit report describes the environment the generated code will run in:
every audited package with a vulnerability becomes a ``vulnerable`` entry.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from .catalog import iso5055_cwes

Entry = dict[str, Any]
_GHSA_SEVERITY = {"LOW": "low", "MODERATE": "medium", "MEDIUM": "medium", "HIGH": "high",
                  "CRITICAL": "critical"}


def _table_text() -> str:
    return resources.files(__package__).joinpath("data/advisories.json").read_text("utf-8")


@cache
def advisory_table() -> tuple[Entry, ...]:
    """The shipped table, entries sorted by module."""
    entries = json.loads(_table_text())["advisories"]
    return tuple(sorted(entries, key=lambda e: e["module"]))


def import_names(package: str) -> list[str]:
    """Top-level import names of a distribution (installed metadata, else its name)."""
    wanted = re.sub(r"[-_.]+", "-", package).lower()
    found = sorted(
        module for module, dists in metadata.packages_distributions().items()
        if any(re.sub(r"[-_.]+", "-", d).lower() == wanted for d in dists)
    )
    return found or [re.sub(r"[-.]+", "_", package).lower()]


def _pick_cwe(ids: Sequence[str]) -> int | None:
    numbers = [int(m.group(1)) for i in ids if (m := re.match(r"CWE-(\d+)$", i))]
    iso = set().union(*iso5055_cwes().values())
    return next((n for n in numbers if n in iso), numbers[0] if numbers else None)


def from_pip_audit(report: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[Entry]:
    """Entries for every vulnerable dependency of a ``pip-audit -f json`` report."""
    deps = report["dependencies"] if isinstance(report, Mapping) else report
    entries = []
    for dep in deps:
        vulns = dep.get("vulns") or []
        if not vulns:
            continue
        ids = sorted({v["id"] for v in vulns} | {a for v in vulns for a in v.get("aliases", [])})
        fixes = sorted({f for v in vulns for f in v.get("fix_versions", [])})
        fixed = f"; fixed in {', '.join(fixes)}" if fixes else ""
        summary = f"{dep['name']} {dep.get('version', '?')}: {len(vulns)} known vulnerabilities{fixed}"
        entries += [
            {"module": m, "package": dep["name"], "kind": "vulnerable", "ids": ids,
             "severity": "high", "cwe": None, "summary": summary}
            for m in import_names(dep["name"])
        ]
    return entries


def from_osv(records: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[Entry]:
    """Entries from OSV records (PyPI ecosystem) with GitHub's severity and CWE ids."""
    items = [records] if isinstance(records, Mapping) else list(records)
    entries = []
    for rec in items:
        extra = rec.get("database_specific") or {}
        severity = _GHSA_SEVERITY.get(str(extra.get("severity", "")).upper(), "high")
        ids = sorted({rec["id"], *rec.get("aliases", [])})
        for affected in rec.get("affected", []):
            pkg = affected.get("package", {})
            if pkg.get("ecosystem") != "PyPI":
                continue
            entries += [
                {"module": m, "package": pkg["name"], "kind": "vulnerable", "ids": ids,
                 "severity": severity, "cwe": _pick_cwe(extra.get("cwe_ids", [])),
                 "summary": rec.get("summary") or rec.get("details", "")[:200]}
                for m in import_names(pkg["name"])
            ]
    return entries


def merge(base: Sequence[Entry], new: Sequence[Entry]) -> list[Entry]:
    """New entries replace base entries of the same module."""
    by_module = {e["module"]: e for e in base}
    by_module.update({e["module"]: e for e in new})
    return sorted(by_module.values(), key=lambda e: e["module"])


def main(argv: Sequence[str] | None = None) -> int:
    """Merge a pip-audit report or OSV records into an advisory table file."""
    parser = argparse.ArgumentParser(prog="python -m rewardkit.analyzers.advisories")
    parser.add_argument("source", type=Path, help="pip-audit JSON report or OSV JSON")
    parser.add_argument("-o", "--output", type=Path, help="table to write (default: stdout)")
    args = parser.parse_args(argv)
    data = json.loads(args.source.read_text("utf-8"))
    is_audit = (isinstance(data, Mapping) and "dependencies" in data) or (
        isinstance(data, list) and data and "vulns" in data[0]
    )
    new = from_pip_audit(data) if is_audit else from_osv(data)
    table = {"source": json.loads(_table_text())["source"],
             "advisories": merge(advisory_table(), new)}
    text = json.dumps(table, indent=1) + "\n"
    if args.output:
        args.output.write_text(text, "utf-8")
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
