"""Runs a ``pytest`` suite in the sandbox and reports each test's verdict on a channel of its own.

The work dir holds the solution as ``solution.py`` and the suite's tests as
``test_solution.py``.  Before pytest is imported, and so before the tests
import the solution, :func:`main` reads a nonce from descriptor 3 (one frame:
a 4-byte big-endian length, then ``{"nonce": "..."}``) and closes it.  The
plugin it gives ``pytest.main`` keeps the nonce and the frame writer
(``os.write`` on descriptor 4, taken before the solution loads) in closures
and writes, each frame bearing the nonce: a ``collected`` frame naming the
tests once collection ends, an ``error`` frame for each module that could not
be collected (the solution failed to import, a name is missing), one frame per
test run, and a last ``done`` frame when pytest returns.  The worker keeps only
frames with its nonce (:func:`.worker._test_verdicts`); pytest's summary and exit
code are not read.

A test passes only when this plugin saw it run: its hook wrappers around the
setup, call and teardown of each test, and around the call of the test
function itself, registered before collection, saw each of them return
without an exception.  A test that raised anything (``sys.exit`` included),
was skipped or never called its function did not pass.  So printing a fake
summary, ending the process early (``os._exit(0)``: no ``done`` frame),
writing frames without the nonce, or replacing ``_pytest.runner``'s functions
after import (the hooks they would call then never run) does not pass a test.

What this does not stop: code in the same process that finds the nonce in
memory (``gc``, the plugin's closures) and writes frames with it, or that
changes the test functions or pytest's hook machinery itself (pluggy's
callers) so that a failing test is seen to return.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any

NONCE_FD, FRAME_FD = 3, 4
TESTS = "test_solution.py"
MESSAGE_CHARS = 2000
# pytest's own plugins this run does without: its cache and what writes files or sends output
DISABLED = ("cacheprovider", "stepwise", "pastebin", "junitxml")


def main() -> None:
    """Read the nonce, run pytest on ``test_solution.py`` with the reporting plugin, say done."""
    nonce = _read_nonce()
    send = _sender(os.write, FRAME_FD, nonce)
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        import pytest
    except ImportError as exc:
        send({"fault": f"pytest is not installed where the sandbox runs: {exc}"})
        sys.exit(3)
    plugin = _plugin(send, pytest)
    arguments = ["-q", "--no-header", "--tb=short", "-c", os.devnull, "--rootdir", os.getcwd(),
                 "--noconftest", "-o", "python_files=" + TESTS]
    for name in DISABLED:
        arguments += ["-p", f"no:{name}"]
    code = pytest.main([*arguments, TESTS], plugins=[plugin])
    send({"done": plugin.ran(), "exit_code": int(code)})


def _read_nonce() -> str:
    """The nonce frame from descriptor 3, which is closed then; exit 102 when it is not there."""
    data = b""
    try:
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = os.read(NONCE_FD, 4096)
            if not chunk or len(data) > 4096:
                break
            data += chunk
    except OSError:
        data = b""
    finally:
        with contextlib.suppress(OSError):
            os.close(NONCE_FD)
    text = data[4:].decode("ascii", "replace")
    nonce = text.rsplit('"', 2)[-2] if text.count('"') >= 4 else ""
    if not nonce.isalnum():
        sys.exit(102)
    return nonce


def _sender(write: Callable[[int, Any], int], fd: int, nonce: str) -> Callable[[dict[str, Any]], None]:
    """A function that writes one frame bearing ``nonce`` on ``fd``.  It encodes the frame itself
    (:func:`_encoder`), so the nonce is never handed to a function the solution could replace."""
    encode = _encoder()

    def send(fields: dict[str, Any]) -> None:
        data = encode({"nonce": nonce, **fields}).encode("utf-8", "replace")
        view = memoryview(len(data).to_bytes(4, "big") + data)
        while view:
            view = view[write(fd, view):]

    return send


def _encoder(isinstance: Any = isinstance, str: Any = str, int: Any = int, bool: Any = bool,
             list: Any = list, dict: Any = dict) -> Callable[[Any], Any]:
    """JSON text of plain data (str, int, list, dict), written with the builtins bound when this
    module loads (defaults), before the solution can replace them or the ``json`` module."""
    escapes = {ord('"'): '\\"', ord("\\"): "\\\\", **{c: f"\\u{c:04x}" for c in range(32)}}

    def encode(value: Any) -> Any:
        if isinstance(value, str):
            return '"' + value.translate(escapes) + '"'
        if isinstance(value, bool) or value is None:
            return {True: "true", False: "false", None: "null"}[value]
        if isinstance(value, int):
            return int.__repr__(value)
        if isinstance(value, list):
            return "[" + ",".join([encode(item) for item in value]) + "]"
        if isinstance(value, dict):
            pairs = [encode(str(key)) + ":" + encode(item) for key, item in value.items()]
            return "{" + ",".join(pairs) + "}"
        return encode(str(value))

    return encode


def _plugin(send: Callable[[dict[str, Any]], None], pytest: Any,
            isinstance: Any = isinstance, str: Any = str, type: Any = type) -> Any:
    """The plugin object: hook wrappers that watch each test and send its verdict.  What it
    calls of the builtins is bound when this module loads (defaults), before the solution runs."""
    hookimpl: Callable[..., Callable[[Callable[..., Any]], Callable[..., Any]]] = pytest.hookimpl
    skipped = pytest.skip.Exception
    seen: dict[str, dict[str, Any]] = {}  # nodeid -> phases seen: name -> exception or None
    count = [0]
    phases = ("setup", "call", "function", "teardown")

    def phase(item: Any, name: str, excinfo: Any) -> None:
        seen.setdefault(item.nodeid, {})[name] = None if excinfo is None else excinfo[1]

    class Plugin:
        @hookimpl(hookwrapper=True)
        def pytest_runtest_setup(self, item: Any) -> Any:
            outcome = yield
            phase(item, "setup", outcome.excinfo)

        @hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item: Any) -> Any:
            outcome = yield
            phase(item, "call", outcome.excinfo)

        @hookimpl(hookwrapper=True)
        def pytest_pyfunc_call(self, pyfuncitem: Any) -> Any:
            outcome = yield
            phase(pyfuncitem, "function", outcome.excinfo)

        @hookimpl(hookwrapper=True)
        def pytest_runtest_teardown(self, item: Any) -> Any:
            outcome = yield
            phase(item, "teardown", outcome.excinfo)

        @hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item: Any) -> Any:
            seen.pop(item.nodeid, None)
            yield
            count[0] += 1
            send(verdict(item.nodeid, seen.pop(item.nodeid, {})))

        @hookimpl(tryfirst=True)
        def pytest_collectreport(self, report: Any) -> None:
            if report.failed:
                send({"error": report.nodeid or TESTS,
                      "message": str(report.longreprtext)[-MESSAGE_CHARS:]})

        @hookimpl(trylast=True)
        def pytest_collection_finish(self, session: Any) -> None:
            send({"collected": [str(item.nodeid) for item in session.items]})

        def ran(self) -> int:
            return count[0]

    def verdict(nodeid: str, seen_phases: dict[str, Any]) -> dict[str, Any]:
        failure = None
        for name in phases:
            if name not in seen_phases:
                return {"test": nodeid, "result": "failed", "error": "NotRun",
                        "message": f"the test's {name} was not seen to run"}
            if seen_phases[name] is not None:
                failure = seen_phases[name]
                break
        if failure is None:
            return {"test": nodeid, "result": "passed"}
        if isinstance(failure, skipped):
            return {"test": nodeid, "result": "skipped", "message": str(failure)[-MESSAGE_CHARS:]}
        kind = str(type(failure).__name__)
        return {"test": nodeid, "result": "failed", "error": kind,
                "message": f"{kind}: {failure}"[-MESSAGE_CHARS:]}

    return Plugin()
