"""pytest modules in ``pytest`` suites: which tests a module holds, and the verdict on a run.

The sandbox runs the module against the solution with
:mod:`.runtime.pytest_runner`, which sends, each bearing the run's nonce, the
tests it collected, the modules it could not collect, one frame per test run
and a last ``done`` frame; the worker keeps the frames with its nonce.  This
module reads them.  The pass rate is the tests that passed over the tests
there are: those collected, and never fewer than the test functions the
module defines (:func:`test_names`), so a solution that keeps tests from
being collected (a failed import, a hook that deselects them) does not shrink
the count.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from typing import Any

from .types import Status

# A failed test whose exception is one of these failed the test's assertion (a wrong answer);
# any other exception is a runtime error.
ASSERTIONS = frozenset({"AssertionError", "Failed"})


@dataclass(frozen=True)
class Verdict:
    """A run's verdict: its status (None when the run's outcome, a limit or a crash, decides),
    the tests passed and the tests there are, and a message on the first failure."""

    status: Status | None
    passed: int
    total: int
    message: str = ""


@functools.lru_cache(maxsize=256)
def test_names(source: str) -> tuple[str, ...]:
    """The tests a module defines as pytest finds them by default: its ``test*`` functions, and
    the ``test*`` methods of its ``Test*`` classes that have no ``__init__`` (``Class::method``).
    Empty when the source does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            names.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            methods = [m.name for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if "__init__" not in methods:
                names += [f"{node.name}::{m}" for m in methods if m.startswith("test")]
    return tuple(dict.fromkeys(names))


def verdict(frames: list[dict[str, Any]], names: tuple[str, ...], outcome: str) -> Verdict:
    """The verdict on one run, from the ``frames`` bearing its nonce, the module's ``names``
    (:func:`test_names`) and the run's ``outcome`` (``ok``, ``runtime_error``, ``timeout``...).

    PASSED when every collected test passed, every name is among them, and the runner said done;
    a failed assertion is a wrong answer, any other failure (a test that raised, a module the
    solution kept from loading, a run that ended early) a runtime error.
    """
    fault = next((f for f in frames if "fault" in f), None)
    if fault is not None:
        return Verdict(Status.SANDBOX_ERROR, 0, max(len(names), 1), str(fault["fault"]))
    listed: list[Any] = next((f["collected"] for f in frames if isinstance(f.get("collected"), list)), [])
    collected = [str(nodeid) for nodeid in listed]
    results = {str(f["test"]): f for f in frames if "test" in f and str(f["test"]) in collected}
    passed = [nodeid for nodeid in collected if results.get(nodeid, {}).get("result") == "passed"]
    total = max(len(collected), len(names), 1)
    seen = {_function(nodeid) for nodeid in passed}
    done = any(isinstance(f.get("done"), int) for f in frames)
    if outcome == "ok" and done and len(passed) == len(collected) == total and seen >= set(names):
        return Verdict(Status.PASSED, total, total)
    error = next((f for f in frames if "error" in f and "test" not in f), None)
    failure = next((results[n] for n in collected if n in results and results[n].get("result") != "passed"),
                   None)
    if outcome not in ("ok", "runtime_error"):
        return Verdict(None, len(passed), total)
    if failure is not None:
        status, message = _failed(failure)
        return Verdict(status, len(passed), total, message)
    if error is not None:
        return Verdict(Status.RUNTIME_ERROR, 0, total, f"Runtime error: the tests could not be "
                       f"collected ({error.get('error')}):\n{str(error.get('message', ''))[-2000:]}")
    if not done:
        return Verdict(Status.RUNTIME_ERROR, len(passed), total, "The run ended before every test had run "
                       "(did the solution end the process?).")
    missing = sorted(set(names) - seen)
    return Verdict(Status.WRONG_ANSWER, len(passed), total,
                   f"Wrong answer: tests not run: {', '.join(missing[:10]) or 'none collected'}")


def _function(nodeid: str) -> str:
    """A test's name as :func:`test_names` gives it: its node id without the module and the
    parameters (``test_solution.py::TestX::test_y[1]`` -> ``TestX::test_y``)."""
    return nodeid.split("::", 1)[-1].split("[", 1)[0]


def _failed(failure: dict[str, Any]) -> tuple[Status, str]:
    name, error = failure.get("test"), str(failure.get("error", ""))
    text = str(failure.get("message", ""))[-2000:]
    if failure.get("result") == "skipped":
        return Status.WRONG_ANSWER, (f"Wrong answer: test {name} was skipped (a skipped test does "
                                     f"not pass):\n{text}")
    if error in ASSERTIONS:
        return Status.WRONG_ANSWER, f"Wrong answer: test {name} failed:\n{text}"
    return Status.RUNTIME_ERROR, f"Runtime error in test {name}:\n{text}"
