"""Test suites: the data of a suite, read and written by its mode (:mod:`.modes`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the modes read and write suites
    from .modes import Mode

SUITE_CACHE = 4096  # suites whose code the judge keeps compiled and parsed: a whole usual-size dataset
PROGRAMS = ("apps",)  # a stdio suite's ``program``: how a Python program is run, when not as itself
KNOWN = ("mode", "cases", "entry_point", "check", "evaluator", "definitions")  # fields; the rest is ``extra``


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

    * ``pytest``: ``check`` is a pytest module that imports the solution
      (``from solution import ...``, KodCode style), run once against it in the
      sandbox; the pass rate is passed / collected tests
      (:class:`~.modes.pytest.Pytest`)::

        {"mode": "pytest",
         "check": "from solution import add\\n\\ndef test_add():\\n    assert add(1, 2) == 3\\n"}
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
        self.kind.validate(self)

    @property
    def kind(self) -> Mode:
        """The suite's mode: its validation, languages and judging (:mod:`.modes`)."""
        from .modes import mode_named

        return mode_named(self.mode)

    def __len__(self) -> int:
        return self.kind.size(self)

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
        from .modes import MODES, mode_named

        if formats.is_foreign(data):
            data = formats.native_suite(data)
        name = data.get("mode", "stdio")
        mode = mode_named(name)
        if not isinstance(data.get("cases", []), list):
            raise SuiteError("'cases' must be a list")
        for key in KNOWN[1:]:
            if data.get(key) not in (None, [], "") and key not in mode.fields:
                owners = " or ".join(other.name for other in MODES.values() if key in other.fields)
                raise SuiteError(f"{name} mode has no {key!r}: it is only for {owners} mode")
        if data.get("program") is not None and (name != "stdio" or data["program"] not in PROGRAMS):
            raise SuiteError(f"'program' is for stdio suites and one of {', '.join(PROGRAMS)}, "
                             f"got {data['program']!r}")
        return cls(name, **mode.read(data), extra={k: v for k, v in data.items() if k not in KNOWN})

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form that :meth:`from_dict` reads back."""
        return {"mode": self.mode} | self.kind.to_dict(self) | self.extra
