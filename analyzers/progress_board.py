"""Where an analysis worker is, in a few bytes of shared memory: which tool, on which sources, since when.

A worker names the sources each tool turns to, for most tools every source in
turn: hundreds of times a second.  Sent over its pipe, each would wake the
parent; instead the worker writes its current turn into a small memory-mapped
file, and the parent reads it only when it checks a deadline.  A sequence
number written before (odd) and after (even) each turn lets the reader tell a
turn being written from a complete one (a seqlock); a worker killed while
writing leaves the turn before.
"""

from __future__ import annotations

import mmap
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_SEQUENCE = struct.Struct("<Q")
_TURN = struct.Struct("<d32si")  # since (monotonic seconds), tool name, number of positions
MAX_POSITIONS = 64  # more are written as "every source of the job" (-1)
SIZE = _SEQUENCE.size + _TURN.size + 4 * MAX_POSITIONS


@dataclass(frozen=True)
class Posted:
    """A turn as written: its sequence number, tool, job-local positions (None: all), start."""

    sequence: int
    tool: str
    positions: tuple[int, ...] | None
    since: float


class Board:
    """One worker's board: the worker writes turns, the parent reads the latest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        with path.open("r+b") as file:
            self._map = mmap.mmap(file.fileno(), SIZE)
        self._sequence = _SEQUENCE.unpack_from(self._map, 0)[0]

    @staticmethod
    def create(path: Path) -> Board:
        """A new, empty board at ``path``."""
        path.write_bytes(bytes(SIZE))
        return Board(path)

    def post(self, tool: str, positions: Sequence[int]) -> None:
        """Write the current turn (the worker's side)."""
        count = len(positions) if len(positions) <= MAX_POSITIONS else -1
        self._sequence += 1
        _SEQUENCE.pack_into(self._map, 0, self._sequence)
        _TURN.pack_into(self._map, _SEQUENCE.size, time.monotonic(), tool.encode()[:32], count)
        if count > 0:
            struct.pack_into(f"<{count}i", self._map, _SEQUENCE.size + _TURN.size, *positions)
        self._sequence += 1
        _SEQUENCE.pack_into(self._map, 0, self._sequence)

    def read(self) -> Posted | None:
        """The latest complete turn (the parent's side); None while one is being written."""
        sequence = _SEQUENCE.unpack_from(self._map, 0)[0]
        since, tool, count = _TURN.unpack_from(self._map, _SEQUENCE.size)
        positions = struct.unpack_from(f"<{max(count, 0)}i", self._map, _SEQUENCE.size + _TURN.size)
        if sequence % 2 or _SEQUENCE.unpack_from(self._map, 0)[0] != sequence:
            return None
        return Posted(sequence, tool.rstrip(b"\0").decode(), positions if count >= 0 else None, since)

    def discard(self) -> None:
        """Unmap the board and delete its file (the parent's side, once the worker is gone)."""
        self._map.close()
        self.path.unlink(missing_ok=True)
