"""APPS stdin programs, run as APPS's own harness runs them.

APPS's harness (hendrycks/apps ``eval/testing_util.py``, ``run_test``) runs a
stdin program as the body of a function ``code()`` after its own imports, and
swallows ``SystemExit`` (``call_method``).  :func:`apps_program` (trusted side,
text only) writes the file the sandbox runs; :func:`run` runs it in the
solution's process (:func:`.harness.run_program`).
"""

from __future__ import annotations

import ast
import contextlib
import fractions  # noqa: F401 - loaded once in the fork server, not in every run's APPS_PRELUDE
import importlib
import json
import linecache
import re
import symtable
import sys
import types
from typing import Any

from . import compile_plain

APPS_MARKER = "def _rewardkit_apps_program():  # a stdin program run as APPS's harness runs it"
_APPS_SOURCE = "SOURCE = "
APPS_PRELUDE = """import sys, time, itertools, collections, math, fractions, random, heapq
from itertools import accumulate, product, permutations, combinations
from collections import Counter, OrderedDict, deque, defaultdict, ChainMap
from functools import lru_cache
from math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2
from typing import List, Tuple
from heapq import *
stdin = sys.stdin
stdout = sys.stdout
"""
_STAR_OR_FUTURE = re.compile(r"^([ \t]*)from[ \t]+(?:__future__\b|[\w.]+[ \t]+import[ \t]*\*)")


def apps_program(source: str) -> str:
    """The file the sandbox runs for an APPS stdin program (built on the trusted side, text only).

    Its first part is the program's lines as the body of a never-called
    function, so that compiling the file (the worker's syntax check) reports
    the program's own syntax errors, and a top-level ``return`` is not one
    (star and ``__future__`` imports, legal only at module level, are left out
    of that copy; their lines keep their indentation).  Its last line holds
    the program itself, which :func:`.harness.run_program` runs with
    :func:`run`.  A syntax error is reported one line below where
    it is in the program.
    """
    body = "".join("\t" + (match.group(1) + "pass" if (match := _STAR_OR_FUTURE.match(line)) else line)
                   + "\n" for line in source.split("\n"))
    literal = json.dumps(source).replace("'", "\\u0027")  # no quote of either kind can end a string
    return f"{APPS_MARKER}\n{body}\tpass\n{_APPS_SOURCE}{literal}\n"


def program_source(text: str) -> str | None:
    """The program in a file :func:`apps_program` wrote, else None (an ordinary program)."""
    if not text.startswith(APPS_MARKER + "\n"):
        return None
    last = text.rstrip("\n").rpartition("\n")[2]
    if not last.startswith(_APPS_SOURCE):
        return None
    source = json.loads(last[len(_APPS_SOURCE):])
    return source if isinstance(source, str) else None


def run(source: str, path: str, namespace: dict[str, Any]) -> None:
    """Run a stdin program as the body of a function, after APPS's own imports.

    As in APPS: a top-level ``return`` ends the program, the names APPS's
    harness imports (``sys``, ``math``, ``gcd``, ``Counter``, ``heappush``,
    ``np`` when numpy is installed, ...) need no import, and ``SystemExit``
    ends the program with its output kept, whatever its code.  Unlike APPS
    (deliberate fixes, see :func:`_as_function`): the program's top-level
    names stay module globals (``global`` statements and functions that read
    them work), ``__name__`` is ``"__main__"``, star and ``__future__``
    imports are legal, and stdin is the real one.
    """
    exec(APPS_PRELUDE, namespace)  # nosec B102 - constant imports
    if re.search(r"\bnp\b", source):
        with contextlib.suppress(ImportError):
            exec("import numpy as np", namespace)  # nosec B102 - constant import
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)  # tracebacks show its lines
    namespace[_STAR_IMPORT] = _star_import
    exec(_as_function(source, path), namespace)  # nosec B102 - runs the solution, sandboxed
    with contextlib.suppress(SystemExit):
        namespace[_PROGRAM]()


_PROGRAM = "<module>"  # the function's name: its frames read as the program's own
_STAR_IMPORT = "<star import>"  # not an identifier: no program name can hide it


def _as_function(source: str, path: str) -> types.CodeType:
    """The program compiled as ``def <module>(): global <every module-level name>; <program>``."""
    tree = ast.parse(source, path)
    names = sorted(symbol.get_name() for symbol in symtable.symtable(source, path, "exec").get_symbols())
    body = _ModuleLevel().visit(tree).body
    future: list[ast.stmt] = []
    rest: list[ast.stmt] = []
    for node in body:  # __future__ imports stay at module level, before the function
        (future if isinstance(node, ast.ImportFrom) and node.module == "__future__" else rest).append(node)
    body = rest
    declared: list[ast.stmt] = [ast.Global(names=names)] if names else []
    function = ast.FunctionDef(name=_PROGRAM, args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                                  kw_defaults=[], defaults=[]),
                               body=declared + (body or [ast.Pass()]), decorator_list=[], lineno=1)
    module = ast.Module(body=[*future, function], type_ignores=[])
    return compile_plain(ast.fix_missing_locations(module), path)


class _ModuleLevel(ast.NodeTransformer):
    """Rewrites what a function body cannot hold, at module level only (not in defs or classes).

    A star import becomes a call that imports into the module's globals; an
    annotated assignment a plain one (a ``global`` name cannot be annotated);
    a ``yield`` or ``await`` stays the SyntaxError it is at module level.
    """

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        """A definition's body is left as it is (it is not module level)."""
        return node

    visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = visit_FunctionDef

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        """``from m import *`` as a call that imports into the program's globals."""
        if node.names[0].name != "*":
            return node
        call = ast.Call(func=ast.Name(id=_STAR_IMPORT, ctx=ast.Load()),
                        args=[ast.Constant(node.module or ""), ast.Constant(node.level)], keywords=[])
        return ast.copy_location(ast.Expr(value=call), node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        """``x: T = v`` as ``x = v``, and ``x: T`` as nothing."""
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)

    def visit_Yield(self, node: ast.AST) -> ast.AST:
        """The SyntaxError a module-level ``yield`` or ``await`` is."""
        raise SyntaxError(f"'{type(node).__name__.lower()}' outside function")

    visit_YieldFrom = visit_Await = visit_Yield


def _star_import(module: str, level: int) -> None:
    """``from module import *`` into the calling program's globals."""
    caller = sys._getframe(1).f_globals
    imported = importlib.import_module("." * level + module, caller.get("__package__") or None)
    public = getattr(imported, "__all__", None)
    if public is None:
        public = [name for name in vars(imported) if not name.startswith("_")]
    caller.update({name: getattr(imported, name) for name in public})
