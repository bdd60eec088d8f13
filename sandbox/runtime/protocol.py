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
from collections.abc import Callable, Mapping
from typing import Any, BinaryIO, Literal, TypedDict

MAX_FRAME = 256 * 1024 * 1024
# A job's limits where a begin message leaves one out: the defaults of ``rewardkit.sandbox.Limits``.
LIMIT_DEFAULTS: dict[str, float] = {"time_s": 10.0, "memory_mb": 1024, "output_kb": 8192,
                                    "compile_time_s": 60.0, "file_size_mb": 64}
REPLY_OVERHEAD = 1 << 20  # a worker reply's own fields: figures, stderr tail, messages
_HEADER = struct.Struct(">I")
LONG_INT_BITS = 14_000  # about 4,200 decimal digits: below Python's default limit of 4,300
VALUE_DEPTH = 200  # levels of containers a value may have to cross
# JSON nesting a solution's frame may have: a value level takes at most three ({"dict": [[k, v]]}),
# and the messages around it a few.  The worker refuses deeper ones (FrameBuffer's ``nesting``),
# so that no frame it passes on fails to parse in a process with a deeper stack of its own.
MAX_NESTING = 3 * VALUE_DEPTH + 8
PACKED_FLOATS = 64  # a list of at least this many numbers, floats among them, crosses packed (``f64``)
_U32 = next(code for code in "IL" if array.array(code).itemsize == 4)  # packed ints' indexes


class ProtocolError(Exception):
    """The peer sent something that is not a frame, or went away."""


class OversizedFrame(ProtocolError):
    """A frame header announcing more bytes than the reader takes in one frame."""


class JsonText(bytes):
    """The body of a frame that :class:`FrameBuffer` read and checked (a JSON object, not
    nested too deep), kept as its bytes so that it can be passed on without parsing it into
    objects and writing them out again."""


class JsonTexts(list[JsonText]):
    """A message's list of :class:`JsonText`: :func:`encode_frame` writes the items as they are."""


class _BeginOptions(TypedDict, total=False):
    language: str
    kind: Literal["program", "module"]
    limits: dict[str, float]  # LIMIT_DEFAULTS' names; ``cpu_total_s`` for a module's whole life
    meter: Literal["time", "instructions"]
    counter: str  # what counts instructions: "auto", "pmu" or "valgrind" (:mod:`.pmu`)
    prelude: bool  # module jobs: LeetCode's implicit imports (List, TreeNode...) come first
    tests: bool  # built with the language's own test runner (unittest mode)
    edition: str  # Rust's
    pytest: str  # pytest mode: the test module, run against the solution


class Begin(_BeginOptions):
    """Begin a job: write ``code`` into a fresh work dir and build it.  A ``program`` job is run
    once per ``Run``; a ``module`` job is loaded once in a call server and called."""

    op: Literal["begin"]
    code: str


class Run(TypedDict):
    """Run a program job once on ``stdin``."""

    op: Literal["run"]
    stdin: str


class _CallOptions(TypedDict, total=False):
    kwargs: Any
    return_arg: int | None  # in-place problems: answer with this argument after the call


class Call(_CallOptions):
    """Call ``name`` in a module job's call server (``args``, ``kwargs`` encoded values)."""

    op: Literal["call"]
    name: str
    args: Any


class _CallsOptions(TypedDict, total=False):
    budget_s: float


class Calls(_CallsOptions):
    """Make many calls of ``name`` (each ``{"args", "return_arg"}``); ``Results`` fetches what
    did not fit in the first reply; ``budget_s`` ends the batch when the suite's time is spent."""

    op: Literal["calls"]
    name: str
    calls: list[dict[str, Any]]


class Results(TypedDict):
    """The next part of a batch's results."""

    op: Literal["results"]


class End(TypedDict):
    """End the job: stop its processes, empty its work dir, report a module job's usage."""

    op: Literal["end"]


def encode_frame(message: Mapping[str, Any]) -> bytes:
    """A message as one frame: length header, then compact JSON.

    A value that is a :class:`JsonTexts` becomes a JSON array of its texts, copied byte for byte.
    """
    spliced = {key: value for key, value in message.items() if type(value) is JsonTexts}
    if not spliced:
        data = json.dumps(message, separators=(",", ":")).encode("utf-8")
        return _HEADER.pack(len(data)) + data
    plain = {key: value for key, value in message.items() if key not in spliced}
    parts = [json.dumps(plain, separators=(",", ":")).encode("utf-8")[:-1]]  # without its "}"
    for key, texts in spliced.items():
        comma = b"," if len(parts) > 1 or plain else b""
        parts += [comma, json.dumps(key).encode("utf-8"), b":[", b",".join(texts), b"]"]
    parts.append(b"}")
    return b"".join([_HEADER.pack(sum(map(len, parts))), *parts])


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


class ReadBuffer:
    """One buffer for every read of a descriptor, of up to ``size`` bytes at a time.

    ``os.read(fd, 1 << 20)`` makes a fresh 1 MiB object each time, which the C
    allocator maps, shrinks to what was read and unmaps again: three system
    calls and a page fault around a 50-byte reply.  Reading into one buffer
    costs the read alone.
    """

    def __init__(self, size: int) -> None:
        self._view = memoryview(bytearray(size))

    def read(self, fd: int) -> memoryview:
        """What one read of ``fd`` got (empty at end of file), valid until the next read;
        raises as ``os.read`` does."""
        return self._view[: os.readv(fd, [self._view])]


class FrameBuffer:
    """Accumulates bytes read from a pipe and yields complete frames.

    :meth:`pop` refuses a frame over ``limit`` bytes as soon as its header
    arrives, and a body that is not a JSON object, with ProtocolError.  A
    reader that pops after every :meth:`feed` therefore holds at most one
    frame plus one chunk; one that does not bounds :attr:`pending` itself.
    """

    def __init__(self, limit: int = MAX_FRAME, nesting: int | None = None) -> None:
        self._data = bytearray()
        self.limit = limit
        self.nesting = nesting  # frames nested deeper are refused (from an untrusted peer)
        self.popped_bytes = 0  # the size of every frame popped so far, headers included

    @property
    def pending(self) -> int:
        """How many bytes are held, not yet popped as frames."""
        return len(self._data)

    def feed(self, chunk: bytes | memoryview) -> None:
        """Append bytes read from the pipe."""
        self._data += chunk

    def pop(self) -> dict[str, Any] | None:
        """The next complete frame, or None while it is still incomplete."""
        body = self._take()
        return None if body is None else _parse(body, self.nesting)

    def pop_text(self) -> JsonText | None:
        """As :meth:`pop`, but the checked frame's body, as a :class:`JsonText`."""
        body = self._take()
        if body is None:
            return None
        _parse(body, self.nesting)
        return JsonText(body)

    def _take(self) -> bytes | None:
        if len(self._data) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self._data)
        if size > self.limit:
            raise OversizedFrame(f"frame of {size} bytes exceeds the {self.limit} byte limit")
        end = _HEADER.size + size
        if len(self._data) < end:
            return None
        with memoryview(self._data) as view:
            body = bytes(view[_HEADER.size : end])
        del self._data[:end]
        self.popped_bytes += end
        return body


def _parse(body: bytes, nesting: int | None = None) -> dict[str, Any]:
    """A frame's body as a dict; ProtocolError for anything else, or nested more than
    ``nesting`` levels deep."""
    try:
        message = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # JSON and UTF-8 errors are ValueErrors
        raise ProtocolError(f"a frame that is not JSON: {exc}") from exc
    if not isinstance(message, dict):
        raise ProtocolError("a frame must hold a JSON object")
    # only a body with that many brackets can nest that deep: counting them is C speed
    if nesting is not None and body.count(b"[") + body.count(b"{") > nesting \
            and _nesting(message) > nesting:
        raise ProtocolError(f"a frame nested more than {nesting} levels deep")
    return message


def _nesting(message: dict[str, Any]) -> int:
    """How many levels of JSON arrays and objects a parsed frame has, level by level (no
    recursion: the frame may be nested as deep as this process's stack allows)."""
    depth = 0
    level: list[Any] = [message]
    while level:
        depth += 1
        level = [child for node in level for child in (node.values() if type(node) is dict else node)
                 if type(child) in (list, dict)]
    return depth


class NotPlainData(TypeError):
    """A value that is not made of exact builtin types."""


def encode_value(value: Any, depth: int = 0) -> Any:
    """Turn plain Python data into JSON, keeping tuples, sets, bytes and odd floats.

    Only exact builtin types pass (``type(x) is int``, not ``isinstance``), so
    user classes and subclasses of builtins are rejected with NotPlainData.
    """
    if depth > VALUE_DEPTH:
        raise NotPlainData(f"value nested deeper than {VALUE_DEPTH} levels")
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if abs(value) < 2**53 else {"int": hex(value)}
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind is list:
        kinds = set(map(type, value))  # the items' exact types, at C speed
        if float in kinds and kinds <= _NUMBER_KINDS and len(value) >= PACKED_FLOATS:
            packed = _pack_numbers(value, kinds)
            if packed is not None:
                return {"f64": packed}
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
_NUMBER_KINDS = frozenset({int, float})


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
    """Inverse of :func:`encode_value`; never executes anything.  Data of the wrong shape
    (it may come from the solution's process) is a ProtocolError."""
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
    try:
        return decoder(body)
    except (TypeError, ValueError, LookupError, ArithmeticError) as exc:  # a body of the wrong shape
        raise ProtocolError(f"malformed {tag!r} value: {exc}") from None


def _pack_numbers(value: list[Any], kinds: set[type]) -> str | list[str] | None:
    """Floats (and ints exact as doubles) as little-endian IEEE doubles in base64 and, if
    there are ints, where they are (little-endian uint32 indexes in base64): exact, and some
    20 times faster both ways than decimal text in JSON (HumanEval/130 returns lists of a
    million).  None when an int is too large for a double to hold exactly."""
    doubles = _little_endian("d", value)
    if int not in kinds:
        return doubles
    positions = _int_positions(value)
    ints = list(map(value.__getitem__, positions))
    if min(ints) <= -(2**53) or max(ints) >= 2**53:
        return None
    return [doubles, _little_endian(_U32, positions)]


def _int_positions(value: list[Any]) -> list[int]:
    """The indexes of a list's ints, in order, at C speed: found one by one while they are
    few (``list.index`` skips the floats between them), else with a pass over every item."""
    types = list(map(type, value))
    positions: list[int] = []
    try:
        while len(positions) <= len(value) >> 4:
            positions.append(types.index(int, positions[-1] + 1 if positions else 0))
    except ValueError:  # no int after the last one found: that is all of them
        return positions
    return list(itertools.compress(range(len(types)), map(operator.is_, types, itertools.repeat(int))))


def _little_endian(typecode: str, items: list[Any]) -> str:
    """``items`` as a little-endian array of ``typecode``, in base64."""
    packed = array.array(typecode, items)
    if sys.byteorder == "big":
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")


def _from_little_endian(typecode: str, text: str) -> array.array[Any]:
    """Inverse of :func:`_little_endian`; ValueError unless ``text`` is base64 of whole items."""
    packed = array.array(typecode)
    packed.frombytes(base64.b64decode(text, validate=True))
    if sys.byteorder == "big":
        packed.byteswap()
    return packed


def _unpack_numbers(body: Any) -> list[Any]:
    if isinstance(body, str):
        doubles, ints = body, None
    elif isinstance(body, list) and len(body) == 2 and all(isinstance(part, str) for part in body):
        doubles, ints = body
    else:
        raise ProtocolError("packed numbers are a base64 string, or two (the doubles, the int indexes)")
    numbers = _from_little_endian("d", doubles).tolist()
    if ints is not None:
        for index in _from_little_endian(_U32, ints):
            if index >= len(numbers) or not numbers[index].is_integer():
                raise ProtocolError("packed numbers: an int index that is not a whole number's")
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
    if depth > VALUE_DEPTH:
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
    if depth > VALUE_DEPTH:
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
