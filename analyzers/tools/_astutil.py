"""AST helpers shared by the own checks: import aliases, bound names, dotted names, scopes, loops."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
ScopeNode = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
LOOPS = (ast.For, ast.AsyncFor, ast.While)
NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_NAMED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler, ast.MatchAs,
          ast.MatchStar)


def import_aliases(nodes: Iterable[ast.AST]) -> dict[str, str]:
    """Local name -> dotted origin for every import among ``nodes``."""
    aliases: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.Import):
            for item in node.names:
                local = item.asname or item.name.split(".")[0]
                aliases[local] = item.name if item.asname else local
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for item in node.names:
                aliases[item.asname or item.name] = f"{node.module}.{item.name}"
    return aliases


def bound_names(node: ast.AST) -> list[str]:
    """The names ``node`` binds: assignment targets, parameters, definitions, imports, globals."""
    if isinstance(node, ast.Name):
        return [node.id] if isinstance(node.ctx, (ast.Store, ast.Del)) else []
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    if isinstance(node, (ast.Global, ast.Nonlocal)):
        return list(node.names)
    name = getattr(node, "name", None)
    return [name] if isinstance(node, _NAMED) and isinstance(name, str) else []


def dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """``a.b.c`` of a Name/Attribute chain, its root resolved through imports."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(aliases.get(node.id, node.id))
    return ".".join(reversed(parts))


def root_name(node: ast.expr) -> str | None:
    """The Name at the root of ``a.b[c].d``."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under ``node``, not descending into nested functions or classes."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, NESTED_SCOPES):
            yield from walk_scope(child)


def walk_body(stmts: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of a statement list, not descending into nested scopes."""
    for stmt in stmts:
        yield stmt
        if not isinstance(stmt, NESTED_SCOPES):
            yield from walk_scope(stmt)


def scopes(tree: ast.Module, nodes: Iterable[ast.AST]) -> Iterator[ScopeNode]:
    """The module and every function (lambdas included) among its ``nodes``."""
    yield tree
    for node in nodes:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            yield node


def scope_body(scope: ScopeNode) -> list[ast.stmt]:
    """The statements of a scope (a lambda's expression wrapped as one)."""
    if isinstance(scope, ast.Lambda):
        return [ast.Expr(scope.body)]
    return scope.body


def assigned_kinds(scope: ScopeNode) -> dict[str, set[str]]:
    """Per local name, the kinds of value bound to it: 'str', 'list' or 'other'."""
    kinds: dict[str, set[str]] = {}
    for node in walk_body(scope_body(scope)):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    kinds.setdefault(target.id, set()).add(value_kind(node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            kinds.setdefault(node.target.id, set()).add(annotation_kind(node.annotation))
    if not isinstance(scope, ast.Module):
        for arg in (*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs):
            kind = annotation_kind(arg.annotation) if arg.annotation else "other"
            kinds.setdefault(arg.arg, set()).add(kind)
    return kinds


def value_kind(node: ast.expr) -> str:
    """'str', 'list' or 'other' for an assigned expression."""
    if isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    ):
        return "str"
    if isinstance(node, (ast.List, ast.ListComp)):
        return "list"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return {"str": "str", "list": "list", "sorted": "list"}.get(node.func.id, "other")
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        left, right = value_kind(node.left), value_kind(node.right)
        return left if left != "other" else right
    return "other"


def annotation_kind(node: ast.expr) -> str:
    """'str', 'list' or 'other' for an annotation such as ``list[int]``."""
    if isinstance(node, ast.Subscript):
        node = node.value
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return {"str": "str", "list": "list", "List": "list"}.get(name, "other")


def only_kind(kinds: dict[str, set[str]], name: str, kind: str) -> bool:
    """Whether every binding of ``name`` in the scope is of ``kind``."""
    return kinds.get(name) == {kind}
