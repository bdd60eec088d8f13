"""LiveCodeBench ``code_generation_lite`` rows, and the LCB-style test lists other sets reuse.

A row has ``public_test_cases`` (JSON text: a list of ``{"input", "output",
"testtype"}``), ``private_test_cases`` (the same list as JSON, or that JSON
pickled, zlib-compressed and base64-encoded), ``starter_code`` and
``metadata`` (JSON text; ``func_name`` for functional problems)
(``lcb_runner/benchmarks/code_generation.py`` ``CodeGenerationProblem``).
Both test sets are used, public first, as ``get_evaluation_sample`` does.
The pickled field is read by an unpickler that builds no object at all (it
admits strings, numbers and containers only), so a crafted row runs nothing.

``testtype`` ``"stdin"`` cases make a ``stdio`` suite judged by
:data:`LCB_EVALUATOR`; ``"functional"`` ones a ``call`` suite whose entry
point is ``func_name`` (a method of the code's ``Solution`` class when it has
one), each input holding one JSON argument per line and each output one JSON
value (``lcb_runner/evaluation/testing_util.py`` ``grade_call_based``).

Where the judging differs from ``testing_util``:

* functional: LCB compares ``prediction == expected`` after turning a tuple
  into a list; here a float expectation is met within 1e-6
  (:func:`~rewardkit.sandbox.judge.values_equal`) and an int one by an int
  only (``3.0 == 3`` holds there), and every value crosses the sandbox as
  plain data (an object whose ``__eq__`` always says True passes there).
  LCB takes ``Solution`` whenever the text ``class Solution`` appears; here a
  top-level function of that name is called when the class lacks the method.
* stdio: the same comparison (stripped lines, then the lines as ``Decimal``
  tokens), but LCB runs the program as the body of a function inside its own
  process, with its star-imports (``from math import *`` ...) in scope; here
  the program runs as itself, so a program that relies on those imports
  without writing them fails.
* LCB stops at the first failed case and scores pass/fail; the pass rate
  here counts every case.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import pickle  # nosec B403 - read with an unpickler that refuses every global
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..suite import SuiteError, TestSuite

if TYPE_CHECKING:  # the package imports this module
    from . import RowTests

NAME = "livecodebench"
MAX_DECOMPRESSED = 512 * 1024 * 1024  # bytes of a compressed field, decompressed: LCB's largest is far less
COLUMNS = ("public_test_cases", "private_test_cases", "metadata")

# LCB testing_util's stdio comparison, as a suite evaluator.
LCB_EVALUATOR = '''from decimal import Decimal


def _lines(text):
    return [line.strip() for line in text.strip().split("\\n")]


def _decimals(line):
    try:
        return [Decimal(token) for token in line.split()]
    except ArithmeticError:
        return None


def evaluate(expected, actual):
    """LiveCodeBench: as many stripped lines, each equal as text or as its Decimal tokens."""
    want, got = _lines(expected), _lines(actual)
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        if w != g and (_decimals(w) is None or _decimals(w) != _decimals(g)):
            return False
    return True
'''


class _PlainUnpickler(pickle.Unpickler):
    """Reads strings, numbers and containers; refuses every class or function a pickle names."""

    def find_class(self, module: str, name: str) -> Any:
        raise SuiteError(f"private_test_cases: the compressed tests name {module}.{name}; only "
                         f"plain data (strings, numbers, lists, dicts) is read")


def decode_private(value: str) -> Any:
    """LCB's compressed field (base64 of zlib of a pickled JSON string), decoded as plain data."""
    try:
        inflate = zlib.decompressobj()
        raw = inflate.decompress(base64.b64decode(value.encode("utf-8"), validate=True), MAX_DECOMPRESSED)
    except (binascii.Error, zlib.error, ValueError) as exc:
        raise SuiteError(f"private_test_cases is neither JSON nor base64 of zlib-compressed "
                         f"pickled JSON: {exc}") from exc
    if inflate.unconsumed_tail:
        raise SuiteError(f"private_test_cases decompresses to more than {MAX_DECOMPRESSED >> 20} MiB")
    try:
        data = _PlainUnpickler(io.BytesIO(raw)).load()
    except SuiteError:
        raise
    except Exception as exc:  # a truncated or malformed pickle raises one of many types
        raise SuiteError(f"private_test_cases does not unpickle: {exc}") from exc
    if not isinstance(data, str):
        return data
    try:
        return json.loads(data)
    except ValueError as exc:
        raise SuiteError(f"private_test_cases decompresses to text that is not JSON: {exc}") from exc


def test_list(value: Any, column: str) -> list[dict[str, Any]]:
    """A column holding a list of LCB test dicts: the list, its JSON, or LCB's compressed form."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = decode_private(value) if value.strip() else []
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        raise SuiteError(f"{column} must be a list of {{input, output, testtype}} objects")
    return value


def suite(tests: list[dict[str, Any]], func_name: Any, evaluator: str = LCB_EVALUATOR) -> dict[str, Any]:
    """The rewardkit suite dict of an LCB test list (``testtype`` stdin or functional)."""
    if not tests:
        raise SuiteError("the row has no test cases")
    for index, test in enumerate(tests):
        if "input" not in test or "output" not in test:
            raise SuiteError(f"test case {index} needs 'input' and 'output'")
    functional = [t.get("testtype") == "functional" for t in tests]
    if any(functional) and not all(functional):
        raise SuiteError("the row mixes functional and stdin test cases")
    if not all(functional):
        return {"mode": "stdio", "evaluator": evaluator,
                "cases": [{"input": str(t["input"]), "output": str(t["output"])} for t in tests]}
    if not isinstance(func_name, str) or not func_name.isidentifier():
        raise SuiteError(f"functional tests need the function's name (metadata func_name), "
                         f"got {func_name!r}")
    cases = [{"args": _arguments(i, t["input"]), "expected": _value(i, t["output"])}
             for i, t in enumerate(tests)]
    return {"mode": "call", "entry_point": func_name, "cases": cases}


def _arguments(index: int, value: Any) -> list[Any]:
    if not isinstance(value, str):
        return value if isinstance(value, list) else [value]
    try:
        return [json.loads(line) for line in value.split("\n")]
    except ValueError as exc:
        raise SuiteError(f"functional test {index}: the input is not one JSON value per line: "
                         f"{exc}") from exc


def _value(index: int, value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        raise SuiteError(f"functional test {index}: the output is not JSON: {exc}") from exc


def metadata(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row's ``metadata`` column as a dict (JSON text decoded; anything else is empty)."""
    value = row.get("metadata")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def found(row: Mapping[str, Any]) -> bool:
    """Whether the row has LiveCodeBench's ``public_test_cases``."""
    return row.get("public_test_cases") is not None


def read_row(row: Mapping[str, Any]) -> RowTests:
    """The row's public and private tests as one suite."""
    from . import RowTests

    tests = test_list(row.get("public_test_cases"), "public_test_cases")
    if row.get("private_test_cases") is not None:
        tests += test_list(row["private_test_cases"], "private_test_cases")
    return RowTests(TestSuite.from_dict(suite(tests, metadata(row).get("func_name"))), NAME)
