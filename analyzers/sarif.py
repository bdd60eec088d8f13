"""SARIF 2.1.0 output: rules with CWE relationships, results with levels and CWE taxa."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .catalog import lookup
from .finding import Finding, Severity
from .report import QualityReport

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS: dict[Severity, str] = {
    "info": "note", "low": "note", "medium": "warning", "high": "error", "critical": "error",
}
#: GitHub code scanning reads this property (0-10) for security results.
SECURITY_SEVERITY: dict[Severity, str] = {
    "info": "1.0", "low": "3.0", "medium": "5.5", "high": "8.0", "critical": "9.5",
}
_CWE = {"name": "CWE", "index": 0}


def _rule_id(f: Finding) -> str:
    return f"{f.tool}/{f.rule}"


def _rule(f: Finding) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "id": _rule_id(f),
        "name": f.rule,
        "shortDescription": {"text": lookup(f.tool, f.rule).summary},
        "defaultConfiguration": {"level": LEVELS[f.severity]},
        "properties": {"tool": f.tool, "characteristic": f.characteristic},
    }
    if f.cwe is not None:
        rule["relationships"] = [
            {"target": {"id": str(f.cwe), "toolComponent": _CWE}, "kinds": ["superset"]}
        ]
    return rule


def _result(f: Finding, uri: str, rule_index: int) -> dict[str, Any]:
    props: dict[str, Any] = {"severity": f.severity, "characteristic": f.characteristic}
    if f.characteristic == "security":
        props["security-severity"] = SECURITY_SEVERITY[f.severity]
    result: dict[str, Any] = {
        "ruleId": _rule_id(f),
        "ruleIndex": rule_index,
        "level": LEVELS[f.severity],
        "message": {"text": f.message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri}, "region": {"startLine": f.line},
        }}],
        "properties": props,
    }
    if f.cwe is not None:
        result["taxa"] = [{"id": str(f.cwe), "toolComponent": _CWE}]
    return result


def to_sarif(files: Sequence[tuple[str, QualityReport]]) -> dict[str, Any]:
    """One SARIF run for reports of ``(uri, report)`` pairs."""
    rules: dict[str, int] = {}
    rule_objs: list[dict[str, Any]] = []
    results, notes = [], []
    cwes: set[int] = set()
    for uri, report in files:
        for f in report.findings:
            if _rule_id(f) not in rules:
                rules[_rule_id(f)] = len(rule_objs)
                rule_objs.append(_rule(f))
            results.append(_result(f, uri, rules[_rule_id(f)]))
            if f.cwe is not None:
                cwes.add(f.cwe)
        notes += [
            {"level": "error", "message": {"text": f"{e.tool} failed on {uri}: {e.reason}"}}
            for e in report.errors
        ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "rewardkit-analyzers",
                "informationUri": "https://cwe.mitre.org/data/definitions/1305.html",
                "rules": rule_objs,
                "supportedTaxonomies": [{"name": "CWE", "index": 0}],
            }},
            "taxonomies": [{
                "name": "CWE",
                "organization": "MITRE",
                "shortDescription": {"text": "Common Weakness Enumeration"},
                "taxa": [{"id": str(c), "name": f"CWE-{c}"} for c in sorted(cwes)],
            }],
            "invocations": [{
                "executionSuccessful": not notes,
                "toolExecutionNotifications": notes,
            }],
            "results": results,
        }],
    }
