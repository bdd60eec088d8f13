"""CISQ / ISO 5055-style static quality analysis of Python code.

``analyze(code)`` returns a :class:`QualityReport` whose score is
``1 / (1 + W)``, W the severity-weighted count of findings, or 0
when the source defeats the analysis (an ``rk-input`` finding: it does not
parse, is too deep, hides its code in exec/eval, makes a tool overrun its time
budget...).  ``analyze_many(codes)`` does the same for a batch, far cheaper per
source.  Tools: pylint, radon, vulture, bandit, mypy and own AST checks, run in
worker processes that are killed when one source overruns (:mod:`.pool`);
defaults are in :mod:`.catalog`, settings in profiles (:mod:`.profile`).
"""

from .batch import analyze, analyze_many, clear_cache, shutdown_pool
from .finding import CHARACTERISTICS, SEVERITIES, WEIGHTS, Finding, ToolError
from .profile import Profile, load_profile
from .report import QualityReport

__all__ = [
    "CHARACTERISTICS",
    "SEVERITIES",
    "WEIGHTS",
    "Finding",
    "Profile",
    "QualityReport",
    "ToolError",
    "analyze",
    "analyze_many",
    "clear_cache",
    "load_profile",
    "shutdown_pool",
]
