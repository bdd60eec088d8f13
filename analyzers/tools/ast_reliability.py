"""Own reliability checks: exception handling, resource and lock release, loop exits."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator

from ..finding import Finding
from ._astutil import (
    LOOPS,
    NESTED_SCOPES,
    ScopeNode,
    dotted,
    import_aliases,
    root_name,
    scope_body,
    walk_body,
    walk_scope,
)
from ._astutil import scopes as all_scopes
from .base import PerUnitTool, Unit

OPENERS = frozenset({
    "open", "io.open", "codecs.open", "gzip.open", "bz2.open", "lzma.open", "tarfile.open",
    "zipfile.ZipFile", "socket.socket", "socket.create_connection", "sqlite3.connect",
    "urllib.request.urlopen", "tempfile.TemporaryFile", "tempfile.NamedTemporaryFile",
})
EXIT_CALLS = frozenset({"sys.exit", "exit", "quit", "os._exit", "os.abort"})
LOCK_FACTORIES = frozenset({
    "threading.Lock", "threading.RLock", "threading.Semaphore", "threading.BoundedSemaphore",
    "threading.Condition", "multiprocessing.Lock", "multiprocessing.RLock", "asyncio.Lock",
})
MUTATORS = frozenset({
    "append", "extend", "insert", "remove", "pop", "clear", "add", "discard", "update",
    "popitem",
})
PURE_BUILTINS = frozenset({"len", "abs", "min", "max", "sum", "any", "all", "bool", "int"})
_TERMINATORS = (ast.Break, ast.Continue, ast.Return, ast.Raise)


def _reachable(stmts: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a block that can run: stop after an unconditional jump, skip dead ifs."""
    for stmt in stmts:
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Constant):
            yield from _reachable(stmt.body if stmt.test.value else stmt.orelse)
            continue
        yield stmt
        if isinstance(stmt, _TERMINATORS):
            return


def _exits_loop(stmts: list[ast.stmt], aliases: dict[str, str], depth: int = 0) -> bool:
    """Whether a reachable break (of this loop), return, raise, yield or exit call exists."""
    for stmt in _reachable(stmts):
        if isinstance(stmt, NESTED_SCOPES):
            continue
        if isinstance(stmt, (ast.Return, ast.Raise)) or (isinstance(stmt, ast.Break) and not depth):
            return True
        for node in walk_scope(stmt):
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await)) or (
                isinstance(node, ast.Call) and dotted(node.func, aliases) in EXIT_CALLS
            ):
                return True
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Yield, ast.YieldFrom)):
            return True
        inner = depth + isinstance(stmt, LOOPS)
        blocks = [getattr(stmt, f, []) for f in ("body", "orelse", "finalbody")]
        blocks += [h.body for h in getattr(stmt, "handlers", [])]
        blocks += [c.body for c in getattr(stmt, "cases", [])]
        if any(_exits_loop(b, aliases, inner) for b in blocks if isinstance(b, list)):
            return True
    return False


def _is_lockish(expr: ast.expr, lock_names: set[str]) -> bool:
    text = ast.unparse(expr)
    low = text.lower()
    return text in lock_names or any(w in low for w in ("lock", "mutex", "sem"))


class ReliabilityTool(PerUnitTool):
    """Exception handling, resource leaks, locks, infinite loops, loop-variable updates."""

    name = "rk-reliability"

    def check(self, unit: Unit) -> Iterable[Finding | None]:
        """Handler, loop, resource and lock findings of one module."""
        tree = unit.tree
        aliases = import_aliases(unit.nodes)
        parents = unit.parents
        for node in unit.nodes:
            if isinstance(node, ast.ExceptHandler):
                yield from self._handler(node)
            elif isinstance(node, ast.While):
                yield from self._while(node, aliases, parents)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                yield from self._for_target(node)
                yield from self._for_iterable(node)
        for scope in all_scopes(tree, unit.nodes):
            yield from self._resources(scope, aliases, parents)
            yield from self._unreleased_locks(scope)
        yield from self._lock_order(tree, unit.nodes, aliases)

    # -- exceptions ---------------------------------------------------------------
    def _handler(self, node: ast.ExceptHandler) -> Iterator[Finding | None]:
        reraises = any(isinstance(n, ast.Raise) for n in walk_body(node.body))
        caught = [] if node.type is None else (
            node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
        )
        if node.type is None and not reraises:
            yield self.emit("bare-except", "bare 'except:' also catches SystemExit", node.lineno)
        elif node.type is not None and not reraises and any(
            isinstance(c, ast.Name) and c.id in ("Exception", "BaseException") for c in caught
        ):
            yield self.emit(
                "broad-except", f"'except {ast.unparse(node.type)}' swallows every error",
                node.lineno,
            )
        if all(
            isinstance(s, (ast.Pass, ast.Continue))
            or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
            for s in node.body
        ):
            yield self.emit("empty-except", "exception handler takes no action", node.lineno)

    # -- loops ----------------------------------------------------------------------
    def _while(
        self, node: ast.While, aliases: dict[str, str], parents: dict[int, ast.AST]
    ) -> Iterator[Finding | None]:
        if _exits_loop(node.body, aliases):
            return
        test = node.test
        if isinstance(test, ast.Constant):
            if test.value:
                yield self.emit(
                    "infinite-loop", "'while True' with no reachable break, return or raise",
                    node.lineno,
                )
            return
        names = _condition_names(test)
        if not names:
            return
        scope = _enclosing_scope(node, parents)
        local = _locals(scope) if scope is not None else set()
        has_calls = any(isinstance(n, ast.Call) for n in walk_body(node.body))
        if has_calls and not names <= local:
            return
        if not names & _changed_names(node.body, _scalars(scope)):
            yield self.emit(
                "loop-condition-unchanged",
                f"no variable of the loop condition ({', '.join(sorted(names))}) changes "
                "in the loop body",
                node.lineno,
            )

    def _for_target(self, node: ast.For | ast.AsyncFor) -> Iterator[Finding | None]:
        """The first assignment in the body to a name the loop binds."""
        targets = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        for sub in walk_body(node.body):
            if isinstance(sub, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id in targets for t in _targets(sub)
            ):
                yield self.emit(
                    "loop-variable-modified",
                    "for-loop variable reassigned inside the loop body", sub.lineno,
                )
                return

    def _for_iterable(self, node: ast.For | ast.AsyncFor) -> Iterator[Finding | None]:
        """The first change to the iterated name or attribute, in a body with no break."""
        if not isinstance(node.iter, (ast.Name, ast.Attribute)):
            return
        walked = ast.unparse(node.iter)
        body = list(walk_body(node.body))
        if any(isinstance(n, ast.Break) for n in body):
            return
        for sub in body:
            if _mutates(sub, walked):
                yield self.emit(
                    "iterable-modified-in-loop",
                    f"'{walked}' is changed while the loop iterates over it",
                    sub.lineno if isinstance(sub, (ast.Call, ast.Delete)) else node.lineno,
                )
                return

    # -- resources ------------------------------------------------------------------
    def _resources(
        self, scope: ScopeNode, aliases: dict[str, str], parents: dict[int, ast.AST]
    ) -> Iterator[Finding | None]:
        body = list(walk_body(scope_body(scope)))
        released = _released_names(body)
        for node in body:
            if not (isinstance(node, ast.Call) and dotted(node.func, aliases) in OPENERS):
                continue
            parent = parents.get(id(node))
            if isinstance(parent, (ast.withitem, ast.Return, ast.Yield, ast.YieldFrom)):
                continue
            if isinstance(parent, ast.Call) and (dotted(parent.func, aliases) or "").endswith(
                ("enter_context", "closing")
            ):
                continue
            if isinstance(parent, (ast.Assign, ast.AnnAssign)):
                names = [t for t in _targets(parent) if isinstance(t, ast.Name)]
                if len(names) != len(_targets(parent)) or any(n.id in released for n in names):
                    continue
            yield self.emit(
                "resource-leak",
                f"{dotted(node.func, aliases)}() result is neither used in 'with' nor closed",
                node.lineno,
            )

    # -- locks ------------------------------------------------------------------------
    def _unreleased_locks(self, scope: ScopeNode) -> Iterator[Finding | None]:
        methods = [
            (n.func.attr, ast.unparse(n.func.value), n.lineno)
            for n in walk_body(scope_body(scope))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr in ("acquire", "release")
        ]
        released = {owner for attr, owner, _ in methods if attr == "release"}
        for attr, owner, line in methods:
            if attr == "acquire" and owner not in released:
                yield self.emit(
                    "lock-not-released", f"'{owner}.acquire()' is never released here", line
                )
                released.add(owner)

    def _lock_order(
        self, tree: ast.Module, nodes: list[ast.AST], aliases: dict[str, str]
    ) -> Iterator[Finding | None]:
        lock_names = {
            ast.unparse(t)
            for n in nodes if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
            and dotted(n.value.func, aliases) in LOCK_FACTORIES
            for t in n.targets
        }
        first_seen: dict[tuple[str, str], int] = {}

        def visit(stmts: list[ast.stmt], held: tuple[str, ...]) -> None:
            for stmt in stmts:
                now = held
                if isinstance(stmt, (ast.With, ast.AsyncWith)):
                    for item in stmt.items:
                        if _is_lockish(item.context_expr, lock_names):
                            name = ast.unparse(item.context_expr)
                            for outer in now:
                                first_seen.setdefault((outer, name), stmt.lineno)
                            now = (*now, name)
                inner = [getattr(stmt, f, []) for f in ("body", "orelse", "finalbody")]
                inner += [h.body for h in getattr(stmt, "handlers", [])]
                for block in inner:
                    if isinstance(block, list):
                        visit(block, () if isinstance(stmt, NESTED_SCOPES) else now)

        visit(tree.body, ())
        for (a, b), line in sorted(first_seen.items(), key=lambda kv: kv[1]):
            other = first_seen.get((b, a))
            if other is not None and other < line:
                yield self.emit(
                    "lock-order-inversion",
                    f"locks '{a}' and '{b}' are taken in both orders (also line {other})", line,
                )


def _targets(stmt: ast.AST) -> list[ast.expr]:
    if isinstance(stmt, ast.Assign):
        return [e for t in stmt.targets for e in (t.elts if isinstance(t, ast.Tuple) else [t])]
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
        return [stmt.target]
    return []


def _mutates(node: ast.AST, walked: str) -> bool:
    """Whether ``node`` is a mutating method call on, or an item deletion from, ``walked``."""
    if isinstance(node, ast.Call):
        return (
            isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS
            and ast.unparse(node.func.value) == walked
        )
    if isinstance(node, ast.Delete):
        return any(isinstance(t, ast.Subscript) and ast.unparse(t.value) == walked for t in node.targets)
    return False


def _released_names(body: list[ast.AST]) -> set[str]:
    """Names that are closed, returned, yielded, used in ``with`` or stored elsewhere."""
    out: set[str] = set()
    for node in body:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "close" and isinstance(node.func.value, ast.Name):
                out.add(node.func.value.id)
        elif isinstance(node, (ast.Return, ast.Yield, ast.YieldFrom)) and node.value:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            out.update(v.id for v in values if isinstance(v, ast.Name))
        elif isinstance(node, ast.withitem):
            out.update(n.id for n in ast.walk(node.context_expr) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and any(
            not isinstance(t, ast.Name) for t in node.targets
        ):
            out.add(node.value.id)
    return out


def _condition_names(test: ast.expr) -> set[str]:
    """Names read by a simple loop condition; empty when it reads anything else."""
    names: set[str] = set()
    for node in ast.walk(test):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in PURE_BUILTINS):
                return set()
        elif isinstance(node, (ast.Attribute, ast.Await, ast.NamedExpr, ast.Lambda)):
            return set()
    return names - PURE_BUILTINS


def _changed_names(body: list[ast.stmt], scalars: set[str]) -> set[str]:
    """Names bound, deleted, mutated through a method or an item, or passed to a call.

    A call cannot change a name bound only to numbers or strings (``scalars``).
    """
    out: set[str] = set()
    for node in walk_body(body):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(
            node.ctx, (ast.Store, ast.Del)
        ):
            out.add(root_name(node) or "")
        elif isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute):
                out.add(root_name(node.func.value) or "")
            for arg in (*node.args, *(k.value for k in node.keywords)):
                out.update(
                    n.id for n in ast.walk(arg) if isinstance(n, ast.Name) and n.id not in scalars
                )
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            out.update(node.names)
    return out


def _enclosing_scope(node: ast.AST, parents: dict[int, ast.AST]) -> ast.AST | None:
    current = parents.get(id(node))
    while current is not None and not isinstance(
        current, (ast.FunctionDef, ast.AsyncFunctionDef)
    ):
        current = parents.get(id(current))
    return current


def _scalars(scope: ast.AST | None) -> set[str]:
    """Names of a function bound only to constants and arithmetic on them."""
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    kinds: dict[str, bool] = {}
    for node in walk_body(scope.body):
        if isinstance(node, ast.Assign):
            scalar = isinstance(node.value, (ast.Constant, ast.BinOp, ast.UnaryOp))
            for target in node.targets:
                if isinstance(target, ast.Name):
                    kinds[target.id] = kinds.get(target.id, True) and scalar
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            kinds.setdefault(node.id, False)
    return {name for name, scalar in kinds.items() if scalar}


def _locals(scope: ast.AST) -> set[str]:
    """Parameters and names bound in a function, minus global/nonlocal declarations."""
    out: set[str] = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = scope.args
        out.update(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
        declared: set[str] = set()
        for node in walk_body(scope.body):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                declared.update(node.names)
        out -= declared
    return out
