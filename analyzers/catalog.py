"""Default severity, characteristic and CWE of every rule: the one table of defaults.

A profile may change a severity or switch a rule off (see :mod:`.profile`); the
CWE and characteristic of a rule are fixed here. CWE ids are ISO/IEC 5055 ids
where one fits (``data/iso5055_cwe.json``); a few rules carry the exact non-ISO
CWE instead, and rules with no fitting weakness carry none. Bandit's rows are
dynamic: its own severity and the CWE bandit reports for each issue.

``render_markdown()`` prints the table for the README; ``data/severity_table.md``
is that output (a test keeps the two equal).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from .finding import Characteristic, Severity


@dataclass(frozen=True, slots=True)
class Rule:
    """Defaults of one rule. ``rule == "*"`` is the tool's fallback row."""

    tool: str
    rule: str
    severity: Severity
    characteristic: Characteristic
    cwe: int | None
    summary: str


def _rows(
    tool: str, characteristic: Characteristic, *rows: tuple[str, Severity, int | None, str]
) -> list[Rule]:
    return [Rule(tool, rule, sev, characteristic, cwe, text) for rule, sev, cwe, text in rows]


RULES: tuple[Rule, ...] = tuple(
    _rows(
        "rk-input",
        "reliability",
        ("invalid-input", "critical", None, "input is not str or bytes (e.g. None)"),
        ("decode-error", "critical", None, "bytes that do not decode as Python source"),
        ("syntax-error", "critical", None, "source does not parse (NUL bytes included)"),
        ("analysis-timeout", "critical", None, "a tool overran `tool_timeout_s` on the source"),
        ("analysis-recursion", "critical", None, "a tool exceeded Python's recursion limit on it"),
        ("analysis-memory", "critical", None, "a tool ran out of its worker's memory on it"),
        ("analysis-crash", "critical", None, "the source crashed the analysis process twice"),
    )
    + _rows(
        "rk-input",
        "maintainability",
        ("source-too-large", "high", 1080, "over `max_source_bytes`; other tools skipped"),
        ("too-deep", "critical", 1124, "nested deeper than `max_ast_depth` (or too deep to parse)"),
    )
    + _rows(
        "rk-input",
        "security",
        ("hidden-code", "critical", 95, "code run in a way that cannot be read statically: exec/eval "
         "of computed text, a dynamic way to them (`getattr(builtins, 'exec')`, `__import__`...), "
         "pickle loading, a debugger, profiler, timer or loader running text (`pdb`, `trace`, "
         "`timeit`, `importlib`...); scores 0, the other findings are still reported"),
    )
    + _rows(
        "rk-dynamic",
        "security",
        ("dynamic-code", "high", 95, "exec/eval (or `timeit`, `cProfile.run`, `pdb.run`...) of code "
         "written as data (that code is analysed too, its findings reported at this line)"),
    )
    + _rows(
        "radon",
        "maintainability",
        ("CC-C", "low", 1121, "block cyclomatic complexity 11-20 (grade C)"),
        ("CC-D", "medium", 1121, "complexity 21-30 (grade D)"),
        ("CC-E", "high", 1121, "complexity 31-40 (grade E)"),
        ("CC-F", "critical", 1121, "complexity over 40 (grade F)"),
        ("MI-B", "low", None, "maintainability index 10-19 (grade B)"),
        ("MI-C", "medium", None, "maintainability index under 10 (grade C)"),
    )
    + _rows(
        "vulture",
        "maintainability",
        ("unused-import", "low", 561, "unused import (confidence 90)"),
        ("unused-variable", "info", 561, "unused variable or argument"),
        ("unused-function", "info", 561, "unused function (confidence 60)"),
        ("unused-class", "info", 561, "unused class (confidence 60)"),
        ("unused-method", "info", 561, "unused method (confidence 60)"),
        ("unused-attribute", "info", 561, "unused attribute (confidence 60)"),
        ("unused-property", "info", 561, "unused property (confidence 60)"),
        ("unreachable-code", "medium", 561, "code after return/raise/break/continue"),
    )
    + _rows(
        "pylint",
        "maintainability",
        ("C0103", "info", 1099, "invalid-name: naming convention"),
        ("C0114", "info", None, "missing-module-docstring"),
        ("C0115", "info", None, "missing-class-docstring"),
        ("C0116", "info", None, "missing-function-docstring"),
        ("C0302", "medium", 1080, "too-many-lines (module over `max_module_lines`)"),
        ("R0902", "low", None, "too-many-instance-attributes"),
        ("R0911", "low", None, "too-many-return-statements"),
        ("R0912", "low", None, "too-many-branches"),
        ("R0913", "low", 1064, "too-many-arguments"),
        ("R0914", "info", None, "too-many-locals"),
        ("R0915", "low", None, "too-many-statements"),
        ("R1702", "low", 1124, "too-many-nested-blocks"),
        ("*", "low", None, "any other message enabled in the profile"),
    )
    + _rows(
        "bandit",
        "security",
        ("*", "medium", None, "bandit's severity (HIGH+HIGH confidence: critical); bandit's CWE"),
    )
    + _rows(
        "rk-deps",
        "security",
        ("vulnerable-import", "high", None, "package with a known advisory (severity, CWE from table)"),
        ("unsafe-import", "medium", None, "package unsafe by design (severity, CWE from table)"),
        ("obsolete-import", "low", 477, "stdlib module deprecated or removed (PEP 594 and others)"),
    )
    + _rows(
        "rk-perf",
        "performance",
        ("string-concat-in-loop", "low", 1046, "`s += '...'` on a str inside a loop"),
        ("io-in-loop", "medium", 1050, "I/O call (open, requests, subprocess...) or "
         "`f.write()`-style call on an opened file or socket, inside a loop"),
        ("expensive-call-in-loop", "low", 1050, "re.compile, deepcopy and the like in a loop"),
        ("growing-copy-in-loop", "medium", 1050, "`xs = xs + [x]`, `xs.insert(0, x)` in a loop"),
        ("large-literal", "low", 1043, "literal over `max_literal_elements` elements"),
        ("deeply-nested-literal", "low", 1043, "literal nested over `max_literal_depth`"),
        ("too-many-class-attributes", "low", 1043, "class body over `max_class_attributes`"),
        ("linear-search-in-loop", "medium", 1067, "`x in some_list`, `some_list.index(x)` or a "
         "for/if/break search of a list, in a loop"),
    )
    + _rows(
        "rk-reliability",
        "reliability",
        ("bare-except", "medium", 703, "`except:` catches everything, SystemExit included"),
        ("broad-except", "low", 703, "`except Exception` that does not re-raise"),
        ("empty-except", "medium", 390, "handler that only passes"),
        ("resource-leak", "medium", 772, "open()/socket/connect not in `with` and never closed"),
        ("lock-not-released", "high", 667, "`acquire()` with no `release()` in the function"),
        ("lock-order-inversion", "high", 833, "two locks taken in both orders in a module"),
        ("infinite-loop", "high", 835, "`while True` with no reachable break/return/raise"),
        ("loop-condition-unchanged", "high", 835, "no variable of the while condition changes"),
        ("iterable-modified-in-loop", "medium", 1095, "list mutated while a for loop walks it"),
    )
    + _rows(
        "rk-reliability",
        "maintainability",
        ("loop-variable-modified", "low", 1095, "for-loop variable reassigned in the body"),
    )
    + _rows(
        "mypy",
        "reliability",
        ("arg-type", "medium", 704, "argument of an incompatible type"),
        ("return-value", "medium", 704, "return value of an incompatible type"),
        ("assignment", "medium", 704, "assignment of an incompatible type"),
        ("operator", "medium", 704, "operand types not supported"),
        ("index", "medium", 704, "invalid index type"),
        ("no-untyped-def", "info", None, "missing annotations (`disallow_untyped_defs`)"),
        ("*", "medium", None, "any other mypy error code"),
    )
)

_BY_KEY: dict[tuple[str, str], Rule] = {(r.tool, r.rule): r for r in RULES}


def lookup(tool: str, rule: str) -> Rule:
    """The defaults of ``tool:rule``, else the tool's ``*`` row."""
    found = _BY_KEY.get((tool, rule)) or _BY_KEY.get((tool, "*"))
    if found is None:
        raise KeyError(f"no catalog row for {tool}:{rule}")
    return found


@cache
def iso5055_cwes() -> dict[str, frozenset[int]]:
    """ISO/IEC 5055 CWE ids (parents and contributing) per characteristic."""
    text = resources.files(__package__).joinpath("data/iso5055_cwe.json").read_text("utf-8")
    return {k: frozenset(v) for k, v in json.loads(text)["cwe"].items()}


def _cwe_cell(rule: Rule) -> str:
    if rule.tool == "bandit":
        return "bandit's own"
    if rule.cwe is None:
        return "none"
    iso = any(rule.cwe in ids for ids in iso5055_cwes().values())
    return f"CWE-{rule.cwe}" + ("" if iso else " (not ISO 5055)")


def render_markdown() -> str:
    """The default-severity table as Markdown (what ``data/severity_table.md`` holds)."""
    lines = [
        "| tool | rule | severity | characteristic | CWE | what |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in RULES:
        lines.append(
            f"| {r.tool} | {r.rule} | {r.severity} | {r.characteristic} "
            f"| {_cwe_cell(r)} | {r.summary} |"
        )
    return "\n".join(lines) + "\n"
