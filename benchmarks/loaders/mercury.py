"""Mercury (``Elfsong/Mercury``) as :class:`Problem` objects.

A Mercury record: ``id``, ``slug_name``, ``meta_info``, ``difficulty``
(``Easy``/``Medium``/``Hard``), ``pretty_content`` (a list of text parts),
``solutions`` (``[{"solution": code, "runtime": "44ms"}, ...]``, LeetCode
submissions), ``prompt`` (the ``class Solution`` stub), ``entry_point`` (the
method name), ``generator_code``, ``test_cases`` (JSON text of
``[{"input": [arg, ...], "expected": value}, ...]``), ``convert_online``,
``convert_offline`` and ``evaluate_offline``.

Mercury's own harness calls ``Solution().<entry_point>(*inputs)`` after
``convert_offline`` has built ``TreeNode``/``ListNode`` arguments from lists,
and ``evaluate_offline(inputs, outputs, expected)`` compares (lists back from
nodes where needed, or ``inputs[k]`` for problems that work in place).  Our
``call`` mode does the same: entry point ``Solution.<entry_point>``, nodes
built from the signature's type hints and turned back into lists, and
``return_arg = k`` where ``evaluate_offline`` judges ``inputs[k]``.  Where
it turns nodes back into lists, an expected ``[]`` (no nodes) becomes
``None``, which is how our harness reports a returned empty list or tree.  Mercury
keeps only problems whose answers are unique, so equality is the whole check.
The three sources are kept in ``extra`` as written.

Beyond@K normalises a runtime by the spread of the solutions' runtimes: each
solution's LeetCode runtime is parsed to milliseconds and kept in
``extra["reference_metadata"]`` (one ``{"runtime": "44ms", "runtime_ms": 44.0}``
per reference, in order) and in the reference's label; ``extra["runtime_ms"]``
holds ``[min, max]``.  Those are LeetCode's numbers from another machine; the
benchmark measures the references here and uses its own.
"""

from __future__ import annotations

import re
from typing import Any

from ...sandbox import TestSuite
from ...sandbox.suite import SuiteError
from ..problem import Problem, Reference
from .common import LoaderError, difficulty, json_field, sequence, text

SOURCE = "mercury"
KEYS = frozenset({"slug_name", "pretty_content"})
_RUNTIME = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$", re.IGNORECASE)
_IN_PLACE = re.compile(r"\binputs\s*\[\s*(\d+)\s*\]")
_NODES_TO_LIST = re.compile(r"\b(?:linkedList2Arr|binaryTree2Arr)\s*\(")


def is_mercury(record: dict[str, Any]) -> bool:
    """Whether a record has the Mercury schema's distinguishing keys."""
    return record.keys() >= KEYS


def parse_runtime_ms(value: Any) -> float | None:
    """LeetCode's runtime text (``"44ms"``, ``"1.5 s"``, ``44``) in milliseconds; None if unreadable."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    match = _RUNTIME.match(str(value))
    if not match:
        return None
    number = float(match.group(1))
    return number * 1000.0 if (match.group(2) or "ms").lower() == "s" else number


def in_place_argument(evaluate_offline: str) -> int | None:
    """The argument Mercury judges after the call (``inputs[k]`` in ``evaluate_offline``), if any."""
    match = _IN_PLACE.search(evaluate_offline or "")
    return int(match.group(1)) if match else None


def _title(record: dict[str, Any], slug: str) -> str:
    meta = record.get("meta_info")
    if isinstance(meta, dict):
        for key in ("title", "questionTitle"):
            if meta.get(key):
                return str(meta[key])
    return slug.replace("-", " ").title()


def _expected(value: Any, nodes: bool) -> Any:
    """Mercury turns an empty list or tree into ``[]``; our harness returns no node as ``None``."""
    return None if nodes and value == [] else value


def _cases(record: dict[str, Any], where: str, evaluate: str) -> list[dict[str, Any]]:
    return_arg, nodes = in_place_argument(evaluate), bool(_NODES_TO_LIST.search(evaluate))
    cases = []
    for case in sequence(json_field(record.get("test_cases"), "test_cases", where)):
        if not isinstance(case, dict) or "input" not in case:
            raise LoaderError(f"{where}: a test case needs 'input' and 'expected', got {case!r:.200}")
        args = case["input"]
        out: dict[str, Any] = {"args": args if isinstance(args, list) else [args],
                               "expected": _expected(case.get("expected", case.get("output")), nodes)}
        if return_arg is not None:
            out["return_arg"] = return_arg
        cases.append(out)
    return cases


def mercury_problem(record: dict[str, Any], source: str = SOURCE, where: str = "") -> Problem:
    """One Mercury record as a :class:`Problem` (see the module docstring for the mapping)."""
    slug = text(record.get("slug_name")).strip()
    where = where or f"mercury problem {slug or '?'}"
    entry = text(record.get("entry_point")).strip()
    if not slug or not entry:
        raise LoaderError(f"{where}: needs 'slug_name' and 'entry_point'")
    evaluate = text(record.get("evaluate_offline"))
    try:
        tests = TestSuite.from_dict({
            "mode": "call", "entry_point": entry if "." in entry else f"Solution.{entry}",
            "cases": _cases(record, where, evaluate)})
    except SuiteError as exc:
        raise LoaderError(f"{where}: its tests cannot be used: {exc}") from exc
    references, metadata = [], []
    for index, entry_data in enumerate(sequence(record.get("solutions"))):
        code = entry_data if isinstance(entry_data, str) else \
            str(entry_data.get("solution") or entry_data.get("code") or "")
        if not code.strip():
            continue
        runtime = None if isinstance(entry_data, str) else entry_data.get("runtime")
        runtime_ms = parse_runtime_ms(runtime)
        label = f"mercury #{index}" + (f", LeetCode runtime {runtime_ms:g} ms" if runtime_ms is not None
                                      else "")
        references.append(Reference(code, label))
        metadata.append({"runtime": runtime, "runtime_ms": runtime_ms})
    known = [m["runtime_ms"] for m in metadata if m["runtime_ms"] is not None]
    return Problem(
        problem_id=slug, statement=text(record.get("pretty_content")), tests=tests, language="python",
        title=_title(record, slug), starter_code=text(record.get("prompt")),
        difficulty=difficulty(record.get("difficulty")),
        tags=tuple(str(t) for t in sequence(record.get("tags"))), references=references, source=source,
        extra={"id": record.get("id"), "generator_code": text(record.get("generator_code")),
               "convert_offline": text(record.get("convert_offline")), "evaluate_offline": evaluate,
               "reference_metadata": metadata,
               "runtime_ms": [min(known), max(known)] if known else None})
