"""Wire format between the parent and a worker, and the plain-data value codec.

Frames are a 4-byte big-endian length followed by UTF-8 JSON.  Values that
cross from untrusted code to a trusted process (return values in ``call`` and
``script`` mode) go through :func:`encode_value`, which accepts only exact
builtin types.  An object whose ``__eq__`` always says True, an ``int``
subclass with a patched comparison, or anything else that is not plain data
cannot survive the trip, so the comparison on the trusted side sees only real
values.

Integers of any size cross: one beyond JSON's exact range is sent in
hexadecimal (``{"int": "0x1f"}``), which converts in linear time and is not
subject to Python's limit on decimal digits (``sys.get_int_max_str_digits``);
a value the solution controls must not cost the trusted side quadratic time.
The older decimal form (``{"int": "31"}``) is still read, within that limit.
A long list of floats (and ints) crosses as packed doubles (``{"f64": ...}``), and a
list of scalars that JSON keeps exactly is checked as a whole, not item by
item: a value of a million items costs milliseconds, not a second.
"""

from __future__ import annotations

import array
import base64
import itertools
import json
import math
import operator
import os
import struct
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

MAX_FRAME = 256 * 1024 * 1024
REPLY_OVERHEAD = 1 << 20  # a worker reply's own fields: figures, stderr tail, messages
_HEADER = struct.Struct(">I")
LONG_INT_BITS = 14_000  # about 4,200 decimal digits: below Python's default limit of 4,300
PACKED_FLOATS = 64  # a list of at least this many numbers, floats among them, crosses packed (``f64``)


class ProtocolError(Exception):
    """The peer sent something that is not a frame, or went away."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """A message as one frame: length header, then compact JSON."""
    data = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return _HEADER.pack(len(data)) + data


def write_frame(stream: BinaryIO, message: dict[str, Any]) -> None:
    """Write one frame to a binary stream and flush it."""
    stream.write(encode_frame(message))
    stream.flush()


def read_frame(stream: BinaryIO) -> dict[str, Any]:
    """Read one frame; ProtocolError on EOF, an oversized frame, or a non-object body."""
    header = _read_exact(stream, _HEADER.size)
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ProtocolError(f"frame of {size} bytes exceeds the {MAX_FRAME} byte limit")
    return _parse(_read_exact(stream, size))


def _read_exact(stream: BinaryIO, size: int) -> bytes:
    chunks = []
    remaining = size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            raise ProtocolError("peer closed the stream")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def reply_limit(output_kb: int) -> int:
    """The largest frame a worker may send in a job whose output cap is ``output_kb`` KiB.

    A reply carries at most the run's capped output, JSON-escaped (a byte
    becomes at most six, ``\\u0000``), and one reply frame of the solution's,
    which the worker caps near the output limit too; the rest is small.
    """
    return 8 * output_kb * 1024 + REPLY_OVERHEAD


def write_frame_fd(fd: int, message: dict[str, Any]) -> None:
    """Write a frame to a raw file descriptor (used by forked children)."""
    view = memoryview(encode_frame(message))
    while view:
        written = os.write(fd, view)
        view = view[written:]


class FrameBuffer:
    """Accumulates bytes read from a pipe and yields complete frames.

    :meth:`pop` refuses a frame over ``limit`` bytes as soon as its header
    arrives, and a body that is not a JSON object, with ProtocolError.  A
    reader that pops after every :meth:`feed` therefore holds at most one
    frame plus one chunk; one that does not bounds :attr:`pending` itself.
    """

    def __init__(self, limit: int = MAX_FRAME) -> None:
        self._data = bytearray()
        self.limit = limit
        self.popped_bytes = 0  # the size of every frame popped so far, headers included

    @property
    def pending(self) -> int:
        """How many bytes are held, not yet popped as frames."""
        return len(self._data)

    def feed(self, chunk: bytes) -> None:
        """Append bytes read from the pipe."""
        self._data += chunk

    def pop(self) -> dict[str, Any] | None:
        """The next complete frame, or None while it is still incomplete."""
        if len(self._data) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self._data)
        if size > self.limit:
            raise ProtocolError(f"frame of {size} bytes exceeds the {self.limit} byte limit")
        end = _HEADER.size + size
        if len(self._data) < end:
            return None
        with memoryview(self._data) as view:
            body = bytes(view[_HEADER.size : end])
        del self._data[:end]
        self.popped_bytes += end
        return _parse(body)


def _parse(body: bytes) -> dict[str, Any]:
    """A frame's body as a dict; ProtocolError for anything else."""
    try:
        message = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # JSON and UTF-8 errors are ValueErrors
        raise ProtocolError(f"a frame that is not JSON: {exc}") from exc
    if not isinstance(message, dict):
        raise ProtocolError("a frame must hold a JSON object")
    return message


class NotPlainData(TypeError):
    """A value that is not made of exact builtin types."""


def encode_value(value: Any, depth: int = 0) -> Any:
    """Turn plain Python data into JSON, keeping tuples, sets, bytes and odd floats.

    Only exact builtin types pass (``type(x) is int``, not ``isinstance``), so
    user classes and subclasses of builtins are rejected with NotPlainData.
    """
    if depth > 200:
        raise NotPlainData("value nested deeper than 200 levels")
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if abs(value) < 2**53 else {"int": hex(value)}
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind is list:
        kinds = set(map(type, value))  # the items' exact types, at C speed
        if float in kinds and kinds <= {int, float} and len(value) >= PACKED_FLOATS \
                and (kinds == {float} or (min(value) > -(2**53) and max(value) < 2**53)):
            return {"f64": _pack_numbers(value, kinds)}
        flat = _flat_list(value, kinds)
        return flat if flat is not None else [encode_value(item, depth + 1) for item in value]
    if kind is tuple:
        return {"tuple": [encode_value(item, depth + 1) for item in value]}
    if kind in (set, frozenset):
        items = [encode_value(item, depth + 1) for item in value]
        items.sort(key=lambda item: json.dumps(item, sort_keys=True))
        return {kind.__name__: items}
    if kind is dict:
        return {"dict": [[encode_value(k, depth + 1), encode_value(v, depth + 1)]
                         for k, v in value.items()]}
    if kind is bytes:
        return {"bytes": value.hex()}
    if kind is complex:
        return {"complex": [value.real, value.imag]}
    raise NotPlainData(f"a value of type {kind.__name__} is not plain data")


_TEXT_KINDS = frozenset({str, bool, type(None)})


def _flat_list(value: list[Any], kinds: set[type]) -> list[Any] | None:
    """A list of scalars that JSON keeps exactly, copied (``kinds``: its items' exact types),
    checked at C speed; None for any other list."""
    if kinds <= _TEXT_KINDS:
        return list(value)
    if kinds == {float}:
        return list(value) if all(map(math.isfinite, value)) else None
    if kinds == {int}:
        return list(value) if min(value) > -(2**53) and max(value) < 2**53 else None
    return None


def decode_value(data: Any) -> Any:
    """Inverse of :func:`encode_value`; never executes anything."""
    if isinstance(data, list):
        if not set(map(type, data)) & {list, dict}:  # scalars only: as JSON read them
            return list(data)
        return [decode_value(item) for item in data]
    if not isinstance(data, dict):
        return data
    if len(data) != 1:
        raise ProtocolError("malformed encoded value")
    ((tag, body),) = data.items()
    decoder = _DECODERS.get(tag)
    if decoder is None:
        raise ProtocolError(f"unknown value tag {tag!r}")
    return decoder(body)


def _pack_numbers(value: list[Any], kinds: set[type]) -> str | list[str]:
    """Floats (and ints exact as doubles) as little-endian IEEE doubles in base64, and, if
    there are ints, a byte per item saying which: exact, and some 20 times faster both ways
    than decimal text in JSON (HumanEval/130 returns lists of a million)."""
    packed = array.array("d", value)
    if sys.byteorder == "big":
        packed.byteswap()
    doubles = base64.b64encode(packed.tobytes()).decode("ascii")
    if kinds == {float}:
        return doubles
    ints = bytes(map(operator.is_, map(type, value), itertools.repeat(int)))
    return [doubles, base64.b64encode(ints).decode("ascii")]


def _unpack_numbers(body: Any) -> list[Any]:
    if isinstance(body, str):
        doubles, ints = body, None
    elif isinstance(body, list) and len(body) == 2 and all(isinstance(part, str) for part in body):
        doubles, ints = body
    else:
        raise ProtocolError("packed numbers are a base64 string, or two (the doubles, the int mask)")
    packed = array.array("d")
    packed.frombytes(base64.b64decode(doubles, validate=True))  # ValueError unless whole doubles
    if sys.byteorder == "big":
        packed.byteswap()
    numbers = packed.tolist()
    if ints is not None:
        mask = base64.b64decode(ints, validate=True)
        if len(mask) != len(numbers):
            raise ProtocolError("packed numbers: the int mask does not match them")
        for index in itertools.compress(range(len(numbers)), mask):
            numbers[index] = int(numbers[index])
    return numbers


def _int(body: Any) -> int:
    """``0x``-prefixed hexadecimal (any size, linear time) or decimal (the older form, digit-limited)."""
    if not isinstance(body, str):
        raise ProtocolError("an encoded int must be a string")
    hexadecimal = body.startswith(("0x", "-0x"))
    return int(body, 16) if hexadecimal else int(body)


def value_repr(value: Any, limit: int = 2000) -> str:
    """``repr(value)`` cut to about ``limit`` characters, safe for integers of any size.

    ``repr`` of an int past Python's digit limit raises (and is quadratic in
    its size); such an int is shown by its size and its hexadecimal value.
    """
    try:
        text = repr(value)
    except ValueError:  # an int too long for decimal, somewhere inside
        text = repr(_shown(value))
    return text if len(text) <= limit else text[:limit] + "..."


def has_long_int(value: Any, depth: int = 0) -> bool:
    """Whether plain data holds an int too long to write in decimal under Python's digit limit."""
    if depth > 200:
        return False
    if type(value) is int:
        return abs(value).bit_length() > LONG_INT_BITS
    if type(value) in (list, tuple, set, frozenset):
        return any(has_long_int(item, depth + 1) for item in value)
    if type(value) is dict:
        return any(has_long_int(k, depth + 1) or has_long_int(v, depth + 1) for k, v in value.items())
    return False


class _Big:
    """Shows an integer too long for decimal: its digit count (from its bit length) and hex."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __repr__(self) -> str:
        digits = int(abs(self.value).bit_length() * 0.30103) + 1
        return f"<int of about {digits} digits: {hex(self.value)[:40]}...>"


def _shown(value: Any, depth: int = 0) -> Any:
    if depth > 200:
        return ...
    if type(value) is int and abs(value).bit_length() > LONG_INT_BITS:
        return _Big(value)
    if type(value) in (list, tuple, set, frozenset):
        return type(value)(_shown(v, depth + 1) for v in value)
    if type(value) is dict:
        return {_shown(k, depth + 1): _shown(v, depth + 1) for k, v in value.items()}
    return value


# How decode_value rebuilds each tagged form that encode_value writes.
_DECODERS: dict[str, Callable[[Any], Any]] = {
    "int": _int,
    "float": float,
    "tuple": lambda body: tuple(decode_value(item) for item in body),
    "set": lambda body: {decode_value(item) for item in body},
    "frozenset": lambda body: frozenset(decode_value(item) for item in body),
    "dict": lambda body: {decode_value(k): decode_value(v) for k, v in body},
    "bytes": bytes.fromhex,
    "f64": _unpack_numbers,
    "complex": lambda body: complex(body[0], body[1]),
}
