"""Rehearsing a trusted check, to learn the calls it will make before the solution runs.

Many HumanEval checks call the candidate in a loop, with arguments they draw
at random or compute (HumanEval/53 makes 100 such calls).  Made one at a
time, each call is a round trip from this process to the solution and back.
:mod:`.prefetch` reads only the literal calls a check opens with; a
rehearsal runs the check itself once beforehand, with a stand-in for the
candidate that writes each call down and returns :class:`Unknown`.  The calls
written down then go to the solution as one batch with the job's begin
request, and the real check is handed each answer as it makes the same call.

What keeps it exact:

* **Results never steer the rehearsal.**  Any use of an :class:`Unknown`
  (comparing it, adding to it, testing it, iterating it, passing it to a
  call) raises :class:`ResultUsed`.  Inside an ``assert`` this ends the
  assert as if it passed: the real assert either passes, and the check goes
  on as rehearsed, or fails, and the check stops there.  Anywhere else, the
  rehearsal stops: what the check does next may depend on that result.
* **Nothing else differs.**  The check draws from its own generator, seeded
  the same in both runs (:mod:`.check_random`).  Anything with an effect
  outside the check (printing, files, importing a module that is not known
  to be pure) stops the rehearsal before it happens, so the check's effects
  happen once, in the real run.  A check with ``try`` or ``with`` is not
  rehearsed: it could catch a failure that the rehearsal cannot see.
* **The real run checks.**  The calls written down are a guess that the
  judge verifies call by call (:class:`~.judge.Candidate`).  Should the real
  check make a different call, make more calls than a whole rehearsal
  did, or pass having made fewer, the job is run again from the start
  without a rehearsal, so no answer and no figure ever comes from a call
  the check did not make in that order.
"""

from __future__ import annotations

import ast
import builtins
import collections
import contextlib
import functools
import re
import sys
import time
from dataclasses import dataclass
from types import CodeType
from typing import Any, NoReturn, TypeVar

from .check_random import check_builtins
from .runtime import compile_plain, protocol
from .suite import SUITE_CACHE

# Modules a rehearsal may import: the standard library's pure ones (a check imports them
# again in its real run; importing twice has no effect).
PURE_MODULES = frozenset({
    "bisect", "cmath", "collections", "copy", "fractions", "functools", "heapq", "itertools",
    "math", "numbers", "operator", "random", "re", "statistics", "string", "typing"})
# Builtins with an effect outside the check, or that read the check's own variables: the
# rehearsal stops where one is called.
EFFECTS = ("print", "open", "input", "exec", "eval", "compile", "breakpoint", "exit", "quit",
           "help", "globals", "locals", "vars", "setattr", "delattr")
_ASSERT = "__rehearsal_assert__"
_KNOWN = "__rehearsal_known__"


class ResultUsed(BaseException):
    """The check used a result of the solution's (not an Exception: a check's ``except
    Exception`` must not swallow it)."""


class Stopped(BaseException):
    """The rehearsal can go no further: the check fails here, does something it must do only
    once, or makes a call it cannot write down."""


class Unknown:
    """What the candidate returns in a rehearsal: any use of it (each method named in
    :data:`_USES` and :data:`_OPERATORS`) raises :class:`ResultUsed`."""

    __slots__ = ()


def _used(self: Unknown, *args: Any, **kwargs: Any) -> NoReturn:
    raise ResultUsed


_USES = ("getattr", "call", "bool", "len", "iter", "contains", "getitem", "setitem", "delitem",
         "hash", "index", "int", "float", "complex", "round", "trunc", "floor", "ceil", "format",
         "str", "repr", "bytes", "abs", "neg", "pos", "invert", "eq", "ne", "lt", "le", "gt", "ge",
         "reduce", "reduce_ex", "copy", "deepcopy")
_OPERATORS = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow", "lshift",
              "rshift", "and", "or", "xor")  # each with its reflection (``__radd__``)
for _use in (*_USES, *_OPERATORS, *(f"r{name}" for name in _OPERATORS)):
    setattr(Unknown, f"__{_use}__", _used)


@dataclass(frozen=True, eq=False)
class Rehearsal:
    """The calls a rehearsed check made: each one's positional arguments as they were made
    (``calls``) and as the protocol encodes them (``encoded``, :func:`.protocol.encode_value`);
    and whether the rehearsal reached the end of the check (``whole``: it makes no other call
    while every assert passes).  Compared by identity: a kept one is handed out as itself."""

    calls: tuple[tuple[Any, ...], ...]
    encoded: tuple[list[Any], ...]
    whole: bool


@dataclass(frozen=True)
class _Code:
    definitions: CodeType | None
    check: CodeType


# A rehearsal that takes longer than this (CPU seconds of its thread) is not worth the round
# trips it saves (a few tenths of a millisecond each): its check is not rehearsed again.
BUDGET_S = 0.05
_GIVEN_UP: collections.OrderedDict[str, None] = collections.OrderedDict()  # checks, by source
# rehearsals that imported no random, by (check, definitions, entry, limit): the same for any seed
_SEEDLESS: collections.OrderedDict[tuple[str, str | None, str, int], Rehearsal] = collections.OrderedDict()


def give_up(check: str) -> None:
    """Rehearse ``check`` no more (it left its rehearsal, or took too long to rehearse); the
    latest :data:`SUITE_CACHE` such checks are kept."""
    _keep(_GIVEN_UP, check, None)


def _keep(kept: collections.OrderedDict[Any, Any], key: Any, value: Any) -> None:
    """``kept[key] = value``, the latest :data:`SUITE_CACHE` keys kept."""
    kept[key] = value
    while len(kept) > SUITE_CACHE:
        with contextlib.suppress(KeyError):  # another thread took the oldest first
            kept.popitem(last=False)


def rehearse(check: str, definitions: str | None, entry: str, seed: int, limit: int) -> Rehearsal | None:
    """Run ``check(candidate)`` once with a candidate that writes its calls down, at most
    ``limit`` of them, drawing random numbers from ``seed`` (:mod:`.check_random`); None when
    the check cannot be rehearsed (it has ``try`` or ``with``, asserts are compiled out, or it
    was given up, :func:`give_up`).  A rehearsal over :data:`BUDGET_S` gives its check up.

    A rehearsal that imported no ``random`` makes the same calls whatever the seed: it is
    kept (the latest :data:`SUITE_CACHE`) and handed out again, so that a check judged many
    times (a prompt's completions in a training step) is rehearsed once.  Were a kept one
    wrong, the check would leave it, and be judged again unrehearsed, as any other."""
    if check in _GIVEN_UP:
        return None
    key = (check, definitions, entry, limit)
    kept = _SEEDLESS.get(key)
    if kept is not None:
        return kept
    code = _rehearsal_code(check, definitions)
    if code is None:
        return None
    seeded: list[bool] = []
    started = time.thread_time()
    names = check_builtins(seed, _pure_import, _OVERRIDES, lambda: seeded.append(True))
    rehearsal = _rehearse(code, entry, limit, names)
    if time.thread_time() - started > BUDGET_S:
        give_up(check)
    elif not seeded:
        _keep(_SEEDLESS, key, rehearsal)
    return rehearsal


def _rehearse(code: _Code, entry: str, limit: int, builtins_: dict[str, Any]) -> Rehearsal:
    recorder = _Recorder(entry, limit)
    namespace: dict[str, Any] = {"__builtins__": builtins_, "__name__": "__check__",
                                 _ASSERT: _assert, _KNOWN: _known}
    try:
        if code.definitions is not None:
            exec(code.definitions, namespace)  # nosec B102 - the suite's trusted source, its effects stopped
        namespace[entry] = recorder
        exec(code.check, namespace)  # nosec B102 - the same
        namespace["check"](recorder)
    except (ResultUsed, Stopped, Exception):  # the real check goes on (or fails) from here on its own
        return recorder.rehearsal(whole=False)
    return recorder.rehearsal(whole=True)


class _Recorder:
    """The candidate in a rehearsal: writes each call down and returns an :class:`Unknown`."""

    def __init__(self, name: str, limit: int) -> None:
        self.__name__ = name
        self.calls: list[tuple[Any, ...]] = []
        self.encoded: list[list[Any]] = []
        self._limit = limit

    def __call__(self, *args: Any, **kwargs: Any) -> Unknown:
        if kwargs or len(self.calls) >= self._limit:
            raise Stopped
        try:  # plain data, no result in it: the same call each run
            encoded = protocol.encode_value(list(args))
        except (protocol.NotPlainData, ResultUsed) as exc:
            raise Stopped from exc
        self.calls.append(tuple(protocol.decode_value(encoded)))  # as made: the check may change them later
        self.encoded.append(encoded)
        return Unknown()

    def rehearsal(self, whole: bool) -> Rehearsal:
        """What was written down."""
        return Rehearsal(tuple(self.calls), tuple(self.encoded), whole)


def _assert(test: Any) -> None:
    """An ``assert``'s test in a rehearsal (``test`` evaluates it): a test that uses a result
    passes, one that fails without any ends the rehearsal (the real check fails there too)."""
    try:
        value = test()
    except ResultUsed:
        return
    if not isinstance(value, Unknown) and not value:
        raise Stopped


def _stop(*args: Any, **kwargs: Any) -> NoReturn:
    raise Stopped


def _known(value: Any) -> Any:
    """``value``, unless it is a result: the operands of ``is`` and ``is not`` (which no
    method of :class:`Unknown` can see) pass through this."""
    if isinstance(value, Unknown):
        raise ResultUsed
    return value


def _isinstance(value: Any, kinds: Any) -> bool:
    return isinstance(_known(value), kinds)


def _callable(value: Any) -> bool:
    return callable(_known(value))


def _id(value: Any) -> int:
    return id(_known(value))


# the builtins a rehearsal replaces: an effect stops it; these three, given a result, use it (_known)
_OVERRIDES = dict.fromkeys(EFFECTS, _stop) | {"isinstance": _isinstance, "callable": _callable, "id": _id}


def _pure_import(name: str, globals: Any = None, locals: Any = None,
                 fromlist: Any = (), level: int = 0) -> Any:
    if level != 0 or name.partition(".")[0] not in PURE_MODULES:
        raise Stopped
    return builtins.__import__(name, globals, locals, fromlist, level)


@functools.lru_cache(maxsize=SUITE_CACHE)
def _rehearsal_code(check: str, definitions: str | None) -> _Code | None:
    """The check and definitions compiled for a rehearsal (:func:`_rewrite`); None when they
    cannot be rehearsed."""
    if sys.flags.optimize:  # the real check makes no assert's calls
        return None
    sources = [source for source in (definitions, check) if source is not None]
    try:
        trees = [ast.parse(source) for source in sources]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if any(_UNSEEN.search(source) for source in sources) and any(
            isinstance(node, (ast.Try, ast.TryStar, ast.With, ast.AsyncWith, ast.NamedExpr))
            for tree in trees for node in ast.walk(tree)):
        return None
    compiled = [compile_plain(_rewrite(tree, _IDENTITY.search(source) is not None), "<rehearsal>")
                for tree, source in zip(trees, sources, strict=True)]
    return _Code(compiled[0] if definitions is not None else None, compiled[-1])


# what a source must hold for its tree to have what a rehearsal cannot see (``try``, ``with``,
# ``:=``), or an identity comparison: a tree is walked for these only then
_UNSEEN = re.compile(r"\btry\b|\bwith\b|:=")
_IDENTITY = re.compile(r"\bis\b")


def _rewrite(tree: ast.Module, identities: bool) -> ast.Module:
    """``tree`` with each ``assert test, message`` made ``__rehearsal_assert__(lambda: test)``
    and, with ``identities``, each operand of ``is`` and ``is not`` made
    ``__rehearsal_known__(operand)`` (which no method of :class:`Unknown` could see)."""
    _rewrite_asserts(tree.body)
    if identities:
        for node in ast.walk(tree):
            if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
                node.left, node.comparators = _checked(node.left), [_checked(c) for c in node.comparators]
    return tree


def _rewrite_asserts(body: list[ast.stmt]) -> None:
    """The asserts of a list of statements and of the statements nested in them, in place (an
    assert is a statement: only statement lists are walked, not expressions)."""
    for index, statement in enumerate(body):
        if isinstance(statement, ast.Assert):
            thunk = _at(ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                      defaults=[]), body=statement.test), statement)
            body[index] = _at(ast.Expr(value=_call(_ASSERT, thunk, statement)), statement)
            continue
        for inner in (getattr(statement, "body", None), getattr(statement, "orelse", None)):
            if isinstance(inner, list):
                _rewrite_asserts(inner)
        for case in getattr(statement, "cases", ()):  # match
            _rewrite_asserts(case.body)


def _checked(operand: ast.expr) -> ast.expr:
    return _call(_KNOWN, operand, operand)


def _call(name: str, argument: ast.expr, where: ast.AST) -> ast.Call:
    """``name(argument)``, placed where ``where`` is (no tree-wide location fixing needed)."""
    return _at(ast.Call(func=_at(ast.Name(id=name, ctx=ast.Load()), where), args=[argument], keywords=[]),
               where)


_Node = TypeVar("_Node", bound=ast.AST)


def _at(node: _Node, where: ast.AST) -> _Node:
    return ast.copy_location(node, where)
