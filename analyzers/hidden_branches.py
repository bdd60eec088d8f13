"""Code hidden from the type checker without a comment: branches it skips, functions it does not check.

mypy decides some conditions before it reads the code under them (``TYPE_CHECKING``,
``sys.version_info`` and ``sys.platform`` comparisons, constants such as ``False``
or ``0``, and ``not``/``and``/``or`` of those) and checks only the
branch it deems taken; it skips the body of a function decorated with
``typing.no_type_check``.  A generated program could put its faults there, as it
could behind a ``# type: ignore``.  Unless the profile honours suppressions,
:func:`reveal_hidden_branches` rewrites such code the way comment suppressions are
erased: every condition of that kind becomes ``bool(condition)``, which mypy
does not decide, so it checks both branches; each ``no_type_check`` decorator is
blanked.  Lines keep their numbers, and the other tools read the same code.
"""

from __future__ import annotations

import ast

from .tools._astutil import dotted, import_aliases

#: Names whose truth mypy decides before it reads a branch (a prefix matches their attributes).
DECIDED = ("TYPE_CHECKING", "typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING", "MYPY",
           "sys.version_info", "sys.platform")
NO_TYPE_CHECK = frozenset({"no_type_check", "typing.no_type_check", "typing_extensions.no_type_check",
                           "typing.no_type_check_decorator", "typing_extensions.no_type_check_decorator"})

def reveal_hidden_branches(text: str, nodes: list[ast.AST]) -> str:
    """``text`` with the conditions mypy decides wrapped in ``bool(...)`` and ``no_type_check``
    decorators blanked (see the module docstring); ``nodes`` are all nodes of its AST."""
    aliases = import_aliases(nodes)
    inserts: list[tuple[int, int, bytes]] = []  # (line, byte column, what goes there)
    blanks: list[ast.expr] = []
    for node in nodes:
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)) and _decided(node.test, aliases) \
                and not _plain_loop(node):
            test = node.test
            inserts += [(test.lineno, test.col_offset, b"bool("),
                        (test.end_lineno or test.lineno, test.end_col_offset or 0, b")")]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            blanks += [d for d in node.decorator_list if dotted(d, aliases) in NO_TYPE_CHECK]
    if not inserts and not blanks:
        return text
    lines = [line.encode("utf-8") for line in text.split("\n")]
    for row, col, what in sorted(inserts, reverse=True):
        lines[row - 1] = lines[row - 1][:col] + what + lines[row - 1][col:]
    for decorator in blanks:  # a decorator's lines hold no condition: the inserts left them as they were
        first = lines[decorator.lineno - 1]
        at = first.rfind(b"@", 0, decorator.col_offset)
        lines[decorator.lineno - 1] = first[:at] + b" " * (len(first) - at)
        for row in range(decorator.lineno, decorator.end_lineno or decorator.lineno):
            lines[row] = b""
    return "\n".join(line.decode("utf-8") for line in lines)


def _plain_loop(node: ast.AST) -> bool:
    """``while True:`` (or ``while 1:``) without ``else``: a loop, hiding nothing."""
    return isinstance(node, ast.While) and not node.orelse and isinstance(node.test, ast.Constant) \
        and bool(node.test.value)


def _decided(test: ast.expr, aliases: dict[str, str]) -> bool:
    """Whether mypy may decide ``test`` before reading the branches."""
    if isinstance(test, ast.Constant):
        return True
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _decided(test.operand, aliases)
    if isinstance(test, ast.BoolOp):
        return any(_decided(v, aliases) for v in test.values)
    if isinstance(test, ast.Compare):
        return any(_decided(v, aliases) for v in (test.left, *test.comparators)
                   if not isinstance(v, (ast.Constant, ast.Tuple)))
    if isinstance(test, ast.Subscript):
        return _decided(test.value, aliases)
    name = dotted(test, aliases)
    return name is not None and any(name == d or name.startswith(d + ".") for d in DECIDED)
