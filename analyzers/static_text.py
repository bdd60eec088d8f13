"""Static values of str and bytes expressions: what a program computes from its own literals.

``StaticText(nodes, limit).value(node)``, given all nodes of a module, is the str or bytes an expression
evaluates to when that follows from literals alone, else None.  It knows str,
bytes and int literals, f-strings, ``+`` and ``* n``, slices, lists, tuples,
one-loop comprehensions, names bound once in the module by a plain assignment,
the text methods that keep text about its size (``encode``, ``decode``,
``join``, ``replace``, the ``strip`` and case families), ``chr``, ``bytes``,
``bytearray``, ``str(b, encoding)``, ``bytes.fromhex``, ``map(chr, ...)``, and
the decoders of ``base64``, ``binascii``, ``codecs`` and ``zlib``/``gzip``/
``bz2``/``lzma``.  Every value is kept under ``limit`` characters, checked
before it is built where it could grow (a decompression bomb or ``"x" * 10**12``
costs nothing).  None means "cannot be known", never "harmless".
"""

from __future__ import annotations

import ast
import base64
import binascii
import bz2
import codecs
import lzma
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from .tools._astutil import bound_names, dotted, import_aliases

Value = str | bytes | int | tuple[Any, ...]

_TEXT_METHODS = frozenset({
    "encode", "decode", "strip", "lstrip", "rstrip", "lower", "upper", "swapcase", "casefold",
    "title", "capitalize", "removeprefix", "removesuffix",
})
_DECODERS: dict[str, Callable[..., bytes]] = {
    "base64.b64decode": base64.b64decode, "base64.standard_b64decode": base64.standard_b64decode,
    "base64.urlsafe_b64decode": base64.urlsafe_b64decode, "base64.b32decode": base64.b32decode,
    "base64.b32hexdecode": base64.b32hexdecode, "base64.b16decode": base64.b16decode,
    "base64.b85decode": base64.b85decode, "base64.a85decode": base64.a85decode,
    "base64.decodebytes": base64.decodebytes, "binascii.unhexlify": binascii.unhexlify,
    "binascii.a2b_hex": binascii.a2b_hex, "binascii.a2b_base64": binascii.a2b_base64,
    "bytes.fromhex": bytes.fromhex, "bytearray.fromhex": bytes.fromhex,
}
_DECOMPRESSORS = {"zlib.decompress": "zlib", "gzip.decompress": "gzip", "bz2.decompress": "bz2",
                  "lzma.decompress": "lzma"}
_FAILURES = (ValueError, TypeError, LookupError, UnicodeError, ArithmeticError, binascii.Error,
             zlib.error, lzma.LZMAError, EOFError, OSError, MemoryError, RecursionError)


class Unknown(Exception):
    """The expression's value does not follow from literals (or would be too large)."""


class StaticText:
    """Evaluates expressions of one module from its literals (see the module docstring)."""

    def __init__(self, nodes: list[ast.AST], limit: int) -> None:
        self._aliases = import_aliases(nodes)
        counts = Counter(name for node in nodes for name in bound_names(node))
        assignments = filter(None, map(_plain_assignment, nodes))
        self._bound_once = {name: value for name, value in assignments if counts[name] == 1}
        self._own = set(counts) - set(self._aliases)
        self._limit = limit
        self._resolving: set[str] = set()
        self._locals: dict[str, Value] = {}
        self._nodes: dict[type[ast.AST], Callable[[Any], Value]] = {
            ast.Constant: self._constant, ast.JoinedStr: self._joined, ast.BinOp: self._binop,
            ast.UnaryOp: self._unary, ast.List: self._sequence, ast.Tuple: self._sequence,
            ast.Name: self._name, ast.Subscript: self._subscript, ast.ListComp: self._comprehension,
            ast.GeneratorExp: self._comprehension, ast.Call: self._call,
        }
        self._functions: dict[str, Callable[..., Value]] = {
            **_DECODERS, **{name: self._decompressor(kind) for name, kind in _DECOMPRESSORS.items()},
            "codecs.decode": self._codec, "chr": lambda code: chr(_integer(code)),
            "bytes": self._bytes, "bytearray": self._bytes, "str": self._str,
        }

    def value(self, node: ast.expr) -> str | bytes | None:
        """The str or bytes ``node`` evaluates to, when literals decide it; else None."""
        try:
            found = self._eval(node)
        except (Unknown, *_FAILURES):
            return None
        return found if isinstance(found, (str, bytes)) else None

    def is_own(self, name: str) -> bool:
        """Whether the module binds ``name`` itself, other than by an import (a ``def exec`` or
        ``eval = ...`` is not the builtin)."""
        return name in self._own

    def binding(self, name: str) -> ast.expr | None:
        """The value of ``name`` if the module binds it once, by a plain assignment."""
        return self._bound_once.get(name)

    def dotted(self, node: ast.expr) -> str | None:
        """``node``'s dotted name with imports resolved (``b64.b64decode`` -> ``base64.b64decode``)."""
        return dotted(node, self._aliases)

    # -- expressions --------------------------------------------------------------------------------
    def _eval(self, node: ast.expr) -> Value:
        handler = self._nodes.get(type(node))
        if handler is None:
            raise Unknown
        return handler(node)

    def _sized(self, value: Value) -> Value:
        self._check_size(abs(value).bit_length() // 8 if isinstance(value, int) else len(value))
        return value

    def _check_size(self, size: int) -> None:
        if size > self._limit:
            raise Unknown

    def _constant(self, node: ast.Constant) -> Value:
        if not isinstance(node.value, (str, bytes, int)) or isinstance(node.value, bool):
            raise Unknown
        return self._sized(node.value)

    def _joined(self, node: ast.JoinedStr) -> Value:
        return self._sized("".join(self._formatted(part) for part in node.values))

    def _formatted(self, part: ast.expr) -> str:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            return part.value
        if isinstance(part, ast.FormattedValue) and part.format_spec is None and part.conversion in (-1, 115):
            return str(self._eval(part.value))
        raise Unknown

    def _binop(self, node: ast.BinOp) -> Value:
        left, right = self._eval(node.left), self._eval(node.right)
        if isinstance(node.op, ast.Add) and type(left) is type(right):
            if not isinstance(left, int):
                self._check_size(len(left) + len(right))  # type: ignore[arg-type]
            return left + right  # type: ignore[operator]
        if isinstance(node.op, ast.Mult):
            text, times = (left, right) if isinstance(right, int) else (right, left)
            if isinstance(text, int):
                raise Unknown
            self._check_size(len(text) * max(_integer(times), 0))
            return text * _integer(times)
        raise Unknown

    def _unary(self, node: ast.UnaryOp) -> Value:
        if not isinstance(node.op, ast.USub):
            raise Unknown
        return -_integer(self._eval(node.operand))

    def _sequence(self, node: ast.List | ast.Tuple) -> Value:
        return self._sized(tuple(self._eval(e) for e in node.elts))

    def _name(self, node: ast.Name) -> Value:
        name = node.id
        if name in self._locals:
            return self._locals[name]
        if name in self._resolving or name not in self._bound_once:
            raise Unknown
        self._resolving.add(name)
        try:
            return self._eval(self._bound_once[name])
        finally:
            self._resolving.discard(name)

    def _subscript(self, node: ast.Subscript) -> Value:
        value = self._eval(node.value)
        if not isinstance(value, (str, bytes, tuple)):
            raise Unknown
        if not isinstance(node.slice, ast.Slice):
            return value[_integer(self._eval(node.slice))]
        bounds = (node.slice.lower, node.slice.upper, node.slice.step)
        return value[slice(*(None if b is None else _integer(self._eval(b)) for b in bounds))]

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> Value:
        (loop,) = node.generators
        if loop.ifs or loop.is_async or not isinstance(loop.target, ast.Name):
            raise Unknown
        out = []
        for item in _items(self._eval(loop.iter)):
            self._locals[loop.target.id] = item
            try:
                out.append(self._eval(node.elt))
            finally:
                self._locals.pop(loop.target.id, None)
        return self._sized(tuple(out))

    # -- calls ----------------------------------------------------------------------------------------
    def _call(self, node: ast.Call) -> Value:
        name = self.dotted(node.func)
        if name == "map":
            return self._map(node)
        args, kwargs = self._arguments(node)
        if name in self._functions:
            return self._sized(self._functions[name](*args, **kwargs))
        if isinstance(node.func, ast.Attribute):
            return self._method(node.func.attr, self._eval(node.func.value), args, kwargs)
        raise Unknown

    def _arguments(self, node: ast.Call) -> tuple[list[Value], dict[str, Value]]:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise Unknown
        kwargs = {k.arg: self._eval(k.value) for k in node.keywords if k.arg}
        return [self._eval(a) for a in node.args], kwargs

    def _map(self, node: ast.Call) -> Value:
        if len(node.args) != 2 or self.dotted(node.args[0]) != "chr":
            raise Unknown
        return self._sized(tuple(chr(_integer(v)) for v in _items(self._eval(node.args[1]))))

    def _method(self, name: str, receiver: Value, args: list[Value], kwargs: dict[str, Value]) -> Value:
        if not isinstance(receiver, (str, bytes)) or name not in _TEXT_METHODS | {"join", "replace"}:
            raise Unknown
        self._check_size(_grown_size(name, receiver, args))
        return self._sized(getattr(receiver, name)(*args, **kwargs))

    def _bytes(self, value: Value, *rest: Value) -> bytes:
        if isinstance(value, int):  # bytes(n): n zero bytes, as large as n
            raise Unknown
        return bytes(value, *rest)  # type: ignore[arg-type]

    @staticmethod
    def _str(value: Value, *rest: Value) -> str:
        if rest and not isinstance(value, bytes):
            raise Unknown
        return str(value, *rest) if rest else str(value)

    def _codec(self, data: Value, encoding: Value = "utf-8", errors: Value = "strict") -> Value:
        if not isinstance(encoding, str) or not isinstance(errors, str):
            raise Unknown
        kind = codecs.lookup(encoding).name.removesuffix("_codec")
        if kind in ("zlib", "bz2"):
            return self._decompressor(kind)(data)
        return codecs.decode(data, encoding, errors)  # type: ignore[arg-type]

    def _decompressor(self, kind: str) -> Callable[..., bytes]:
        def decompress(data: Value, wbits: Value = zlib.MAX_WBITS) -> bytes:
            if not isinstance(data, bytes):
                raise Unknown
            bound = self._limit + 1
            if kind == "bz2":
                out = bz2.BZ2Decompressor().decompress(data, max_length=bound)
            elif kind == "lzma":
                out = lzma.LZMADecompressor().decompress(data, max_length=bound)
            else:
                out = zlib.decompressobj(31 if kind == "gzip" else _integer(wbits)).decompress(data, bound)
            self._check_size(len(out))
            return out

        return decompress


def _grown_size(name: str, receiver: str | bytes, args: list[Value]) -> int:
    """An upper bound of the size of ``receiver.name(*args)`` when it can grow (join, replace)."""
    if name == "join" and args and isinstance(args[0], (str, bytes, tuple)):
        parts = args[0]
        return sum(len(p) for p in parts if isinstance(p, (str, bytes))) + len(receiver) * len(parts)
    if name == "replace" and len(args) >= 2:
        return _replaced_size(receiver, args[0], args[1])
    return 0  # the other methods keep text about its size; it is checked once built


def _replaced_size(text: str | bytes, old: Value, new: Value) -> int:
    if not isinstance(old, type(text)) or not isinstance(new, type(text)):
        raise Unknown
    hits = text.count(old) if old else len(text) + 1  # type: ignore[arg-type]
    return len(text) + hits * len(new)


def _integer(value: Value) -> int:
    if not isinstance(value, int):
        raise Unknown
    return value


def _items(value: Value) -> Iterator[Value]:
    if not isinstance(value, (str, bytes, tuple)):
        raise Unknown
    return iter(value)


def _plain_assignment(node: ast.AST) -> tuple[str, ast.expr] | None:
    """``(name, value)`` of ``name = value`` or ``name: T = value``, else None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        target, value = node.target, node.value
    else:
        return None
    return (target.id, value) if isinstance(target, ast.Name) else None
