"""The calls a HumanEval-style check will make first, read from its source before it runs.

Most checks open with straight-line asserts such as
``assert candidate([1, 2], 3) == [4]``: the calls they make, and the order they
make them in, do not depend on anything the solution returns until one of them
fails.  :func:`literal_calls` finds that opening run of calls, so the judge can
send them to the solution in one batch (:meth:`.judge.Candidate.prefetch`) and
hand the check each answer when it makes that same call, instead of one round
trip per call.  The batch goes with the job's begin request, for the worker to
make once the solution has loaded; when the run is the whole check
(:func:`opening_calls`), the worker ends the job in the same reply, and the
job takes one round trip in all.

When every assert passes, the solution receives exactly the calls, in exactly
the order, that it would have received one at a time, so a solution that keeps
state between calls answers the same.  When one fails, the check stops there as
before (the verdict and its message are the same); the solution has meanwhile
answered the rest of the batch, which costs time but is never looked at.

Only what is sure is taken: an ``assert`` (with no ``and``/``or``, conditional
expression, comprehension or chained comparison in its test) whose candidate
calls have literal arguments and no keywords; the run stops at the first other
statement.  A call whose arguments differ from the next prefetched one simply
goes live (:meth:`.judge.Candidate.answer`).
"""

from __future__ import annotations

import ast
import functools
import sys
from typing import Any, NamedTuple

from .suite import SUITE_CACHE

# Nodes whose children Python evaluates every time, in the order ast lists them.
_IN_ORDER = (ast.Compare, ast.BinOp, ast.UnaryOp, ast.Call, ast.Constant, ast.Name, ast.Attribute,
             ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.keyword, ast.expr_context,
             ast.operator, ast.unaryop, ast.cmpop)


class Opening(NamedTuple):
    """The calls a check makes first (:func:`literal_calls`), and whether they are all it makes."""

    calls: tuple[tuple[Any, ...], ...]
    whole: bool  # when every assert passes, the check calls the candidate for nothing else


@functools.lru_cache(maxsize=SUITE_CACHE)
def opening_calls(check: str) -> Opening:
    """The positional arguments of each call of ``candidate`` that ``check(candidate)`` makes
    before anything it could skip or repeat, in order, and whether that run of calls is the
    whole check (it reaches the end of the check's body); no calls when none is sure.

    ``check`` is a suite's check source (it defines ``check`` once, at top level).
    """
    if sys.flags.optimize:  # asserts are compiled out: the check makes none of these calls
        return Opening((), False)
    try:
        function = _check_function(ast.parse(check))
        if function is None:
            return Opening((), False)
        calls, whole = _opening_calls(function)
        return Opening(tuple(calls), whole)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return Opening((), False)


def literal_calls(check: str) -> tuple[tuple[Any, ...], ...]:
    """The calls of :func:`opening_calls`."""
    return opening_calls(check).calls


def _check_function(module: ast.Module) -> ast.FunctionDef | None:
    """The top-level ``def check`` when it is the module's only binding of that name."""
    bindings = [node for node in ast.walk(module) if _binds_check(node)]
    if len(bindings) != 1 or bindings[0] not in module.body:
        return None
    function = bindings[0]
    if not isinstance(function, ast.FunctionDef) or function.decorator_list:
        return None
    return function


def _binds_check(node: ast.AST) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == "check"
    if isinstance(node, ast.Name):
        return node.id == "check" and not isinstance(node.ctx, ast.Load)
    if isinstance(node, ast.alias):
        return (node.asname or node.name) == "check" or node.name == "*"
    return isinstance(node, (ast.Global, ast.Nonlocal)) and "check" in node.names


def _opening_calls(function: ast.FunctionDef) -> tuple[list[tuple[Any, ...]], bool]:
    positional = [*function.args.posonlyargs, *function.args.args]
    if not positional:
        return [], False
    name = positional[0].arg
    calls: list[tuple[Any, ...]] = []
    for statement in function.body:
        if isinstance(statement, ast.Pass) or (isinstance(statement, ast.Expr)
                                               and isinstance(statement.value, ast.Constant)):
            continue
        if not isinstance(statement, ast.Assert):
            return calls, False
        found = _calls_in(statement.test, name)
        if found is None:
            return calls, False
        calls.extend(found)
        if statement.msg is not None and _mentions(statement.msg, name):
            return calls, False  # the message's calls are made only when the assert fails
    return calls, True


def _calls_in(test: ast.expr, name: str) -> list[tuple[Any, ...]] | None:
    """Each candidate call's arguments, in the order Python makes the calls; None if any call
    is conditional, has other than literal positional arguments, or the candidate is used
    other than by calling it."""
    calls: list[tuple[Any, ...]] = []
    todo: list[ast.AST] = [test]
    while todo:
        node = todo.pop()
        if not _always_evaluated(node, name):
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            args = _literal_args(node)
            if args is None:
                return None
            calls.append(args)
        else:
            todo.extend(reversed(list(ast.iter_child_nodes(node))))
    return calls


def _always_evaluated(node: ast.AST, name: str) -> bool:
    """Whether ``node`` evaluates each of its parts once, in ast's order, and is not the
    candidate itself (passed on, or called with it in an argument)."""
    if not isinstance(node, _IN_ORDER) or (isinstance(node, ast.Compare) and len(node.ops) > 1):
        return False  # a chained comparison skips its tail
    if isinstance(node, ast.Dict) and any(key is None or _mentions(key, name) for key in node.keys):
        return False  # a dict display evaluates each key just before its value
    return not (isinstance(node, ast.Name) and node.id == name)


def _literal_args(call: ast.Call) -> tuple[Any, ...] | None:
    """The call's arguments, when they are all positional literals."""
    if call.keywords:
        return None
    try:
        return tuple(ast.literal_eval(arg) for arg in call.args)
    except (ValueError, TypeError):  # a name, an expression, a starred list; {[1]: 2} (unhashable)
        return None


def _mentions(node: ast.AST, name: str) -> bool:
    return any(isinstance(child, ast.Name) and child.id == name for child in ast.walk(node))
