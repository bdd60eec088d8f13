"""The worker's end of its fork server (:mod:`.fork_server`): start it, ask for runs, reap them."""

from __future__ import annotations

import json
import os
import socket
import subprocess  # nosec B404 - starts our own fork server, with a fixed argv
import sys
from types import SimpleNamespace
from typing import Any

from . import boot_code, isolation
from .accounting import RunGroup
from .fork_server import HELLO, MAX_FDS, MESSAGE_BYTES, REAP, SPAWN
from .launch import RunSpec

ANSWER_S = 30.0  # the fork server (or a run it spawned) answers a request within this


class ForkServerError(RuntimeError):
    """The fork server refused a request or is gone."""


class ForkClient:
    """A running fork server, and the socket the worker asks it through."""

    def __init__(self, iso: isolation.Isolation) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        setup = {"worker": os.getpid(), "fd": theirs.fileno(), "iso": iso.to_dict()}
        runtime_dir = os.path.dirname(os.path.abspath(__file__))
        argv = [sys.executable, "-s", "-c", boot_code(runtime_dir, "fork_server"), json.dumps(setup)]
        with theirs:
            self.process = subprocess.Popen(argv, pass_fds=[theirs.fileno()],  # nosec B603 - our argv
                                            stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno())
        self._sock = ours
        self._sock.settimeout(ANSWER_S)
        self.pid = self.process.pid
        try:
            self._ask(HELLO, {})  # answered once the server is ready
        except ForkServerError:
            self.close()
            raise

    def spawn(self, spec: RunSpec, pipe_fds: list[int], group: RunGroup) -> tuple[int, int]:
        """Fork a run of ``spec`` with these pipes and group; its pid and a pidfd (ours to close)."""
        joins = group.descriptors
        _, fds = self._ask(SPAWN, {"spec": spec.to_dict(), "pipes": len(pipe_fds), "joins": len(joins)},
                           [*pipe_fds, *joins])
        if len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise ForkServerError(f"the fork server sent {len(fds)} descriptors with a run, not 1")
        return _pid_of(fds[0]), fds[0]

    def reap(self, pid: int) -> tuple[int, Any]:
        """Wait for run ``pid`` to be reaped: its wait status and its rusage (as ``os.wait4``'s)."""
        reply, _ = self._ask(REAP, {"pid": pid})
        usage = SimpleNamespace(ru_utime=float(reply["utime"]), ru_stime=float(reply["stime"]),
                                ru_maxrss=int(reply["maxrss"]))
        return int(reply["status"]), usage

    def pin(self, cpus: set[int]) -> None:
        """Pin the server, and so every run it forks from now on, to ``cpus``."""
        os.sched_setaffinity(self.pid, cpus)

    def close(self) -> None:
        """Stop the server (it ends when its socket closes, or is killed past that) and wait for it."""
        self._sock.close()
        try:
            self.process.wait(ANSWER_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _ask(self, op: bytes, message: dict[str, Any],
             fds: list[int] | None = None) -> tuple[dict[str, Any], list[int]]:
        try:
            socket.send_fds(self._sock, [op + json.dumps(message).encode()], fds or [])
            data, received, _, _ = socket.recv_fds(self._sock, MESSAGE_BYTES, MAX_FDS)
        except OSError as exc:
            raise ForkServerError(f"the fork server is gone ({exc})") from exc
        if not data:
            raise ForkServerError(f"the fork server is gone (exit status {self.process.poll()})")
        reply = json.loads(data)
        if not reply.get("ok"):
            for fd in received:
                os.close(fd)
            raise ForkServerError(f"the fork server refused {op!r}: {reply.get('error')}")
        return reply, received


def _pid_of(pidfd: int) -> int:
    """The pid (in this process's pid namespace) of the process ``pidfd`` refers to."""
    with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii") as info:
        for line in info:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    raise ForkServerError("a run's pidfd does not say its pid")
