"""Fair turns at the service's shared capacity, with a budget per request.

Every request holds a :class:`Ticket`.  Before each unit of work (one sandbox
job, one chunk of analysis) its threads take a turn at the matching
:class:`Lane`, which has a fixed number of slots.  A free slot goes to the
request that has waited longest since its last turn, so requests take turns
job by job: one with 256 jobs queued holds no more slots than one with a
single job, and a newcomer waits at most until one running job ends.  Each
ticket adds up how long its turns took, per lane; a request whose turns took
more than :data:`QUANTUM_S` longer than another waiting request's lets that
one go first (a slow request yields its turn), and a turn asked for past the
request's budget raises :class:`OverBudget`.  Closing the scheduler wakes every
waiting turn with :class:`Cancelled`; so does dropping one ticket (its client
went away) for that request's turns.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from ..sandbox import NotAdmitted

T = TypeVar("T")
QUANTUM_S = 1.0  # a request that has used this much more of a lane than another waiting one yields


class OverBudget(NotAdmitted):
    """The request has used its share of a lane (sandbox or analysis time): the work is not done.

    A sandbox job turned away is a ``sandbox_error`` (rewards leave its sample out), an
    analysis chunk gets infrastructure reports: the samples that did run keep their scores.
    """


class Cancelled(RuntimeError):
    """The service is stopping: work not yet started is not started."""


class Ticket:
    """One request's place in the lanes, and the seconds its turns took in each."""

    def __init__(self, budgets: dict[str, float]) -> None:
        self.budgets = budgets
        self.spent = dict.fromkeys(budgets, 0.0)
        self.dropped = False  # its client went away: no more turns
        self._lock = threading.Lock()

    def charge(self, lane: str, seconds: float) -> None:
        """Add a turn's duration to the request's account."""
        with self._lock:
            self.spent[lane] += seconds

    def check(self, lane: str) -> None:
        """OverBudget once the request has spent its budget in ``lane``."""
        if self.spent[lane] >= self.budgets[lane]:
            raise OverBudget(f"this request used its {self.budgets[lane]:g} s of {lane} time "
                             f"(the service's --max-{lane}-s) before this part of it; split the batch")

    def run(self, function: Callable[..., T], *args: Any) -> T:
        """Call ``function`` as this request: its turns are taken on this ticket."""
        token = CURRENT.set(self)
        try:
            return function(*args)
        finally:
            CURRENT.reset(token)


CURRENT: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar("rewardkit_ticket", default=None)


class Lane:
    """``slots`` units of work at once, handed out to requests in turn."""

    def __init__(self, name: str, slots: int) -> None:
        self.name, self.slots = name, slots
        self._free = slots
        # waiting turns, (number, arrival time), per ticket; the first ticket's first turn is next
        self._waiting: OrderedDict[Ticket, deque[tuple[int, float]]] = OrderedDict()
        self._numbers = itertools.count()
        self._changed = threading.Condition()
        self._closed = False

    @contextlib.contextmanager
    def turn(self, ticket: Ticket) -> Iterator[None]:
        """Wait for a slot in fair order, hold it, and charge the time held to ``ticket``."""
        ticket.check(self.name)
        self._acquire(ticket)
        started = time.monotonic()
        try:
            ticket.check(self.name)  # its other turns may have spent the budget meanwhile
            yield
        finally:
            ticket.charge(self.name, time.monotonic() - started)
            self._release()

    def _acquire(self, ticket: Ticket) -> None:
        with self._changed:
            mine = (next(self._numbers), time.monotonic())
            self._waiting.setdefault(ticket, deque()).append(mine)
            try:
                while not (self._closed or ticket.dropped) and \
                        not (self._free and self._next() == (ticket, mine)):
                    self._changed.wait()
            finally:
                self._leave(ticket, mine)
            if self._closed:
                raise Cancelled("the service is shutting down")
            if ticket.dropped:
                raise Cancelled("the client went away")
            self._free -= 1
            self._changed.notify_all()  # the next request in line may have a slot too

    def _next(self) -> tuple[Ticket, tuple[int, float]]:
        """The next turn: the first waiting request's (the one that waited longest since its last
        turn) that has used no more than :data:`QUANTUM_S` more of this lane than any other."""
        least = min(ticket.spent[self.name] for ticket in self._waiting)
        return next((ticket, turns[0]) for ticket, turns in self._waiting.items()
                    if ticket.spent[self.name] <= least + QUANTUM_S)

    def _leave(self, ticket: Ticket, turn: tuple[int, float]) -> None:
        """Take one waiting turn off; a request with more goes to the back of the line."""
        turns = self._waiting.pop(ticket)
        turns.remove(turn)
        if turns:
            self._waiting[ticket] = turns

    def _release(self) -> None:
        with self._changed:
            self._free += 1
            self._changed.notify_all()

    def close(self) -> None:
        """Refuse every waiting and future turn (running ones finish or are stopped by their owner)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def wake(self) -> None:
        """Let waiting turns look again (a ticket was dropped)."""
        with self._changed:
            self._changed.notify_all()

    def load(self) -> dict[str, Any]:
        """Slots, how many are taken, the turns waiting, by how many requests, and the longest wait."""
        with self._changed:
            waits = [turns[0][1] for turns in self._waiting.values()]
            return {"slots": self.slots, "running": self.slots - self._free,
                    "waiting": sum(len(turns) for turns in self._waiting.values()),
                    "waiting_requests": len(self._waiting),
                    "longest_wait_s": round(time.monotonic() - min(waits), 3) if waits else 0.0}


class Scheduler:
    """The service's lanes (``run``: sandbox jobs; ``analysis``: analysis chunks) and its tickets."""

    def __init__(self, slots: dict[str, int], budgets: dict[str, float]) -> None:
        self.lanes = {name: Lane(name, count) for name, count in slots.items()}
        self.budgets = budgets
        self._outside = Ticket(dict.fromkeys(budgets, float("inf")))  # work outside any request

    def ticket(self) -> Ticket:
        """A new request's ticket, with the service's budgets."""
        return Ticket(dict(self.budgets))

    def turn(self, lane: str) -> contextlib.AbstractContextManager[None]:
        """A turn in ``lane`` for the request this thread works for."""
        return self.lanes[lane].turn(CURRENT.get() or self._outside)

    def drop(self, ticket: Ticket) -> None:
        """Cancel the waiting and future turns of one request (its client went away)."""
        ticket.dropped = True
        for lane in self.lanes.values():
            lane.wake()

    def close(self) -> None:
        """Cancel every waiting and future turn."""
        for lane in self.lanes.values():
            lane.close()

    def load(self) -> dict[str, Any]:
        """Each lane's load."""
        return {name: lane.load() for name, lane in self.lanes.items()}
