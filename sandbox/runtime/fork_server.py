"""The fork server: a small process beside the worker that forks the worker's runs.

Forking from the worker itself has two costs that grow with the worker: every
page the worker writes while a run lives is copied (the worker is busy then,
relaying calls and sampling memory; about 450 pages a HumanEval job), and the
fork and the run's exit copy and tear down the page tables of everything the
worker imported.  This process imports only what a run needs, freezes its heap
and then does nothing but fork, so the worker's pages are never shared and a
run starts from a smaller image.

The worker (:mod:`.fork_client`) starts it in its own namespaces and talks to it
over a socket pair, one request and one reply at a time: a byte that says what
is asked, a JSON object and descriptors alongside (``H``, hello, is answered once
the server is ready):

``S``  spawn: ``spec`` (:class:`.launch.RunSpec`), with the run's pipes and its group's
       descriptors (:attr:`.RunGroup.descriptors`): fork the run in a fresh pid namespace;
       the reply holds its ``pid``, with a pidfd alongside
``R``  reap: wait for run ``pid`` (which has ended or been killed) and answer its wait
       status and rusage; until then its pid cannot be reused

It is used only where a run's cost does not depend on who forked it (a cgroup
per run; a pid namespace per run, so that a run's processes end with it).
It dies with the worker (``PR_SET_PDEATHSIG``), and its runs with it.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys
from typing import Any, NoReturn

from . import isolation, launch
from .accounting import RunGroup
from .mounts import libc

PR_SET_PDEATHSIG = 1
MESSAGE_BYTES = 1 << 16  # a request or reply is at most this long
MAX_FDS = 16  # descriptors that come with a request

HELLO, SPAWN, REAP = b"H", b"S", b"R"  # a request is one of these bytes, then a JSON object


class Server:
    """Forks runs on request and reaps them when told to.

    Between a fork and the run's exit every page this process writes is copied, so the
    parent's side of a spawn does as little as it can: the request is read by the child.
    """

    def __init__(self, iso: isolation.Isolation, sock: socket.socket) -> None:
        self.iso = iso
        self.sock = sock
        self.runs: set[int] = set()

    def handle(self, request: bytes, fds: list[int]) -> tuple[bytes | None, list[int]]:
        """Answer one request: a JSON reply and the descriptors to send with it (None: the
        spawned run answers for itself)."""
        op, body = request[:1], request[1:]
        if op == HELLO:
            return b'{"ok": true}', []
        if op == SPAWN:
            return self.spawn(body, fds)
        if op == REAP:
            return json.dumps(self.reap(int(json.loads(body)["pid"]))).encode(), []
        return json.dumps({"ok": False, "error": f"unknown request {op!r}"}).encode(), []

    def spawn(self, body: bytes, fds: list[int]) -> tuple[None, list[int]]:
        """Fork one run of the ``spec`` in ``body``; the run sends the reply (:func:`enter_spawned`)."""
        self.runs.add(isolation.fork_run(lambda: enter_spawned(self.iso, self.sock, body, fds)))
        return None, []

    def reap(self, pid: int) -> dict[str, Any]:
        """Wait for run ``pid`` and answer how it ended."""
        if pid not in self.runs:
            return {"ok": False, "error": f"{pid} is not a run of this server"}
        self.runs.discard(pid)
        _, status, usage = os.wait4(pid, 0)
        return {"ok": True, "status": status, "utime": usage.ru_utime, "stime": usage.ru_stime,
                "maxrss": usage.ru_maxrss}


def enter_spawned(iso: isolation.Isolation, sock: socket.socket, body: bytes, fds: list[int]) -> NoReturn:
    """In a spawned run's first process: answer the spawn with a pidfd of this process, then
    read the request and start the run (never returns).

    The run answers, not the server, so that the server writes next to nothing while the
    run shares its pages.  ``body``: the ``spec`` and how many of ``fds`` are ``pipes`` and
    how many the group's (``joins``, :attr:`.RunGroup.descriptors`).  A request that does
    not fit is said on the run's stderr, as a run that could not start is.
    """
    try:
        pidfd = os.pidfd_open(os.getpid())  # this process, in its own pid namespace
        socket.send_fds(sock, [b'{"ok": true}'], [pidfd])
    except BaseException:  # a forked child never returns to the server's loop
        os._exit(127)  # the worker's wait for the answer times out
    try:
        request = json.loads(body)
        spec = launch.RunSpec.from_dict(request["spec"])
        pipes, joins = int(request["pipes"]), int(request["joins"])
        if len(fds) != pipes + joins:
            raise ValueError(f"{len(fds)} descriptors for {pipes} pipes and {joins} of the group")
    except BaseException as exc:  # a forked child never returns to the server's loop
        if len(fds) > 2:
            os.write(fds[2], launch.could_not_start(exc).encode())
        os._exit(127)
    launch.enter(iso, spec, RunGroup.forked(fds[pipes:]), fds[:pipes])


def serve(sock: socket.socket, server: Server) -> None:
    """Answer requests until the worker closes its end."""
    while True:
        try:
            request, fds, _, _ = socket.recv_fds(sock, MESSAGE_BYTES, MAX_FDS)
        except OSError:
            return
        if not request:
            return
        sent: list[int] = []
        reply: bytes | None
        try:
            reply, sent = server.handle(request, fds)
        except (OSError, ValueError, KeyError, TypeError) as exc:  # answered; the server goes on
            reply = json.dumps({"ok": False, "error": repr(exc)}).encode()
        finally:
            for fd in fds:
                os.close(fd)
        if reply is None:
            continue
        try:
            socket.send_fds(sock, [reply], sent)
        finally:
            for fd in sent:
                os.close(fd)


def main() -> None:
    """``argv[1]``, JSON: the worker's ``pid``, the socket's descriptor ``fd`` and its ``iso``."""
    setup = json.loads(sys.argv[1])
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != int(setup["worker"]):  # the worker died before the line above
        return
    iso = isolation.Isolation.from_dict(setup["iso"])
    if not isolation.pid_namespace_per_run_works():
        raise SystemExit("fork server: no pid namespace per run here")
    with socket.socket(fileno=int(setup["fd"])) as sock:
        gc.collect()
        gc.freeze()  # runs then copy fewer pages
        serve(sock, Server(iso, sock))


if __name__ == "__main__":
    main()
