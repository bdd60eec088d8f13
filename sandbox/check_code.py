"""What a script suite's check and definitions may look up, read from their compiled code.

The judge needs to know, before a check runs, by which names the suite's own
code may reach a function of the solution other than through ``candidate``
(:meth:`CheckCode.may_call`): a batch of calls made ahead of the check must not
be overtaken by a call the check makes some other way.
"""

from __future__ import annotations

import ast
import collections
import dis
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from types import CodeType

from .runtime import compile_plain
from .suite import SUITE_CACHE


@dataclass(frozen=True)
class CheckCode:
    """A script suite's check and definitions, compiled once, and the global names their code
    may look up (``co_names``): ``looked_up`` in all of it, ``looked_up_when_run`` once the
    check runs (after the definitions' top-level code has), ``read_at_top`` by the definitions'
    top-level code itself other than to bind them (``def``, ``import``, assignment); and the
    names the definitions ``define`` for good (:func:`_defined_once`)."""

    check: CodeType
    definitions: CodeType | None
    looked_up: frozenset[str]
    looked_up_when_run: frozenset[str]
    read_at_top: frozenset[str]
    defined: frozenset[str] = frozenset()

    def may_call(self, entry: str) -> frozenset[str]:
        """The names by which the suite's code may call a function of the solution other than
        as ``candidate``.  A name the definitions' top-level code only binds is theirs from
        then on, and the entry point is not yet the candidate while that code runs; a name
        they define for good (HumanEval/38's ``encode_cyclic``) is theirs when the check
        runs.  Like ``co_names``, this does not see a name looked up as data
        (``globals()[name]``)."""
        return (self.looked_up_when_run - (self.defined - {entry})) | (self.read_at_top - {entry})


_BINDING = frozenset({"STORE_NAME", "STORE_GLOBAL", "IMPORT_NAME", "IMPORT_FROM"})  # no lookup


@functools.lru_cache(maxsize=SUITE_CACHE)
def check_code(check: str, definitions: str | None) -> CheckCode:
    """The :class:`CheckCode` of a check and its definitions (kept for :data:`SUITE_CACHE` suites)."""
    checked = compile_plain(check, "<check>")
    if definitions is None:
        names = _names_in([checked])
        return CheckCode(checked, None, names, names, frozenset())
    tree = ast.parse(definitions, "<definitions>")
    top = compile_plain(tree, "<definitions>")
    functions = [const for const in top.co_consts if isinstance(const, CodeType)]
    read = frozenset(op.argval for op in dis.get_instructions(top)
                     if op.opcode in dis.hasname and op.opname not in _BINDING)
    star = _star_import(definitions, tree) or _star_import(check)
    defined = frozenset() if star else _defined_once(tree, [checked, top])
    return CheckCode(checked, top, _names_in([checked, top]), _names_in([checked, *functions]), read,
                     defined)


def _nested(codes: list[CodeType]) -> Iterator[CodeType]:
    """These code objects and every one nested in them."""
    todo = list(codes)
    while todo:
        code = todo.pop()
        yield code
        todo.extend(const for const in code.co_consts if isinstance(const, CodeType))


def _names_in(codes: list[CodeType]) -> frozenset[str]:
    """Every ``co_names`` entry of these code objects and of those nested in them."""
    return frozenset(name for code in _nested(codes) for name in code.co_names)


# the instructions that bind or delete a global name (``co_names[arg]`` in every version)
_REBINDING = frozenset(dis.opmap[name] for name in ("STORE_NAME", "STORE_GLOBAL", "DELETE_NAME",
                                                    "DELETE_GLOBAL"))
_DEFINING = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


_STAR = re.compile(r"\bimport\s*\*")  # what a source with a star import holds: only then is it walked


def _star_import(source: str, tree: ast.Module | None = None) -> bool:
    """Whether ``source`` (parsed: ``tree``) has a ``from ... import *``, which may bind any
    name; it is parsed and walked only when its text could hold one."""
    if not _STAR.search(source):
        return False
    return any(isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)
               for node in ast.walk(tree or ast.parse(source)))


def _defined_once(definitions: ast.Module, codes: list[CodeType]) -> frozenset[str]:
    """The names the definitions bind by an undecorated ``def`` or ``class``, or an ``import``,
    among their top-level statements, that no code of ``codes`` (the suite's, compiled, with
    no star import) binds or deletes anywhere else: the suite's own once its top-level code
    has run."""
    bound: collections.Counter[str] = collections.Counter()
    for node in definitions.body:
        if isinstance(node, _DEFINING) and not node.decorator_list:
            bound[node.name] += 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update(alias.asname or alias.name.partition(".")[0] for alias in node.names)
    stores = collections.Counter(code.co_names[arg] for code in _nested(codes)
                                 for op, arg in _instructions(code) if op in _REBINDING)
    return frozenset(name for name, count in bound.items() if count == 1 and stores[name] == 1)


def _instructions(code: CodeType) -> Iterator[tuple[int, int]]:
    """Each instruction of ``code`` as (opcode, argument), read straight from its bytecode (a
    fraction of the cost of :func:`dis.get_instructions`, which also decodes what this does not
    need)."""
    raw, extended = code.co_code, 0
    for index in range(0, len(raw), 2):
        op, arg = raw[index], raw[index + 1] | extended
        extended = arg << 8 if op == dis.EXTENDED_ARG else 0
        yield op, arg
