"""Code that runs *inside* the sandboxed child to execute a Python solution.

Two shapes:

* :func:`run_program` executes the solution as ``__main__`` with the given
  stdin (``stdio`` mode).
* :func:`serve_module` executes the solution as a module and then answers
  call requests over a pipe (``call`` and ``script`` modes), one reply frame
  per call, a batch of calls one after the other.  It returns
  values through :func:`protocol.encode_value`; it never sees expected
  outputs, so nothing the solution does in this process can forge a verdict.

The same functions run in a child forked from the warm worker (fast path) and
in a freshly exec'd interpreter (``python -c ... main()``, used under valgrind
for the instruction meter and inside containers).
"""

from __future__ import annotations

import builtins
import collections
import contextlib
import io
import os
import sys
import traceback
import types
import typing
from typing import Any

from . import apps, compile_plain, protocol

MODULE_NAME = "solution"
MAX_NODES = 1_000_000
RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))
EDGE_FRAMES = 10  # a longer traceback keeps this many frames at each end (a RecursionError's 1000)

# LeetCode's Python environment makes these names available without imports;
# Mercury and Venus solutions rely on that.
LEETCODE_PRELUDE = """
import bisect, collections, copy, functools, heapq, itertools, math, operator, random, re, string, sys
from bisect import *
from collections import *
from functools import *
from heapq import *
from itertools import *
from math import *
from typing import *
del pow  # math's two-argument pow must not hide the built-in pow(base, exp, mod)
"""


class ListNode:
    """Singly linked list node, as LeetCode defines it."""

    def __init__(self, val: Any = 0, next: ListNode | None = None) -> None:
        self.val = val
        self.next = next


class TreeNode:
    """Binary tree node, as LeetCode defines it."""

    def __init__(self, val: Any = 0, left: TreeNode | None = None,
                 right: TreeNode | None = None) -> None:
        self.val = val
        self.left = left
        self.right = right


def list_to_linked(values: list[Any] | None) -> ListNode | None:
    """Build a linked list from a Python list (``None`` or empty gives ``None``)."""
    head = tail = None
    for value in values or []:
        node = ListNode(value)
        if tail is None:
            head = tail = node
        else:
            tail.next = node
            tail = node
    return head


def linked_to_list(head: ListNode | None) -> list[Any]:
    """The values of a linked list; raises ValueError past 1,000,000 nodes (a cycle)."""
    out: list[Any] = []
    while head is not None:
        if len(out) >= MAX_NODES:
            raise ValueError("linked list longer than 1,000,000 nodes (a cycle?)")
        out.append(head.val)
        head = head.next
    return out


def list_to_tree(values: list[Any] | None) -> TreeNode | None:
    """Build a tree from LeetCode's level-order list (``None`` for gaps)."""
    if not values or values[0] is None:
        return None
    root = TreeNode(values[0])
    queue = [root]
    index = 1
    for node in queue:
        if index >= len(values):
            break
        for side in ("left", "right"):
            if index < len(values) and values[index] is not None:
                child = TreeNode(values[index])
                setattr(node, side, child)
                queue.append(child)
            index += 1
    return root


def tree_to_list(root: TreeNode | None) -> list[Any]:
    """LeetCode's level-order list of a tree, trailing ``None`` gaps dropped."""
    out: list[Any] = []
    queue: collections.deque[TreeNode | None] = collections.deque([root])
    queued = 1
    while queue:
        if queued > 2 * MAX_NODES:
            raise ValueError("tree larger than 1,000,000 nodes (a cycle?)")
        node = queue.popleft()
        if node is None:
            out.append(None)
            continue
        out.append(node.val)
        queue.extend((node.left, node.right))
        queued += 2
    while out and out[-1] is None:
        out.pop()
    return out


def to_plain(value: Any) -> Any:
    """Turn returned TreeNode/ListNode structures into their list forms."""
    if isinstance(value, TreeNode):
        return tree_to_list(value)
    if isinstance(value, ListNode):
        return linked_to_list(value)
    if type(value) in (list, tuple) and any(issubclass(kind, (TreeNode, ListNode))
                                            for kind in set(map(type, value))):  # C speed per item
        return type(value)(to_plain(v) for v in value)
    return value


def _fresh_stdio() -> None:
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8",
                                 errors="replace")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", write_through=False)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)


def _new_module(name: str, path: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__file__ = path
    module.__dict__["__builtins__"] = builtins
    sys.modules[name] = module
    return module


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code & 0xFF
    print(exc.code, file=sys.stderr)
    return 1


def _any_size_integers() -> None:
    """Lift Python's limit on decimal digits in the solution's own process.

    ``print(10**5000)`` and ``int(input())`` of a long number work as on
    judges whose Python predates the limit (3.10.7/3.11); the quadratic cost
    of converting falls on the solution's own time limit, never on a trusted
    process (values cross to those in hexadecimal: :mod:`.protocol`).
    """
    setter = getattr(sys, "set_int_max_str_digits", None)
    if setter is not None:
        setter(0)


def run_program(path: str) -> None:
    """Execute the file as ``__main__``; never returns."""
    _fresh_stdio()
    _any_size_integers()
    sys.argv = [path]
    status = 0
    try:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        module = _new_module("__main__", path)
        apps_source = apps.program_source(source)
        if apps_source is None:
            exec(compile_plain(source, path), module.__dict__)  # nosec B102 - runs the solution, sandboxed
        else:
            apps.run(apps_source, path, module.__dict__)
    except SystemExit as exc:
        status = _exit_code(exc)
    except BaseException as exc:
        sys.stderr.write(solution_traceback(exc, path))
        status = 1
    _flush()
    os._exit(status)


def serve_module(path: str, rpc_in: int, rpc_out: int, prelude: bool,
                 code: types.CodeType | None = None) -> None:
    """Execute the file as a module (``code``: already compiled from it), then answer call
    requests; never returns."""
    _fresh_stdio()
    _any_size_integers()
    sys.argv = [path]
    requests = os.fdopen(rpc_in, "rb", buffering=0)
    try:
        if code is None:
            with open(path, encoding="utf-8") as handle:
                code = compile_plain(handle.read(), path)
        module = _new_module(MODULE_NAME, path)
        namespace = module.__dict__
        if prelude:
            exec(LEETCODE_PRELUDE, namespace)  # nosec B102 - constant imports
            namespace.update(TreeNode=TreeNode, ListNode=ListNode)
        exec(code, namespace)  # nosec B102 - runs the solution, sandboxed
    except SystemExit as exc:
        _flush()
        os._exit(_exit_code(exc) or 1)
    except BaseException as exc:
        _reply(rpc_out, {"ok": False, "error": _describe(exc), "traceback": _tail(exc, path)})
        _flush()
        os._exit(1)
    names = sorted(k for k, v in namespace.items()
                   if getattr(v, "__module__", None) == MODULE_NAME and callable(v))
    _reply(rpc_out, {"ok": True, "names": names})
    nodes = mentions_nodes(code)
    while True:
        try:
            request = protocol.read_frame(requests)
        except protocol.ProtocolError:
            break
        for call in _calls(request):
            _reply(rpc_out, _answer(namespace, call, path, nodes))
    _flush()
    os._exit(0)


def _calls(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls one request asks for, in order: itself, or each of a batch's ``calls``
    (``{"name": ..., "calls": [{"args": ..., "return_arg": ...}, ...]}``), each answered by a frame."""
    batch = request.get("calls")
    if not isinstance(batch, list):
        return [request]
    return [{**call, "name": request.get("name")} for call in batch]


def _reply(fd: int, message: dict[str, Any]) -> None:
    _flush()
    protocol.write_frame_fd(fd, message)


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) < 2000 else text[:2000] + "..."


def _tail(exc: BaseException, path: str, limit: int = 4000) -> str:
    return solution_traceback(exc, path)[-limit:]


def solution_traceback(exc: BaseException, path: str) -> str:
    """The traceback a model is shown: the solution's own frames and the exception line.

    The frames of this harness (and of the boot code that started it) come
    before the solution's first frame and are dropped, as are any of the
    runtime's own frames further down (a ``TreeNode`` it built, say); what the
    solution called (the standard library, a package) stays.  The solution's
    file is named by its base name, not the sandbox's work dir.  A traceback
    longer than ``2 * EDGE_FRAMES`` frames (a ``RecursionError``) keeps both
    ends and says how many frames it left out.  Chained exceptions are
    shown as Python shows them.
    """
    return "".join(_exception_lines(exc, path, set()))


def _exception_lines(exc: BaseException, path: str, seen: set[int]) -> list[str]:
    seen.add(id(exc))
    lines: list[str] = []
    if exc.__cause__ is not None and id(exc.__cause__) not in seen:
        lines += _exception_lines(exc.__cause__, path, seen)
        lines.append("\nThe above exception was the direct cause of the following exception:\n\n")
    elif (exc.__context__ is not None and not exc.__suppress_context__
          and id(exc.__context__) not in seen):
        lines += _exception_lines(exc.__context__, path, seen)
        lines.append("\nDuring handling of the above exception, another exception occurred:\n\n")
    frames = _solution_frames(traceback.extract_tb(exc.__traceback__), path)
    if frames:
        lines.append("Traceback (most recent call last):\n")
        if len(frames) > 2 * EDGE_FRAMES:
            left_out = len(frames) - 2 * EDGE_FRAMES
            lines += traceback.StackSummary.from_list(frames[:EDGE_FRAMES]).format()
            lines.append(f"  ... {left_out} more frames ...\n")
            frames = frames[-EDGE_FRAMES:]
        lines += traceback.StackSummary.from_list(frames).format()
    if isinstance(exc, SyntaxError) and exc.filename == path:
        exc.filename = os.path.basename(path)  # a SyntaxError names its file in its own lines
    lines += traceback.format_exception_only(type(exc), exc)
    return lines


def _solution_frames(frames: traceback.StackSummary, path: str) -> list[traceback.FrameSummary]:
    """The frames from the solution's first one on, but the runtime's, the solution's file renamed."""
    first = next((index for index, frame in enumerate(frames) if frame.filename == path), len(frames))
    kept = []
    for frame in frames[first:]:
        if os.path.dirname(os.path.abspath(frame.filename)) == RUNTIME_DIR:
            continue
        if frame.filename == path:  # its source line is already read (extract_tb looks lines up)
            frame.filename = os.path.basename(path)
        kept.append(frame)
    return kept


def _answer(namespace: dict[str, Any], request: dict[str, Any], path: str, nodes: bool) -> dict[str, Any]:
    """Make one call; ``nodes``: the solution may take TreeNode or ListNode arguments
    (:func:`mentions_nodes`)."""
    try:
        target = _resolve(namespace, str(request["name"]))
        args = protocol.decode_value(request.get("args", []))
        kwargs = protocol.decode_value(request.get("kwargs", {"dict": []}))
        if nodes:
            args = _convert_args(target, args)
        value = target(*args, **kwargs)
        if value is None and request.get("return_arg") is not None:
            value = args[int(request["return_arg"])]
        return {"ok": True, "value": protocol.encode_value(to_plain(value))}
    except SystemExit as exc:
        return {"ok": False, "error": f"SystemExit({exc.code!r}) raised by the solution"}
    except protocol.NotPlainData as exc:
        return {"ok": False, "error": f"the solution returned something that is not plain data: {exc}"}
    except MemoryError:
        return {"ok": False, "error": "MemoryError", "memory": True}
    except BaseException as exc:
        return {"ok": False, "error": _describe(exc), "traceback": _tail(exc, path)}


def _resolve(namespace: dict[str, Any], name: str) -> Any:
    """``func`` or ``Class.method`` (a fresh instance per call, as LeetCode does).

    A bare name is a method of the solution's ``Solution`` class when that class
    defines it (LeetCode-style answers, as verl's and LiveCodeBench's harnesses
    call them), else the top-level function of that name.
    """
    owner, _, method = name.rpartition(".")
    if not owner:
        solution = namespace.get("Solution")
        if isinstance(solution, type) and callable(getattr(solution, name, None)):
            return getattr(solution(), name)
        if name not in namespace:
            raise NameError(f"the solution defines no {name!r} (as a function or a method of Solution)")
        return namespace[name]
    if owner not in namespace:
        raise NameError(f"the solution defines no class {owner!r}")
    return getattr(namespace[owner](), method)


def _convert_args(target: Any, args: list[Any]) -> list[Any]:
    """Build TreeNode/ListNode arguments where the signature asks for them."""
    converted = list(args)
    for index, kind in _node_arguments(target):
        if index >= len(converted):
            break
        if kind == "tree":
            converted[index] = list_to_tree(converted[index])
        elif converted[index] and isinstance(converted[index][0], list):
            converted[index] = [list_to_linked(v) for v in converted[index]]
        else:
            converted[index] = list_to_linked(converted[index])
    return converted


def mentions_nodes(code: types.CodeType) -> bool:
    """Whether the solution's code names TreeNode or ListNode anywhere: among the names it
    reads (an annotation ``Optional[TreeNode]``, nested classes and functions included) or in
    a string (a string annotation, or every annotation under ``from __future__ import
    annotations``).  When it does not, none of its parameters is annotated
    with one, and their type hints need not be read: reading them, once a run, costs more
    than a small call."""
    pending: list[Any] = [code]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "TreeNode" in item or "ListNode" in item:
                return True
        elif isinstance(item, types.CodeType):
            pending += item.co_names
            pending += item.co_consts
        elif isinstance(item, (tuple, frozenset)):  # a function's string annotations, as a tuple
            pending += item
    return False


_NODE_ARGUMENTS: dict[Any, tuple[tuple[int, str], ...]] = {}  # function -> what _node_arguments said


def _node_arguments(target: Any) -> tuple[tuple[int, str], ...]:
    """The positions of ``target``'s TreeNode ("tree") and ListNode ("list") parameters, in order;
    worked out once per function (reading type hints costs more than a small call)."""
    function = getattr(target, "__func__", target)  # a method of a fresh instance: its function
    try:
        known = _NODE_ARGUMENTS.get(function)
    except TypeError:  # not hashable: worked out on every call
        known = None
    if known is not None:
        return known
    try:
        hints = typing.get_type_hints(target)
    except Exception:
        hints = getattr(target, "__annotations__", {}) or {}
    code = getattr(target, "__code__", None)
    params = code.co_varnames[: code.co_argcount] if code is not None else ()
    if params and params[0] in ("self", "cls"):
        params = params[1:]
    found = []
    for index, param in enumerate(params):
        hint = str(hints.get(param, ""))
        if "TreeNode" in hint:
            found.append((index, "tree"))
        elif "ListNode" in hint:
            found.append((index, "list"))
    with contextlib.suppress(TypeError):
        _NODE_ARGUMENTS[function] = tuple(found)
    return tuple(found)


def main() -> None:
    """Entry point for an exec'd interpreter: ``program PATH`` or ``module PATH IN OUT [prelude]``."""
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "program":
        run_program(path)
    else:
        serve_module(path, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:] == ["prelude"])
