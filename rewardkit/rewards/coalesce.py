"""Concurrent per-item calls gathered into one batch call.

verl's reward loop scores one sample per call, all of a chunk's samples at once
(``verl/experimental/reward_loop/reward_loop.py``, ``RewardLoopWorker.compute_score_batch``
starts one task per sample; ``reward_manager/naive.py``, ``NaiveRewardManager.run_single``,
awaits a coroutine function, or runs a plain one in the event loop's default thread pool).
Scored one by one, a GRPO group loses the engine's de-duplication and parallelism.

A :class:`Coalescer` puts those calls back together: a call hands its item to a
dispatcher thread and waits (a thread blocks, a coroutine awaits).  Items that
arrive within ``window`` seconds of the first, or while a batch is being scored,
form the next batch (at most ``max_batch`` items; a burst gathers until no call has
joined it for ``window`` seconds, ``GATHER_S`` at most), which ``score_batch`` scores
in one call; each caller gets its own item's result.  When the batch call raises
an exception of an ``isolate`` type (one sample's malformed tests, say), the
batch is halved and each half scored again, so the callers whose items are fine
get their results and only the culprits get the exception; any other exception
(the service is down) goes to every caller of the batch.  Nothing is left
waiting: every item's future is settled whatever happens.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

log = logging.getLogger("rewardkit.rewards")

WINDOW_S = 0.01  # a burst is complete once no call has joined it for this long (verl starts them together)
GATHER_S = 0.1  # and the first call of a burst waits at most this long for the others
IDLE_S = 30.0  # the dispatcher thread ends after this long without calls (a new call starts another)


class Coalescer(Generic[T, R]):
    """Scores items handed in one at a time, from threads or coroutines, in batches.

    ``batches`` counts the calls of ``score_batch`` made (for tests and benchmarks).
    """

    def __init__(self, score_batch: Callable[[list[T]], Sequence[R]], *, window: float = WINDOW_S,
                 max_batch: int | None = None,
                 isolate: tuple[type[BaseException], ...] = (ValueError,),
                 name: str = "rewardkit-coalescer") -> None:
        if max_batch is not None and max_batch < 1:
            raise ValueError(f"max_batch must be at least 1, got {max_batch}")
        self._score_batch, self.window, self.max_batch = score_batch, window, max_batch
        self._isolate, self._name = isolate, name
        self.batches = 0
        self._reset()
        ref = weakref.ref(self)

        def after_fork() -> None:  # a forked child inherits the queue but not the thread: start afresh
            coalescer = ref()
            if coalescer is not None:
                coalescer._reset()

        os.register_at_fork(after_in_child=after_fork)

    def _reset(self) -> None:
        self._ready = threading.Condition()
        self._pending: list[tuple[T, Future[R]]] = []
        self._thread: threading.Thread | None = None

    # -- handing items in ----------------------------------------------------------------------
    def submit(self, item: T) -> Future[R]:
        """A future of ``item``'s result, settled once the batch it joins is scored."""
        future: Future[R] = Future()
        with self._ready:
            self._pending.append((item, future))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
                self._thread.start()
            self._ready.notify()
        return future

    def __call__(self, item: T) -> R:
        """``item``'s result, waiting in this thread (its exception, if it has one)."""
        return self.submit(item).result()

    async def score_async(self, item: T) -> R:
        """``item``'s result, awaited without blocking the event loop."""
        return await asyncio.wrap_future(self.submit(item))

    # -- the dispatcher thread ---------------------------------------------------------------------
    def _serve(self) -> None:
        me = threading.current_thread()
        fresh = True  # the first call of a burst started this thread
        while True:
            with self._ready:
                if not self._pending:  # nothing arrived while the last batch ran
                    if not self._ready.wait_for(lambda: bool(self._pending), timeout=IDLE_S):
                        if self._thread is me:
                            self._thread = None
                        return
                    fresh = True
            if fresh:
                self._gather()
            with self._ready:
                size = len(self._pending) if self.max_batch is None else self.max_batch
                batch, self._pending = self._pending[:size], self._pending[size:]
            self._settle(batch)
            fresh = False

    def _gather(self) -> None:
        """Wait while the burst grows (threads of a pool start one after another), up to GATHER_S."""
        deadline, seen = time.monotonic() + max(GATHER_S, self.window), 0
        while self.window > 0 and time.monotonic() < deadline:
            with self._ready:
                if len(self._pending) == seen:
                    return
                seen = len(self._pending)
            time.sleep(min(self.window, max(0.0, deadline - time.monotonic())))

    def _settle(self, batch: list[tuple[T, Future[R]]]) -> None:
        """Score ``batch`` and settle every future in it, whatever happens."""
        try:
            self.batches += 1
            results = list(self._score_batch([item for item, _ in batch]))
            if len(results) != len(batch):
                raise RuntimeError(f"the batch function gave {len(results)} results for "
                                   f"{len(batch)} items")
        except self._isolate as exc:
            if len(batch) == 1:
                batch[0][1].set_exception(exc)
                return
            middle = len(batch) // 2
            self._settle(batch[:middle])
            self._settle(batch[middle:])
            return
        except BaseException as exc:  # every caller must hear of it, never wait forever
            log.warning("a coalesced batch of %d failed: %r", len(batch), exc)
            for _, future in batch:
                future.set_exception(exc)
            return
        for (_, future), result in zip(batch, results, strict=True):
            future.set_result(result)
