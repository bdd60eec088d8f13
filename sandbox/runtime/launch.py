"""A run's first process, from the fork to the solution: what it is told and what it does.

:class:`RunSpec` is plain data (it crosses to the fork server as JSON): the run's
limits, work dir and what to start.  :func:`enter` runs in the forked child,
whoever forked it (the worker or its fork server, :mod:`.forker`): it puts the
run's descriptors in place, locks the process in (:func:`.isolation.prepare_child`),
joins the run's accounting group, runs the untimed syntax gate of a module job,
and starts the target.  It never returns.

This module imports only what a run needs anyway, so that the fork server that
imports it stays small (a smaller parent is cheaper to fork and to exit from).
"""

from __future__ import annotations

import contextlib
import os
import traceback
from dataclasses import dataclass, field
from types import CodeType
from typing import Any, NoReturn

from . import compile_plain, harness, isolation, protocol, seccomp
from .accounting import RunGroup

MODULE_REPLY_FD = 4  # a module child's reply pipe (after stdin, stdout, stderr and requests)
TARGETS = ("exec", "program", "module", "syntax")
GO = b"1"  # the worker's word on a held run's pipe: the counter is on, start

# Pre-import what the LeetCode prelude pulls in, so forked runs get it free (whoever forks them).
exec(harness.LEETCODE_PRELUDE, {})  # nosec B102 - constant imports, no outside input


@dataclass
class RunSpec:
    """What one run's first process starts, and under which limits.

    ``target``: ``exec`` (``argv``, a compiled program or a tool), ``program`` (the Python
    file at ``path`` as ``__main__``), ``module`` (``path`` loaded as a call server, with
    the LeetCode ``prelude`` or not) or ``syntax`` (compile ``path``: exit 0, or 1 with
    the error on stderr).  ``gate``: check ``path``'s syntax first, untimed (module jobs).
    ``cpus``: widen the run's CPU affinity to these (a compiler under a pinned worker).
    ``hold``: the index among the run's descriptors of a pipe to wait on before ``exec``, until
    the worker has attached the instruction counter (:mod:`.pmu`) and says go.
    """

    target: str
    limits: isolation.ChildLimits
    workdir: str
    env: dict[str, str]
    path: str = ""
    argv: list[str] = field(default_factory=list)
    prelude: bool = False
    gate: bool = False
    deterministic: bool = False
    cpus: list[int] | None = None
    hold: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data, for the fork server's request (a shallow copy: this is on every run's path)."""
        return {**vars(self), "limits": vars(self.limits)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunSpec:
        """The spec :meth:`to_dict` wrote; ValueError for a target it does not know."""
        spec = cls(**{**data, "limits": isolation.ChildLimits(**data["limits"])})
        if spec.target not in TARGETS:
            raise ValueError(f"unknown run target {spec.target!r}")
        return spec


def enter(iso: isolation.Isolation, spec: RunSpec, group: RunGroup, pipe_fds: list[int]) -> NoReturn:
    """In the forked child: descriptors, isolation, the group, the gate, then the target."""
    group.adopt(_become_child(pipe_fds + group.descriptors)[len(pipe_fds):])
    try:
        _normal_scheduling()
        if spec.cpus:
            os.sched_setaffinity(0, spec.cpus)
        isolation.prepare_child(iso, spec.limits, spec.workdir, deterministic=spec.deterministic)
        group.join()
        if not iso.syscall_filter.startswith("none"):
            seccomp.install()
        code = group.untimed((lambda: _syntax_gate(spec.path, MODULE_REPLY_FD)) if spec.gate else None)
        _start(spec, code)
    except BaseException as exc:  # whatever stopped it, say so on the run's stderr
        os.write(2, could_not_start(exc).encode())
    os._exit(127)


def _normal_scheduling() -> None:
    """SCHED_OTHER, whatever the process that forked the run had (a worker defers to its runs:
    :func:`.supervise.defer_to_runs`); left as it is where it cannot be set."""
    with contextlib.suppress(OSError):
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def could_not_start(exc: BaseException) -> str:
    """What a run says on its stderr when ``exc`` stopped it before the solution started."""
    return f"sandbox: could not start the solution: {exc!r}\n"


def _start(spec: RunSpec, code: CodeType | None) -> None:
    """Start the target; a module job's solution as the gate compiled it (``code``)."""
    if spec.target == "exec":
        if spec.hold is not None:
            _await_go(spec.hold)
        os.execve(spec.argv[0], spec.argv, spec.env)  # nosec B606 - the job's own argv, in the sandboxed child
    if spec.target == "syntax":
        _check_syntax(spec.path)
    os.environ.clear()
    os.environ.update(spec.env)
    if spec.target == "module":
        harness.serve_module(spec.path, 3, MODULE_REPLY_FD, spec.prelude, code)
    harness.run_program(spec.path)


def _await_go(fd: int) -> None:
    """Wait for the worker's go on ``fd``; without one (the pipe closed first) do not start."""
    go = os.read(fd, 1)
    os.close(fd)
    if go != GO:
        raise RuntimeError("the worker did not attach the instruction counter")


def _become_child(fds: list[int]) -> list[int]:
    """Place the child's descriptors at 0, 1, 2, ... in order, close every other one; return them."""
    moved = [os.dup2(fd, 100 + index) for index, fd in enumerate(fds)]
    for index, fd in enumerate(moved):
        os.dup2(fd, index)
    os.closerange(len(fds), 1 << 16)
    return list(range(len(fds)))


def _compiled(path: str) -> tuple[CodeType | None, str | None]:
    """The Python file compiled (:func:`.compile_plain`), or what compiling it says is wrong
    with it, as Python prints it."""
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    try:
        return compile_plain(source, path), None
    except (SyntaxError, ValueError) as exc:  # a SyntaxError shows its line and where in it
        if isinstance(exc, SyntaxError):
            exc.filename = os.path.basename(path)
        return None, "".join(traceback.format_exception_only(type(exc), exc))


def _check_syntax(path: str) -> NoReturn:
    """The syntax-check child: the error on stderr and exit status 1, or exit status 0."""
    _, error = _compiled(path)
    if error is not None:
        os.write(2, error.encode())
        os._exit(1)
    os._exit(0)


def _syntax_gate(path: str, reply_fd: int) -> CodeType:
    """In a module job's child, before the solution loads: the file compiled, which the solution
    then runs from; if it does not compile, send the compile error the syntax-check child would
    have printed, as the child's first frame, and exit."""
    try:
        code, error = _compiled(path)
    except BaseException as exc:  # what enter() says of a child that fails before its target
        code, error = None, could_not_start(exc)
    if code is None:
        protocol.write_frame_fd(reply_fd, {"ok": False, "compile_error": error})
        os._exit(1)
    return code
