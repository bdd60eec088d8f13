"""Venus (``Elfsong/Venus_Python``, the Afterburner paper's dataset) as :class:`Problem` objects.

A Venus record: ``problem_id`` (int), ``title``, ``question_content``,
``difficulty``, ``tags``, ``code_prompt`` (the ``class Solution`` stub),
``test_case_generator``, ``test_case_evaluator``, ``test_case_runners``,
``test_cases`` and ``solutions``.

Venus judges through stdin/stdout, not through calls: ``test_cases`` is JSON
text of ``[{"input": str, "output": str}, ...]``; ``test_case_runners`` is a
Python program with the placeholder ``==Code Submission==`` where the solution
goes, which reads a case from stdin, calls ``Solution`` and prints the answer;
``test_case_evaluator`` defines ``evaluate(expected, actual) -> bool`` over the
expected and printed text.  That is exactly our ``stdio`` mode with an
``evaluator``, so the mapping is:

* tests: ``stdio`` suite of the cases, with the dataset's evaluator;
* code run against the tests: :func:`program` (a short import header as the
  Venus harness has, then the runner with the solution in place of the
  placeholder).  References are stored as such programs, so they run as they
  are; a candidate ``class Solution`` must go through :func:`program` (or
  :func:`rewardkit.benchmarks.loaders.runnable_code`) first;
* a ``test_case_generator`` is run in the sandbox (:mod:`.venus_generator`,
  the Afterburner paper's protocol) and its cases, validated against the
  references, join ``test_cases``; a record may then ship no ``test_cases``;
* ``extra``: ``runner``, ``test_case_generator``, and per reference the
  dataset's own measurements (``reference_metadata``: status, passed, time,
  memory, integral as Venus measured them elsewhere; ours replace them).

``solutions`` entries are dicts ``{code, status, passed, time, memory,
integral}`` in the published dataset, or bare code strings in older dumps;
both are read.  Entries that Venus itself recorded as not passing (or with no
code) are not references and are left out; ``extra["skipped_solutions"]``
counts them.
"""

from __future__ import annotations

from typing import Any

from ...sandbox import TestSuite
from ...sandbox.suite import SuiteError
from ..problem import Problem, Reference
from .common import LoaderError, difficulty, json_field, sequence, text
from .venus_generator import CaseGenerator

SOURCE = "venus"
PLACEHOLDER = "==Code Submission=="
KEYS = frozenset({"question_content", "test_cases", "test_case_runners"})
LANGUAGE_KEYS = ("python3", "python")
# The Venus harness runs the solution in a module that imports these first.
HEADER = """import bisect, collections, copy, functools, heapq, io, itertools, math, re, string, sys
from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict, defaultdict, deque
from functools import cache, lru_cache
from heapq import heapify, heappop, heappush
from itertools import permutations, zip_longest
from math import ceil, factorial, floor, inf, sqrt
from sys import maxsize
from typing import Dict, List, Optional, Set, Tuple

"""


def is_venus(record: dict[str, Any]) -> bool:
    """Whether a record has the Venus schema's distinguishing keys."""
    return record.keys() >= KEYS


def program(runner: str, code: str) -> str:
    """The stdin/stdout program that judges ``code``: header, then the runner with ``code`` in place.

    Idempotent: code that already is such a program comes back unchanged.
    """
    if not runner or PLACEHOLDER not in runner:
        return code
    if code.startswith(HEADER):
        return code
    return HEADER + runner.replace(PLACEHOLDER, code.strip("\n"), 1)


def _runner(value: Any) -> str:
    """The Python runner: the field is a string in Venus_Python, a per-language dict elsewhere."""
    if isinstance(value, dict):
        for key in LANGUAGE_KEYS:
            if value.get(key):
                return str(value[key])
        return ""
    return text(value)


def _solutions(value: Any, where: str) -> tuple[list[tuple[str, dict[str, Any]]], int]:
    """``(code, dataset metadata)`` of each passing solution, and how many were skipped."""
    value = json_field(value, "solutions", where)
    if isinstance(value, dict):  # per-language dict of lists
        value = next((value[k] for k in LANGUAGE_KEYS if value.get(k) is not None), [])
    kept, skipped = [], 0
    for entry in sequence(value):
        if isinstance(entry, dict):
            code = str(entry.get("code") or entry.get("solution") or "")
            meta = {k: entry[k] for k in ("status", "passed", "time", "memory", "integral") if k in entry}
            if not code.strip() or entry.get("passed") is False:
                skipped += 1
                continue
            kept.append((code, meta))
        elif isinstance(entry, str) and entry.strip():
            kept.append((entry, {}))
        else:
            skipped += 1
    return kept, skipped


def venus_problem(record: dict[str, Any], source: str = SOURCE, where: str = "",
                  case_generator: CaseGenerator | None = None) -> Problem:
    """One Venus record as a :class:`Problem` (see the module docstring for the mapping).

    A record with a ``test_case_generator`` has it run by ``case_generator``
    (default: one with its defaults, for this call): its validated cases join
    the record's own ``test_cases`` (an input already there is not repeated).
    A generator that fails is the record's error when it has no ``test_cases``;
    otherwise those are kept and ``extra["test_case_generator_error"]`` says why.
    """
    if case_generator is None:
        with CaseGenerator() as own:
            return venus_problem(record, source, where, own)
    problem_id = str(record.get("problem_id", "")).strip()
    where = where or f"venus problem {problem_id or '?'}"
    if not problem_id:
        raise LoaderError(f"{where}: no problem_id")
    cases = [{"input": text(case.get("input")), "output": text(case.get("output"))}
             for case in sequence(json_field(record.get("test_cases"), "test_cases", where))
             if isinstance(case, dict)]
    evaluator = text(record.get("test_case_evaluator")).strip() or None
    runner = _runner(record.get("test_case_runners"))
    if PLACEHOLDER not in runner:
        raise LoaderError(f"{where}: test_case_runners has no {PLACEHOLDER!r} placeholder for the solution")
    solutions, skipped = _solutions(record.get("solutions"), where)
    references = [Reference(program(runner, code), f"venus #{index}")
                  for index, (code, _) in enumerate(solutions)]
    generator, generator_error = text(record.get("test_case_generator")), None
    if generator.strip():
        try:
            made = case_generator.cases(generator, HEADER + (solutions[0][0] if solutions else ""),
                                        [r.code for r in references], evaluator, where)
        except LoaderError as exc:
            generator_error = str(exc).removeprefix(f"{where}: ")
            if not cases:
                raise LoaderError(f"{where}: its tests cannot be used: it has no test_cases, and "
                                  f"{generator_error}") from exc
            made = []
        known = {case["input"] for case in cases}
        cases += [case for case in made if case["input"] not in known]
    try:
        tests = TestSuite.from_dict({"mode": "stdio", "evaluator": evaluator, "cases": cases})
    except SuiteError as exc:
        raise LoaderError(f"{where}: its tests cannot be used: {exc}") from exc
    return Problem(
        problem_id=problem_id, statement=text(record.get("question_content")), tests=tests,
        language="python", title=text(record.get("title")),
        starter_code=_runner(record.get("code_prompt")),
        difficulty=difficulty(record.get("difficulty")),
        tags=tuple(str(t) for t in sequence(record.get("tags"))), references=references, source=source,
        extra={"runner": runner, "test_case_generator": generator,
               "reference_metadata": [meta for _, meta in solutions],
               "skipped_solutions": skipped, "test_case_generator_error": generator_error})
