"""Code hidden in data: programs passed to ``exec``/``eval`` as text, and dynamic ways to run code.

A policy can wrap its program in ``exec("...")`` so that the tools see one call
instead of its code.  :func:`find_hidden_code` returns each ``exec``/``eval``
whose argument :mod:`.static_text` can compute (str or bytes literals, their
concatenation, base64/codecs/zlib decoding, a name bound once to such a value,
``compile(...)`` of one) as a :class:`Payload`: the tool runner analyses its text as
code and counts its findings at the call's line.  Whatever runs or reaches
code in a way that cannot be read is returned as ``unreadable``, and the
source then scores the lowest quality:

* ``exec``/``eval`` of a value computed at run time (``eval(input())`` too: the
  analysis cannot tell data read at run time from a program built at run time);
* ``exec``/``eval`` reached other than by a plain call (``e = exec``,
  ``getattr(builtins, 'exec')``, ``__builtins__['eval']``, ``globals()['exec']``);
* ``__import__``, ``breakpoint``, the ``builtins`` module as a value, any use (or
  star import) of a module that loads or runs code given as data
  (:data:`DYNAMIC_IMPORTS`: ``importlib``, ``runpy``, ``code``, ``ctypes``, the
  debuggers, profilers and timers ``pdb``, ``bdb``, ``trace``, ``profile``,
  ``cProfile``, ``timeit``, ``doctest``, ``types.FunctionType``, and
  ``pickle``/``marshal`` loading, whose data may call ``exec``), ``sys.modules``,
  and the attributes of introspection escapes (``__globals__``,
  ``__subclasses__``, ``__code__``, frame globals...).  The module-level
  functions that run text they are given (:data:`RUNNERS`: ``timeit.timeit``,
  ``cProfile.run``, ``pdb.run``...) give payloads like ``exec`` when that text is
  readable;
* code run outside the process: a new interpreter (``sys.executable``, a
  process started with ``python`` in its command) or a Python file opened by
  name (written, to be imported).

What it does not catch: a callable reached through data it cannot follow (a
function's return value, a container filled at run time, a getattr name
computed at run time from something other than literals).  Python is too
dynamic for a complete list; these are the spellings a policy finds first.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from .normalize import decode
from .static_text import StaticText
from .tools._astutil import bound_names

EXECUTORS = {"exec": "exec", "eval": "eval", "builtins.exec": "exec", "builtins.eval": "eval"}
COMPILERS = frozenset({"compile", "builtins.compile"})
#: Builtins whose use, as a call or a value, is unreadable.
DYNAMIC_BUILTINS = frozenset({"__import__", "__builtins__", "execfile", "globals", "locals", "vars",
                              "breakpoint"})
#: Modules and names that run code given as data, load or build code, or reach a namespace's
#: globals (a prefix matches its attributes): importing or using one is unreadable, unless the
#: use is a :data:`RUNNERS` call whose code is readable text.  The interpreter's debuggers,
#: profilers and timers (``pdb``, ``bdb``, ``trace``, ``profile``, ``cProfile``, ``timeit``) and
#: ``doctest`` all compile and run text they are given.
DYNAMIC_IMPORTS = ("builtins", "importlib", "imp", "_imp", "_frozen_importlib",
                   "_frozen_importlib_external", "runpy", "code", "codeop", "ctypes", "_ctypes", "cffi",
                   "types.FunctionType", "types.CodeType", "types.LambdaType", "types.MethodType",
                   "sys.executable", "sys.modules", "sys._getframe", "inspect", "pkgutil", "zipimport",
                   "site", "pydoc", "__main__", "timeit", "cProfile", "profile", "trace", "bdb", "pdb",
                   "doctest", "idlelib", "IPython", "gc.get_objects", "gc.get_referrers",
                   "gc.get_referents", "marshal.load", "marshal.loads", "pickle.load", "pickle.loads",
                   "pickle.Unpickler", "_pickle", "dill.load", "dill.loads", "cloudpickle.load",
                   "cloudpickle.loads", "shelve")
#: Functions of those modules that run text they are given, with where that text is:
#: (positions, keywords, how it is compiled).  Readable text is analysed like an exec payload.
RUNNERS: dict[str, tuple[tuple[int, ...], tuple[str, ...], str]] = {
    **{f"timeit.{f}": ((0, 1), ("stmt", "setup"), "exec") for f in ("timeit", "repeat", "Timer")},
    **{f"{m}.{f}": ((0,), ("statement",), "exec")
       for m in ("cProfile", "profile") for f in ("run", "runctx")},
    "pdb.run": ((0,), ("statement",), "exec"), "pdb.runeval": ((0,), ("expression",), "eval"),
}
#: Attributes that lead from ordinary objects to globals, builtins or code objects.
ESCAPE_ATTRIBUTES = frozenset({
    "__globals__", "__builtins__", "__subclasses__", "__code__", "__import__", "__loader__",
    "__getattribute__", "f_globals", "f_builtins", "f_locals", "f_back", "gi_frame",
    "cr_frame", "ag_frame", "tb_frame", "func_globals",
})
#: Names that, as text, fetch an executor or an escape through getattr or a subscript.
DYNAMIC_KEYS = frozenset({"exec", "eval", "compile", "execfile", "builtins"}) | DYNAMIC_BUILTINS \
    | ESCAPE_ATTRIBUTES
#: Calls that start a process (a dotted prefix), and calls that open a file by its name.
_LAUNCHERS = ("subprocess.", "os.system", "os.popen", "os.exec", "os.spawn", "os.posix_spawn",
              "pty.spawn", "asyncio.create_subprocess")
_OPENERS = frozenset({"open", "io.open", "os.open", "codecs.open", "pathlib.Path"})
_PYTHON = re.compile(r"(?:^|[\s/\\])(?:python|pypy)[\d.]*(?:\s|$)", re.IGNORECASE)
_PYTHON_FILE = re.compile(r"\.(?:py|pyw|pyc|pth)$", re.IGNORECASE)
_KEY_TAKERS = frozenset({"getattr", "operator.attrgetter", "operator.methodcaller"})
_KEY_METHODS = frozenset({"get", "pop", "setdefault", "__getitem__"})


@dataclass(frozen=True)
class Payload:
    """Code a program runs from text: the text, the line of the call, and the function called
    (``exec``, ``eval`` or one of :data:`RUNNERS`)."""

    text: str
    line: int
    call: str


@dataclass
class HiddenCode:
    """The payloads of a module, and where it runs or reaches code that cannot be read."""

    payloads: list[Payload] = field(default_factory=list)
    unreadable: list[tuple[int, str]] = field(default_factory=list)


def _denied(name: str) -> bool:
    """Whether ``name`` (dotted) is or belongs to an entry of :data:`DYNAMIC_IMPORTS`."""
    return any(name == p or name.startswith(p + ".") for p in DYNAMIC_IMPORTS)


def find_hidden_code(nodes: list[ast.AST], limit: int) -> HiddenCode:
    """The payloads (each at most ``limit`` characters) and unreadable dynamic code of a module,
    given all its nodes."""
    return _Finder(nodes, limit).run()


class _Finder:
    """One pass over a module's nodes, with what the checks need to know about the module."""

    def __init__(self, nodes: list[ast.AST], limit: int) -> None:
        self.nodes = nodes
        self.text = StaticText(nodes, limit)
        self.inner = {id(n.value) for n in nodes if isinstance(n, ast.Attribute)}
        self.calls = {id(n.func): n for n in nodes if isinstance(n, ast.Call)}
        counts = Counter(name for n in nodes for name in bound_names(n))
        self.functions = {n.name for n in nodes if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                          and counts[n.name] == 1}
        self.found = HiddenCode()

    def run(self) -> HiddenCode:
        """Look at every node once."""
        for node in self.nodes:
            if isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in self.inner:
                self._reference(node)
            if isinstance(node, ast.Attribute) and node.attr in ESCAPE_ATTRIBUTES:
                self._unreadable(node, f"reaches {node.attr}")
            elif isinstance(node, ast.Subscript):
                self._key(node, node.slice)
            elif isinstance(node, ast.Call):
                self._key_call(node)
                self._outside(node)
            elif isinstance(node, ast.ImportFrom):
                self._import(node)
        return self.found

    def _import(self, node: ast.ImportFrom) -> None:
        """A star import of what runs code as data, whose names the uses would not show."""
        if isinstance(node, ast.ImportFrom) and node.module and not node.level \
                and any(a.name == "*" for a in node.names) \
                and (_denied(node.module) or any(p.startswith(node.module + ".") for p in DYNAMIC_IMPORTS)):
            self._unreadable(node, f"imports everything of {node.module}")

    # -- what a name or attribute chain refers to --------------------------------------------------
    def _reference(self, node: ast.Name | ast.Attribute) -> None:
        name = self._dotted(node)
        if name is None:
            return
        call = self.calls.get(id(node))
        if name in EXECUTORS:
            if call is not None:
                self._executor(call, EXECUTORS[name])
            else:
                self._unreadable(node, f"uses {name} as a value")
        elif name in RUNNERS and call is not None:
            self._runner(call, name)
        elif name.split(".")[0] in DYNAMIC_BUILTINS or _denied(name):
            self._unreadable(node, f"uses {name}")

    def _dotted(self, node: ast.Name | ast.Attribute) -> str | None:
        """The chain's dotted name, if it names a builtin or an imported module (not own names)."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value  # type: ignore[assignment]
        if not isinstance(root, ast.Name) or self.text.is_own(root.id):
            return None
        return self.text.dotted(node)

    # -- exec / eval --------------------------------------------------------------------------------
    def _executor(self, call: ast.Call, kind: str) -> None:
        if not call.args or isinstance(call.args[0], ast.Starred):
            self._unreadable(call, f"calls {kind} without code to read")
            return
        source = self._compiled_source(call.args[0])
        value = self.text.value(source)
        if isinstance(value, bytes):
            try:
                value = decode(value)
            except (SyntaxError, LookupError, UnicodeDecodeError):
                value = None
        if value is None:
            self._unreadable(call, f"runs code with {kind} that cannot be read statically")
            return
        self.found.payloads.append(Payload(value.lstrip(" \t") if kind == "eval" else value,
                                           call.lineno, kind))

    def _runner(self, call: ast.Call, name: str) -> None:
        """A call that runs text it is given (``timeit.timeit("...")``): a payload per readable text;
        a function of this module or a lambda is code the tools read already."""
        positions, keywords, kind = RUNNERS[name]
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            self._unreadable(call, f"calls {name} without code to read")
            return
        given = [a for i, a in enumerate(call.args) if i in positions]
        given += [k.value for k in call.keywords if k.arg in keywords]
        for arg in given:
            if isinstance(arg, ast.Lambda) or (isinstance(arg, ast.Name) and arg.id in self.functions):
                continue
            value = self.text.value(arg)
            if not isinstance(value, str):
                self._unreadable(call, f"runs code with {name} that cannot be read statically")
                return
            self.found.payloads.append(Payload(value.strip() if kind == "eval" else value,
                                               call.lineno, name))

    def _compiled_source(self, node: ast.expr) -> ast.expr:
        """The source of ``compile(source, ...)`` (also through a name bound to it), else ``node``."""
        call = self.text.binding(node.id) if isinstance(node, ast.Name) else node
        if isinstance(call, ast.Call) and call.args and self._calls(call, COMPILERS):
            return call.args[0]
        return node

    def _calls(self, call: ast.Call, names: frozenset[str]) -> bool:
        return isinstance(call.func, (ast.Name, ast.Attribute)) and self._dotted(call.func) in names

    # -- getattr(x, "exec"), x["__builtins__"], d.get("eval") ----------------------------------------
    def _key_call(self, call: ast.Call) -> None:
        if self._calls(call, _KEY_TAKERS):
            for arg in call.args[1:] if self._calls(call, frozenset({"getattr"})) else call.args:
                self._key(call, arg)
        elif isinstance(call.func, ast.Attribute) and call.func.attr in _KEY_METHODS and call.args:
            self._key(call, call.args[0])

    def _key(self, node: ast.expr, key: ast.expr) -> None:
        value = self.text.value(key)
        if isinstance(value, str) and value in DYNAMIC_KEYS:
            self._unreadable(node, f"fetches {value!r} by name")

    # -- code run outside this process: a new interpreter, a source file written to be imported --------
    def _outside(self, call: ast.Call) -> None:
        name = self._dotted(call.func) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
        if name is None:
            return
        if name.startswith(_LAUNCHERS) and any(_PYTHON.search(t) for t in self._texts(call)):
            self._unreadable(call, "starts a Python interpreter")
        elif name in _OPENERS and call.args and any(map(_PYTHON_FILE.search, self._texts(call.args[0]))):
            self._unreadable(call, "opens a Python source file by name")

    def _texts(self, node: ast.AST) -> Iterator[str]:
        """The str literals under ``node``, names bound once to literals followed one step."""
        for sub in ast.walk(node):
            bound = self.text.binding(sub.id) if isinstance(sub, ast.Name) else None
            for leaf in [sub, *(ast.walk(bound) if bound is not None else ())]:
                if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str):
                    yield leaf.value

    def _unreadable(self, node: ast.AST, what: str) -> None:
        self.found.unreadable.append((getattr(node, "lineno", 1), what))
