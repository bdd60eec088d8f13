"""The default-severity table, ISO 5055 CWE ids, and the dependency advisory table."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from bandit.blacklists import imports as bandit_imports

from rewardkit.analyzers import advisories
from rewardkit.analyzers.catalog import RULES, iso5055_cwes, render_markdown


def test_shipped_severity_table_matches_code() -> None:
    shipped = resources.files("rewardkit.analyzers").joinpath("data/severity_table.md")
    assert shipped.read_text("utf-8") == render_markdown()


def test_own_checks_use_iso5055_cwes_of_their_characteristic() -> None:
    iso = iso5055_cwes()
    assert sum(map(len, iso.values())) > 0 and len(set().union(*iso.values())) == 138
    for rule in RULES:
        if rule.tool in ("rk-perf", "rk-reliability") and rule.cwe is not None:
            assert rule.cwe in set().union(*iso.values()), rule


def test_advisories_do_not_duplicate_bandit_import_blacklist() -> None:
    blacklisted = {
        q for item in bandit_imports.gen_blacklist()["Import"] for q in item["qualnames"]
    }
    for entry in advisories.advisory_table():
        assert not any(
            q == entry["module"] or q.startswith(entry["module"] + ".") for q in blacklisted
        ), entry


def test_refresh_from_pip_audit_and_osv(tmp_path: Path) -> None:
    audit = {"dependencies": [
        {"name": "Jinja2", "version": "2.4.1", "vulns": [
            {"id": "PYSEC-2019-217", "fix_versions": ["2.10.1"], "aliases": ["CVE-2019-10906"]}]},
        {"name": "six", "version": "1.16.0", "vulns": []},
    ]}
    entries = advisories.from_pip_audit(audit)
    assert [(e["module"], e["ids"]) for e in entries] == [
        ("jinja2", ["CVE-2019-10906", "PYSEC-2019-217"])
    ]
    osv = {"id": "GHSA-xxxx", "aliases": ["CVE-2099-1"], "summary": "XSS",
           "affected": [{"package": {"ecosystem": "PyPI", "name": "some-pkg"}}],
           "database_specific": {"severity": "MODERATE", "cwe_ids": ["CWE-1004", "CWE-79"]}}
    (osv_entry,) = advisories.from_osv(osv)
    assert (osv_entry["module"], osv_entry["severity"], osv_entry["cwe"]) == (
        "some_pkg", "medium", 79)
    src, out = tmp_path / "audit.json", tmp_path / "table.json"
    src.write_text(json.dumps(audit))
    assert advisories.main([str(src), "-o", str(out)]) == 0
    modules = [e["module"] for e in json.loads(out.read_text())["advisories"]]
    assert "jinja2" in modules and "ecdsa" in modules and modules == sorted(modules)
