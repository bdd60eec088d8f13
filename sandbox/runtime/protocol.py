"""Wire format between the parent and a worker, and the plain-data value codec.

Frames are a 4-byte big-endian length followed by UTF-8 JSON.  Values that
cross from untrusted code to a trusted process (return values in ``call`` and
``script`` mode) go through :func:`encode_value`, which accepts only exact
builtin types.  An object whose ``__eq__`` always says True, an ``int``
subclass with a patched comparison, or anything else that is not plain data
cannot survive the trip, so the comparison on the trusted side sees only real
values.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Callable
from typing import Any, BinaryIO

MAX_FRAME = 256 * 1024 * 1024
REPLY_OVERHEAD = 1 << 20  # a worker reply's own fields: figures, stderr tail, messages
_HEADER = struct.Struct(">I")


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
        return value if abs(value) < 2**53 else {"int": str(value)}
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind is list:
        return [encode_value(item, depth + 1) for item in value]
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


def decode_value(data: Any) -> Any:
    """Inverse of :func:`encode_value`; never executes anything."""
    if isinstance(data, list):
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


# How decode_value rebuilds each tagged form that encode_value writes.
_DECODERS: dict[str, Callable[[Any], Any]] = {
    "int": int,
    "float": float,
    "tuple": lambda body: tuple(decode_value(item) for item in body),
    "set": lambda body: {decode_value(item) for item in body},
    "frozenset": lambda body: frozenset(decode_value(item) for item in body),
    "dict": lambda body: {decode_value(k): decode_value(v) for k, v in body},
    "bytes": bytes.fromhex,
    "complex": lambda body: complex(body[0], body[1]),
}
