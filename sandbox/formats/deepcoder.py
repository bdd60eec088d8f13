"""DeepCoder / rLLM rows: a list of ``{input, output, testtype, metadata}`` test cases.

``agentica-org/DeepCoder-Preview-Dataset`` keeps them, as JSON text, in
``tests`` (with the function name in the row's ``metadata``); rLLM's prepared
rows keep them in ``ground_truth`` (rLLM
``cookbooks/deepcoder/prepare_deepcoder_data.py``, each case's ``metadata``
holding ``func_name``).  rLLM judges such a list with LiveCodeBench's
harness (``rllm/rewards/code_reward.py`` ``lcb_check_correctness_v2`` calls
``rllm/rewards/code_utils/livecodebench.py`` ``run_test``), so the suite is
the one :mod:`.livecodebench` builds: ``testtype`` ``"functional"`` is a
``call`` suite on ``func_name``, anything else (``"stdin"``,
``"stdin_stdout"``) a ``stdio`` suite with :data:`~.livecodebench.LCB_EVALUATOR`.
A ``ground_truth`` given as ``{inputs, outputs, fn_name}`` (rLLM's taco/apps
rows) is turned into that list as rLLM's ``taco_to_lcb_format`` does.

Where the judging differs from rLLM's: as for :mod:`.livecodebench`; also
rLLM keeps only the 15 longest inputs of a larger list and scores all or
nothing, where every case counts here.  DeepCoder's TACO subset, whose
``tests`` is ``{inputs, outputs}``, is read as verl/APPS ground truth
(:mod:`.verl`), the shape it shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..suite import SuiteError, TestSuite
from . import livecodebench
from .columns import json_or_text

if TYPE_CHECKING:  # the package imports this module
    from . import RowTests

NAME = "deepcoder"
COLUMNS = ("tests", "ground_truth", "metadata")


def _is_test_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(t, dict) and "input" in t and "output" in t for t in value)


def found(row: Mapping[str, Any]) -> bool:
    """Whether ``tests`` is a list of test dicts, or the row has rLLM's ``ground_truth``."""
    return _is_test_list(json_or_text(row.get("tests"))) or row.get("ground_truth") is not None


def from_taco(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """rLLM's ``taco_to_lcb_format``: ``{inputs, outputs, fn_name}`` as a test list (a list
    output is its first element; a short list is padded with its first item)."""
    inputs, outputs = data.get("inputs") or [], data.get("outputs") or []
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise SuiteError("ground_truth 'inputs' and 'outputs' must be lists")
    tests = []
    for index in range(max(len(inputs), len(outputs))):
        given = inputs[index] if index < len(inputs) else inputs[0]
        wanted = outputs[index] if index < len(outputs) else outputs[0]
        test: dict[str, Any] = {"input": given, "output": wanted[0] if isinstance(wanted, list) else wanted}
        if "fn_name" in data:
            test["testtype"], test["metadata"] = "functional", {"func_name": data["fn_name"]}
        tests.append(test)
    return tests


def read_row(row: Mapping[str, Any]) -> RowTests:
    """The row's test list (``ground_truth`` when it has one, else ``tests``) as a suite."""
    from . import RowTests

    column = "ground_truth" if row.get("ground_truth") is not None else "tests"
    value = json_or_text(row.get(column))
    if isinstance(value, dict) and ("inputs" in value or "outputs" in value):
        value = from_taco(value)
    if not _is_test_list(value):
        raise SuiteError(f"{column} must be a non-empty list of {{input, output, testtype}} objects")
    named = [t["metadata"].get("func_name") for t in value if isinstance(t.get("metadata"), dict)]
    func_name = next((name for name in named if name), None) or livecodebench.metadata(row).get("func_name")
    return RowTests(TestSuite.from_dict(livecodebench.suite(value, func_name)), NAME)
