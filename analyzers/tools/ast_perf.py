"""Own performance checks (CISQ efficiency): work repeated in loops, oversized literals.

Loops are ``for``/``while`` bodies, a ``while`` test, and the element and filter
parts of comprehensions; nested functions are not part of their enclosing loop.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from ..finding import Finding
from ._astutil import (
    assigned_kinds,
    dotted,
    import_aliases,
    only_kind,
    scope_body,
    scopes,
    value_kind,
    walk_body,
    walk_scope,
)
from .base import PerUnitTool, Unit

IO_CALLS = frozenset({
    "open", "io.open", "os.system", "os.popen", "os.listdir", "os.walk", "glob.glob",
    "subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "subprocess.Popen", "urllib.request.urlopen", "socket.socket", "socket.create_connection",
    "sqlite3.connect", "shutil.copy", "shutil.copyfile", "shutil.copytree",
    "requests.get", "requests.post", "requests.put", "requests.delete", "requests.head",
    "requests.patch", "requests.request", "httpx.get", "httpx.post",
})
IO_METHODS = frozenset({"read_text", "write_text", "read_bytes", "write_bytes", "execute"})
EXPENSIVE_CALLS = frozenset({
    "copy.deepcopy", "multiprocessing.Pool", "concurrent.futures.ThreadPoolExecutor",
    "concurrent.futures.ProcessPoolExecutor",
})
_DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _repeated_parts(node: ast.AST) -> list[ast.AST]:
    """The children of ``node`` that run once per iteration."""
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return list(node.body)
    if isinstance(node, ast.While):
        return [node.test, *node.body]
    if isinstance(node, _COMPREHENSIONS):
        heads: list[ast.AST] = (
            [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        )
        gens = node.generators
        return heads + [c for g in gens for c in g.ifs] + [g.iter for g in gens[1:]]
    return []


def repeated_nodes(stmts: list[ast.stmt]) -> Iterator[ast.AST]:
    """Each node of a scope that runs inside some loop of that scope, once."""
    seen: set[int] = set()
    for node in walk_body(stmts):
        for part in _repeated_parts(node):
            for sub in (part, *walk_scope(part)):
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield sub


def _depth(node: ast.AST) -> int:
    if isinstance(node, ast.Dict):
        children: list[ast.AST] = [v for v in node.values if v is not None]
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        children = list(node.elts)
    else:
        return 0
    return 1 + max((_depth(c) for c in children), default=0)


def _size(node: ast.AST) -> int:
    return len(node.keys) if isinstance(node, ast.Dict) else len(getattr(node, "elts", ()))


class PerfTool(PerUnitTool):
    """String building, I/O, costly calls, copies and linear searches in loops; big literals."""

    name = "rk-perf"

    def check(self, unit: Unit) -> Iterable[Finding | None]:
        """Loop-body costs per scope, then oversized literals and classes of the whole module."""
        aliases = import_aliases(unit.nodes)
        module_kinds = assigned_kinds(unit.tree)
        for scope in scopes(unit.tree, unit.nodes):
            kinds = {**module_kinds, **assigned_kinds(scope)}
            for node in repeated_nodes(scope_body(scope)):
                yield from self._in_loop(node, kinds, aliases)
        yield from self._literals(unit.nodes)
        yield from self._class_attributes(unit.nodes)

    def _in_loop(
        self, node: ast.AST, kinds: dict[str, set[str]], aliases: dict[str, str]
    ) -> Iterator[Finding | None]:
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            target = node.target
            if isinstance(target, ast.Name) and (
                only_kind(kinds, target.id, "str") or value_kind(node.value) == "str"
            ):
                yield self.emit(
                    "string-concat-in-loop",
                    f"string '{target.id}' built with += in a loop; collect parts and join",
                    node.lineno,
                )
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            yield from self._rebinding(node, node.targets[0], kinds)
        elif isinstance(node, ast.Call):
            yield from self._call(node, kinds, aliases)
        elif isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators, strict=True):
                if (
                    isinstance(op, (ast.In, ast.NotIn))
                    and isinstance(right, ast.Name)
                    and only_kind(kinds, right.id, "list")
                ):
                    yield self.emit(
                        "linear-search-in-loop",
                        f"membership test on list '{right.id}' in a loop; use a set",
                        node.lineno,
                    )

    def _rebinding(
        self, node: ast.Assign, target: ast.expr, kinds: dict[str, set[str]]
    ) -> Iterator[Finding | None]:
        if not isinstance(target, ast.Name):
            return
        name, value = target.id, node.value
        if (
            isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Add)
            and isinstance(value.left, ast.Name)
            and value.left.id == name
        ):
            if only_kind(kinds, name, "str") or value_kind(value.right) == "str":
                yield self.emit(
                    "string-concat-in-loop",
                    f"string '{name}' rebuilt with + in a loop; collect parts and join",
                    node.lineno,
                )
            elif isinstance(value.right, (ast.List, ast.Tuple)):
                yield self.emit(
                    "growing-copy-in-loop",
                    f"'{name} = {name} + ...' copies the whole sequence each iteration",
                    node.lineno,
                )
        elif _spreads(value, name):
            yield self.emit(
                "growing-copy-in-loop",
                f"'{name}' re-created from a copy of itself each iteration",
                node.lineno,
            )

    def _call(
        self, node: ast.Call, kinds: dict[str, set[str]], aliases: dict[str, str]
    ) -> Iterator[Finding | None]:
        name = dotted(node.func, aliases)
        method = node.func.attr if isinstance(node.func, ast.Attribute) else None
        if name in IO_CALLS or method in IO_METHODS:
            yield self.emit("io-in-loop", f"I/O call {name or method}() inside a loop", node.lineno)
        elif name in EXPENSIVE_CALLS or (
            name == "re.compile" and node.args and isinstance(node.args[0], ast.Constant)
        ):
            yield self.emit(
                "expensive-call-in-loop", f"{name}() repeated in a loop; hoist it", node.lineno
            )
        elif (
            method == "insert" and node.args
            and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0
        ):
            yield self.emit(
                "growing-copy-in-loop", "insert(0, ...) in a loop shifts the whole list",
                node.lineno,
            )
        elif (
            method in ("index", "count")
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and only_kind(kinds, node.func.value.id, "list")
        ):
            yield self.emit(
                "linear-search-in-loop",
                f"list.{method}() on '{node.func.value.id}' in a loop; use a dict or set",
                node.lineno,
            )

    def _literals(self, nodes: list[ast.AST]) -> Iterator[Finding | None]:
        displays = [
            n for n in nodes
            if isinstance(n, _DISPLAYS) and not isinstance(getattr(n, "ctx", None), ast.Store)
        ]
        inner = {id(c) for n in displays for c in ast.iter_child_nodes(n)}
        max_elements = int(self.profile.threshold("max_literal_elements"))
        max_depth = int(self.profile.threshold("max_literal_depth"))
        for node in displays:
            if _size(node) > max_elements:
                yield self.emit(
                    "large-literal",
                    f"literal with {_size(node)} elements (limit {max_elements})",
                    node.lineno,
                )
            if id(node) not in inner and _depth(node) > max_depth:
                yield self.emit(
                    "deeply-nested-literal",
                    f"literal nested {_depth(node)} levels deep (limit {max_depth})",
                    node.lineno,
                )

    def _class_attributes(self, nodes: list[ast.AST]) -> Iterator[Finding | None]:
        limit = int(self.profile.threshold("max_class_attributes"))
        for cls in (n for n in nodes if isinstance(n, ast.ClassDef)):
            names: set[str] = set()
            for stmt in cls.body:
                targets = stmt.targets if isinstance(stmt, ast.Assign) else (
                    [stmt.target] if isinstance(stmt, ast.AnnAssign) else []
                )
                names.update(t.id for t in targets if isinstance(t, ast.Name))
            if len(names) > limit:
                yield self.emit(
                    "too-many-class-attributes",
                    f"class {cls.name} has {len(names)} class attributes (limit {limit})",
                    cls.lineno,
                )


def _spreads(value: ast.expr, name: str) -> bool:
    """``[*name, x]`` or ``{**name, k: v}``."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return any(
            isinstance(e, ast.Starred) and isinstance(e.value, ast.Name) and e.value.id == name
            for e in value.elts
        )
    if isinstance(value, ast.Dict):
        return any(
            k is None and isinstance(v, ast.Name) and v.id == name
            for k, v in zip(value.keys, value.values, strict=True)
        )
    return False
