"""Test suites in their modes: stdio, call, script and unittest."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .evalplus_match import ORACLES
from .runtime import compile_plain, protocol

MODES = ("stdio", "call", "script", "unittest")
COMPARES = ("values", "evalplus", "apps")  # a call suite's ``compare``: how a returned value is judged
PROGRAMS = ("apps",)  # a stdio suite's ``program``: how a Python program is run, when not as itself
SUITE_CACHE = 4096  # suites whose code the judge keeps compiled and parsed: a whole usual-size dataset
_EDITION = re.compile(r"20\d\d")  # a Rust edition: 2015, 2018, 2021, 2024...


class SuiteError(ValueError):
    """A test suite that cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class Case:
    """One test case: stdin/expected stdout, or call arguments/expected value."""

    input: str = ""
    output: str | None = None
    args: tuple[Any, ...] = ()
    expected: Any = None
    return_arg: int | None = None  # in-place problems: compare this argument after the call


@dataclass(frozen=True)
class TestSuite:
    """A set of test cases and how to judge them.

    * ``stdio``: ``cases`` of ``{"input", "output"}``; optional ``evaluator``
      source defining ``evaluate(expected, actual) -> bool``; optional
      ``program: "apps"``: a Python program runs as APPS's harness runs it, as
      the body of a function, so a top-level ``return`` ends it
      (:func:`~.runtime.apps.apps_program`).
    * ``call``: ``entry_point`` (``"func"`` or ``"Class.method"``) and
      ``cases`` of ``{"args": [...], "expected": ...}``.  A case marked
      ``"encoded": true`` gives both in the protocol's tagged form
      (:func:`~.runtime.protocol.encode_value`; an int as ``{"int": "0x..."}``):
      :meth:`to_dict` writes so a case holding an integer too long for a JSON
      number that Python reads back (over about 4,200 digits).
    * ``script``: ``entry_point`` and ``check`` source defining
      ``check(candidate)`` (HumanEval style), and optional ``definitions``:
      the problem's own source, such as HumanEval's prompt with its imports
      and the helpers the check calls (``poly``, ``encode_cyclic``).  The
      check runs in the trusted process, in a namespace made of
      ``definitions`` and then ``check``, where ``entry_point`` stands for
      the solution and each other function the solution defines is there
      by its name, unless the suite's code defines that name or it is a
      builtin's (each call runs in the sandbox)::

        {"mode": "script", "entry_point": "find_zero",
         "definitions": "import math\\ndef poly(xs, x):\\n    return sum(...)\\n",
         "check": "def check(candidate):\\n    assert abs(poly([1, 2], candidate([1, 2]))) < 1e-4\\n"}

    * ``unittest``: ``check`` is test code in the solution's own language, for
      its built-in test runner (Rust: a ``#[cfg(test)] mod tests`` of
      ``#[test]`` functions); optional ``edition`` (Rust's, default 2021).  The
      solution and the test code are compiled together as one test program in
      the sandbox and run once; it passes when every test passes (MultiPL-E /
      HumanEval-Rust style)::

        {"mode": "unittest", "edition": "2024",
         "check": "#[cfg(test)]\\nmod tests {\\n    use super::*;\\n    #[test]\\n"
                  "    fn t() { assert_eq!(add(1, 2), 3); }\\n}\\n"}
    """

    __test__ = False  # not a pytest class

    mode: str
    cases: tuple[Case, ...] = ()
    entry_point: str | None = None
    check: str | None = None
    evaluator: str | None = None
    definitions: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.mode == "call":
            _call_options(self.extra, len(self.cases))

    def __len__(self) -> int:
        return 1 if self.mode in ("script", "unittest") else len(self.cases)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | str) -> TestSuite:
        """Validate a suite given as a dict or JSON text; SuiteError says what is wrong.

        verl/APPS ground truth (``inputs``/``outputs``/``fn_name``) and open-r1's
        ``verification_info`` are read too (:mod:`.formats`).
        """
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except ValueError as exc:  # JSONDecodeError, or a number past Python's digit limit
                hint = "" if isinstance(exc, json.JSONDecodeError) else \
                    ' (write an integer that long as {"int": "0x..."} in a case marked "encoded": true)'
                raise SuiteError(f"tests are not valid JSON: {exc}{hint}") from exc
        if isinstance(data, TestSuite):
            return data
        if not isinstance(data, dict):
            raise SuiteError(f"a test suite must be a JSON object, got {type(data).__name__}")
        from . import formats  # verl/APPS ground truth, open-r1 verification_info

        if formats.is_foreign(data):
            data = formats.native_suite(data)
        mode = data.get("mode", "stdio")
        if mode not in MODES:
            raise SuiteError(f"unknown test mode {mode!r}; use one of {', '.join(MODES)}")
        raw_cases = data.get("cases", [])
        if not isinstance(raw_cases, list):
            raise SuiteError("'cases' must be a list")
        cases = tuple(_case(mode, index, raw) for index, raw in enumerate(raw_cases))
        entry_point = data.get("entry_point")
        check = data.get("check")
        evaluator = data.get("evaluator")
        definitions = data.get("definitions")
        if mode in ("call", "script") and not entry_point:
            raise SuiteError(f"{mode} mode needs an 'entry_point'")
        if mode == "script" and not isinstance(check, str):
            raise SuiteError("script mode needs 'check' source defining check(candidate)")
        if mode == "unittest":
            _unittest_fields(check, data.get("edition"))
            check = str(check)
        if definitions is not None and (mode != "script" or not isinstance(definitions, str)):
            raise SuiteError("'definitions' is source (a string), and only script mode has it")
        if mode in ("stdio", "call") and not cases:
            raise SuiteError(f"{mode} mode needs at least one case in 'cases'")
        for name, source in (("check", check), ("evaluator", evaluator), ("definitions", definitions)):
            if source is not None and not (name == "check" and mode == "unittest"):
                _compiles(name, source)
        if data.get("program") is not None and (mode != "stdio" or data["program"] not in PROGRAMS):
            raise SuiteError(f"'program' is for stdio suites and one of {', '.join(PROGRAMS)}, "
                             f"got {data['program']!r}")
        known = {"mode", "cases", "entry_point", "check", "evaluator", "definitions"}
        return cls(mode, cases, entry_point, check, evaluator, definitions,
                   {k: v for k, v in data.items() if k not in known})

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form that :meth:`from_dict` reads back."""
        out: dict[str, Any] = {"mode": self.mode}
        if self.mode == "stdio":
            out["cases"] = [{"input": c.input, "output": c.output} for c in self.cases]
            out["evaluator"] = self.evaluator
        elif self.mode == "call":
            out["entry_point"] = self.entry_point
            out["cases"] = [_call_case(c) | ({"return_arg": c.return_arg} if c.return_arg is not None else {})
                            for c in self.cases]
        elif self.mode == "unittest":
            out["check"] = self.check
        else:
            out["entry_point"] = self.entry_point
            out["check"] = self.check
            if self.definitions is not None:
                out["definitions"] = self.definitions
        return out | self.extra


def _case(mode: str, index: int, raw: Any) -> Case:
    if not isinstance(raw, dict):
        raise SuiteError(f"case {index} must be an object, got {type(raw).__name__}")
    if mode == "stdio":
        if "input" not in raw or "output" not in raw:
            raise SuiteError(f"stdio case {index} needs 'input' and 'output'")
        return Case(input=str(raw["input"]), output=str(raw["output"]))
    if mode == "call":
        args, expected = raw.get("args", []), raw.get("expected")
        if raw.get("encoded") is True:  # values in the protocol's tagged form: integers of any size
            try:
                args, expected = protocol.decode_value(args), protocol.decode_value(expected)
            except (protocol.ProtocolError, TypeError, ValueError, RecursionError) as exc:
                raise SuiteError(f"call case {index}: its encoded values cannot be read: {exc}") from None
        if not isinstance(args, list) or "expected" not in raw:
            raise SuiteError(f"call case {index} needs 'args' (a list) and 'expected'")
        for name, value in (("args", args), ("expected", expected)):
            try:  # what the worker is sent, and what is compared, must be plain data
                protocol.encode_value(value)
            except (protocol.NotPlainData, RecursionError) as exc:
                raise SuiteError(f"call case {index}: '{name}' cannot be used: {exc}") from None
        return_arg = raw.get("return_arg")
        return Case(args=tuple(args), expected=expected,
                    return_arg=int(return_arg) if return_arg is not None else None)
    return Case()


def _call_case(case: Case) -> dict[str, Any]:
    """A call case as JSON-ready data: plain, or tagged (``"encoded": true``) when it holds an
    integer too long for a JSON number that Python can read back (its digit limit)."""
    if protocol.has_long_int([case.args, case.expected]):
        return {"args": protocol.encode_value(list(case.args)),
                "expected": protocol.encode_value(case.expected), "encoded": True}
    return {"args": list(case.args), "expected": case.expected}


def _call_options(extra: dict[str, Any], count: int) -> None:
    """SuiteError for a call suite's judging options (``compare``, ``oracle``, ``atol``,
    ``calls_per_frame``) that the judge could not use."""
    compare = extra.get("compare", "values")
    if compare not in COMPARES:
        raise SuiteError(f"unknown call comparison {compare!r}; use one of {', '.join(COMPARES)}")
    oracle = extra.get("oracle")
    if oracle is not None and (compare != "evalplus" or oracle not in ORACLES):
        raise SuiteError(f"'oracle' is for compare \"evalplus\" and one of {', '.join(ORACLES)}, "
                         f"got {oracle!r}")
    _check_atol(extra.get("atol"), count)
    per_frame = extra.get("calls_per_frame")
    if per_frame is not None and (type(per_frame) is not int or per_frame < 1):
        raise SuiteError(f"'calls_per_frame' must be a positive integer, got {per_frame!r}")


def _check_atol(atol: Any, count: int) -> None:
    if atol is None:
        return
    if isinstance(atol, list) and len(atol) != count:
        raise SuiteError(f"'atol' as a list needs one tolerance per case ({count}), got {len(atol)}")
    values = atol if isinstance(atol, list) else [atol]
    if not all(type(v) in (int, float) and 0 <= v < float("inf") for v in values):
        raise SuiteError(f"'atol' must be a finite number >= 0 (or a list of them), got {atol!r}")


def _unittest_fields(check: Any, edition: Any) -> None:
    if not isinstance(check, str) or not check.strip():
        raise SuiteError("unittest mode needs 'check': test code in the solution's language "
                         "(Rust: a #[cfg(test)] mod tests with #[test] functions)")
    if edition is not None and not (isinstance(edition, str) and _EDITION.fullmatch(edition)):
        raise SuiteError(f"'edition' must be a Rust edition such as \"2021\" or \"2024\", got {edition!r}")


def _compiles(name: str, source: str) -> None:
    try:
        compile_plain(source, f"<{name}>")
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise SuiteError(f"the suite's {name} source does not compile: {type(exc).__name__}: {exc}") from exc
