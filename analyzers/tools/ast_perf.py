"""Own performance checks (CISQ efficiency): work repeated in loops, oversized literals.

Loops are ``for``/``while`` bodies, a ``while`` test, and the element and filter
parts of comprehensions; nested functions are not part of their enclosing loop.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from ..finding import Finding
from ._astutil import (
    LOOPS,
    NESTED_SCOPES,
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
# Methods that do I/O when called on a name bound to a file or socket opened in this module.
# ``sys.stdout.write`` / ``sys.stdin.readline`` are not flagged, like ``print`` and ``input``:
# competitive-programming answers write and read standard streams in loops by design, and
# ``open(0)`` / ``open(1)`` (a file-descriptor number) count as those streams too.
HANDLE_IO_METHODS = frozenset({"write", "writelines", "read", "readline", "send", "sendall", "recv"})
HANDLE_OPENERS = frozenset({
    "open", "io.open", "codecs.open", "gzip.open", "bz2.open", "lzma.open",
    "socket.socket", "socket.create_connection",
})
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
        parents = unit.parents
        module_handles = _handles(unit.tree.body, aliases, parents)
        for scope in scopes(unit.tree, unit.nodes):
            kinds = {**module_kinds, **assigned_kinds(scope)}
            handles = {**module_handles, **_handles(scope_body(scope), aliases, parents)}
            for node in repeated_nodes(scope_body(scope)):
                yield from self._in_loop(node, kinds, aliases)
                if isinstance(node, (ast.For, ast.AsyncFor)):
                    yield from self._explicit_search(node, kinds)
                elif (
                    isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in HANDLE_IO_METHODS
                    and isinstance(node.func.value, ast.Name)
                    and _opened_outside_loop(handles.get(node.func.value.id, ()), node, parents)
                ):
                    yield self.emit(
                        "io-in-loop",
                        f"I/O call {node.func.value.id}.{node.func.attr}() on a file or socket "
                        "inside a loop; batch it",
                        node.lineno,
                    )
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

    def _explicit_search(
        self, node: ast.For | ast.AsyncFor, kinds: dict[str, set[str]]
    ) -> Iterator[Finding | None]:
        """``for y in some_list: if y == x: ...; break`` inside another loop: ``x in some_list``."""
        if not (
            isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Name)
            and only_kind(kinds, node.iter.id, "list")
        ):
            return
        item = node.target.id
        for stmt in node.body:
            if (
                isinstance(stmt, ast.If) and stmt.body
                and isinstance(stmt.body[-1], (ast.Break, ast.Return))
                and _equals_item(stmt.test, item)
            ):
                yield self.emit(
                    "linear-search-in-loop",
                    f"for/if/break search of list '{node.iter.id}' in a loop; use a set or dict",
                    node.lineno,
                )
                return

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


def _loops_around(node: ast.AST, parents: dict[int, ast.AST]) -> set[int]:
    """Ids of the loops around ``node`` up to its function or class."""
    out: set[int] = set()
    current = parents.get(id(node))
    while current is not None and not isinstance(current, NESTED_SCOPES):
        if isinstance(current, LOOPS):
            out.add(id(current))
        current = parents.get(id(current))
    return out


def _handles(
    stmts: list[ast.stmt], aliases: dict[str, str], parents: dict[int, ast.AST]
) -> dict[str, list[set[int]]]:
    """Names bound to a file or socket (``with open(...) as f``, ``f = open(...)``), each
    with the loops around every place it is bound."""
    out: dict[str, list[set[int]]] = {}
    for node in walk_body(stmts):
        pairs: list[tuple[ast.expr | None, ast.expr]] = []
        if isinstance(node, ast.withitem):
            pairs.append((node.optional_vars, node.context_expr))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            pairs.append((node.targets[0], node.value))
        for target, value in pairs:
            if isinstance(target, ast.Name) and _opens_handle(value, aliases):
                out.setdefault(target.id, []).append(_loops_around(value, parents))
    return out


def _opens_handle(value: ast.expr, aliases: dict[str, str]) -> bool:
    """``open(...)``, ``socket.socket(...)``...; not ``open(0)`` (a descriptor number: stdin)."""
    if not (isinstance(value, ast.Call) and dotted(value.func, aliases) in HANDLE_OPENERS):
        return False
    first = value.args[0] if value.args else None
    return not (isinstance(first, ast.Constant) and isinstance(first.value, int))


def _opened_outside_loop(
    bindings: Iterable[set[int]], call: ast.AST, parents: dict[int, ast.AST]
) -> bool:
    """Whether a loop runs ``call`` more often than every ``open`` of its handle.

    A handle opened and read once per iteration is one I/O per iteration, and that
    ``open()`` is already flagged; a read or write in a loop inside that one is flagged.
    """
    bindings = list(bindings)
    around = _loops_around(call, parents)
    return bool(bindings) and all(around - loops for loops in bindings)


def _equals_item(test: ast.expr, item: str) -> bool:
    """``item == other`` or ``other == item``, ``other`` not reading ``item``."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    for mine, other in (sides, sides[::-1]):
        if isinstance(mine, ast.Name) and mine.id == item and not any(
            isinstance(n, ast.Name) and n.id == item for n in ast.walk(other)
        ):
            return True
    return False


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
