"""One evaluation per batch for the component functions a trainer calls one after another.

TRL calls each of ``reward.functions()`` on the same batch in turn, and drops a
row only when every function returns None for it.  So every function must see
the same evaluation of the batch: a sample left out (None) by one component is
left out by all, and a fault is not retried (and perhaps passed) between one
function and the next.  The first function of a batch evaluates every
component; the others take their values from that evaluation, which is
forgotten once each function has had its values, or when another batch comes.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

T = TypeVar("T")


def batch_key(completions: Sequence[Any], columns: dict[str, Any]) -> str:
    """A digest of a batch's completions and dataset columns."""
    blob = json.dumps([list(completions), columns], sort_keys=True, default=repr)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class SharedBatch(Generic[T]):
    """The evaluation of the current batch, shared by the functions named ``names``."""

    def __init__(self, names: Sequence[str]) -> None:
        self._names = frozenset(names)
        self._lock = threading.Lock()
        self._key: str | None = None
        self._value: T | None = None
        self._served: set[str] = set()

    def __getstate__(self) -> dict[str, Any]:
        """The names only: a copy starts with no batch and a lock of its own."""
        return {"names": self._names}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["names"])  # type: ignore[misc]

    def get(self, name: str, key: str, evaluate: Callable[[], T]) -> T:
        """The evaluation of batch ``key`` for function ``name``: made now if the batch is new to it."""
        with self._lock:
            if key != self._key or name in self._served or self._value is None:
                self._key, self._value, self._served = key, evaluate(), set()
            value = self._value
            self._served.add(name)
            if self._served == self._names:
                self._key, self._value = None, None
            return value
