"""Radon: cyclomatic complexity per block and maintainability index per module.

Grades follow radon's ranks (xenon's thresholds): a block graded worse than
``cc_max_grade`` is a finding ``CC-<grade>``; a module whose maintainability
index grades below ``mi_min_grade`` is ``MI-<grade>``. The index is radon's
``mi_visit(code, multi=True)``, computed from the already-parsed tree; radon's
raw line counts split lines with ``str.splitlines``, so they get
:func:`..normalize.splitlines_safe` text (a form feed in a string breaks them).
"""

from __future__ import annotations

from collections.abc import Iterable

from radon.complexity import add_inner_blocks, cc_rank
from radon.metrics import h_visit_ast, mi_compute, mi_rank
from radon.raw import analyze as raw_metrics
from radon.visitors import ComplexityVisitor

from ..finding import Finding
from ..normalize import splitlines_safe
from .base import PerUnitTool, Unit

_CC_GRADES = "ABCDEF"
_MI_GRADES = "ABC"


def maintainability_index(unit: Unit, complexity: int) -> float:
    """Radon's maintainability index, multi-line strings counted as comments."""
    raw = raw_metrics(splitlines_safe(unit.text))
    comments = (raw.comments + raw.multi) / raw.sloc * 100 if raw.sloc else 0
    return float(mi_compute(h_visit_ast(unit.tree).total.volume, complexity, raw.lloc, comments))


class RadonTool(PerUnitTool):
    """Complexity (``CC-C``..``CC-F``) and maintainability index (``MI-B``, ``MI-C``)."""

    name = "radon"

    def check(self, unit: Unit) -> Iterable[Finding | None]:
        """Blocks above the profile's complexity grade, and the module's maintainability grade."""
        visitor = ComplexityVisitor.from_ast(unit.tree)
        worst_cc = _CC_GRADES.index(self.profile.threshold("cc_max_grade"))
        for block in add_inner_blocks(visitor.blocks):
            if block.letter == "C":  # a class's figure averages its methods, seen anyway
                continue
            grade = cc_rank(block.complexity)
            if _CC_GRADES.index(grade) > worst_cc:
                yield self.emit(
                    f"CC-{grade}",
                    f"{block.fullname} has cyclomatic complexity {block.complexity} "
                    f"(grade {grade})",
                    block.lineno,
                )
        worst_mi = _MI_GRADES.index(self.profile.threshold("mi_min_grade"))
        index = maintainability_index(unit, visitor.total_complexity)
        grade = mi_rank(index)
        if _MI_GRADES.index(grade) > worst_mi:
            yield self.emit(
                f"MI-{grade}", f"maintainability index {index:.1f} (grade {grade})", 1
            )
