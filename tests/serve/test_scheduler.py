"""The service's scheduler on its own: turns go round the requests, budgets stop a request,
closing cancels what waits, and the load it reports is what is happening."""

from __future__ import annotations

import threading
import time

import pytest

from rewardkit.serve.scheduler import Cancelled, Lane, OverBudget, Scheduler, Ticket

UNLIMITED = {"run": float("inf")}


def wait_until(condition: object, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


def test_a_free_slot_goes_to_the_request_that_waited_longest() -> None:
    """A holds the only slot with three more turns queued; B queues one turn after them.
    B's turn comes second, not fourth."""
    lane = Lane("run", 1)
    a, b = Ticket(UNLIMITED), Ticket(UNLIMITED)
    order: list[str] = []
    gate = threading.Event()

    def take(name: str, ticket: Ticket, hold: threading.Event | None = None) -> None:
        with lane.turn(ticket):
            order.append(name)
            if hold is not None:
                hold.wait()

    holder = threading.Thread(target=take, args=("a0", a, gate))
    holder.start()
    wait_until(lambda: lane.load()["running"] == 1)
    waiting = [threading.Thread(target=take, args=(f"a{i}", a)) for i in (1, 2, 3)]
    for thread in waiting:
        thread.start()
    wait_until(lambda: lane.load()["waiting"] == 3)
    late = threading.Thread(target=take, args=("b0", b))
    late.start()
    wait_until(lambda: lane.load()["waiting"] == 4)
    assert lane.load()["waiting_requests"] == 2
    gate.set()
    for thread in (holder, *waiting, late):
        thread.join(5)
    assert order[:3] == ["a0", "a1", "b0"], order


def test_a_request_past_its_budget_gets_no_more_turns() -> None:
    lane = Lane("run", 2)
    ticket = Ticket({"run": 0.05})
    with lane.turn(ticket):
        time.sleep(0.06)
    assert ticket.spent["run"] >= 0.05
    with pytest.raises(OverBudget, match=r"0\.05 s of run time"), lane.turn(ticket):
        pass
    assert lane.load()["running"] == 0


def test_closing_cancels_waiting_and_later_turns() -> None:
    scheduler = Scheduler({"run": 1}, UNLIMITED)
    ticket = scheduler.ticket()
    outcome: list[str] = []
    release = threading.Event()

    def hold() -> None:
        with scheduler.turn("run"):
            release.wait()

    def wait_for_turn() -> None:
        try:
            with scheduler.turn("run"):
                outcome.append("ran")
        except Cancelled:
            outcome.append("cancelled")

    holder = threading.Thread(target=ticket.run, args=(hold,))
    holder.start()
    wait_until(lambda: scheduler.load()["run"]["running"] == 1)
    waiter = threading.Thread(target=wait_for_turn)
    waiter.start()
    wait_until(lambda: scheduler.load()["run"]["waiting"] == 1)
    scheduler.close()
    waiter.join(5)
    assert outcome == ["cancelled"]
    release.set()
    holder.join(5)
    with pytest.raises(Cancelled), scheduler.turn("run"):
        pass


def test_the_load_reports_the_longest_wait() -> None:
    lane = Lane("run", 1)
    gate = threading.Event()
    first, second = Ticket(UNLIMITED), Ticket(UNLIMITED)

    def hold(ticket: Ticket) -> None:
        with lane.turn(ticket):
            gate.wait()

    threads = [threading.Thread(target=hold, args=(t,)) for t in (first, second)]
    threads[0].start()
    wait_until(lambda: lane.load()["running"] == 1)
    threads[1].start()
    wait_until(lambda: lane.load()["waiting"] == 1)
    time.sleep(0.2)
    load = lane.load()
    assert load["slots"] == 1 and load["waiting_requests"] == 1 and load["longest_wait_s"] >= 0.2
    gate.set()
    for thread in threads:
        thread.join(5)
    assert lane.load() == {"slots": 1, "running": 0, "waiting": 0, "waiting_requests": 0,
                           "longest_wait_s": 0.0}
