"""Shared evaluation: one sandbox run and one analysis per distinct completion.

The :class:`Engine` turns a batch of samples into :class:`View` objects that
every reward component reads.  Distinct (code, tests, language) triples run
once per batch in parallel; results, baseline measurements and quality
reports are cached across calls, so identical completions in a GRPO group and
the same baseline seen again cost nothing, and several TRL reward functions
backed by one engine execute each completion once between them.
"""

from __future__ import annotations

import json
import statistics
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..sandbox import ExecutionResult, Limits, Sandbox, Status, SuiteError, TestSuite, formats
from ..sandbox.formats import humaneval
from ..sandbox.measurement import PairedResult
from ..sandbox.runtime.languages import resolve_language
from ..sandbox.sandbox import in_threads
from .extract import Text, completion_text, extract_code

OBJECTIVES = ("time", "memory", "integral")
METRIC_OF = {"time": "time_s", "memory": "peak_memory_kb", "integral": "integral_kb_s"}
# The columns a row's tests are read from, in every format of :mod:`rewardkit.sandbox.formats`.
SUITE_COLUMNS = formats.COLUMNS
# The dataset columns that the engine and the components read.
COLUMNS = tuple(dict.fromkeys((*SUITE_COLUMNS, "language", "baseline_code", "baseline_metrics",
                               "reference_metrics")))
# the fewest rounds of a paired measurement: one round gives a ratio but no spread to judge it by
MIN_ROUNDS = 3
# rewardkit.analyzers keeps process-wide caches and warm tools that are not
# thread-safe: engines used from several threads (a server, TRL's async path) take turns.
ANALYSIS_LOCK = threading.Lock()


class ConfigError(ValueError):
    """The reward was set up or called wrongly; the message says what to fix."""


@dataclass
class Metrics:
    """What Monolith reports for a solution: passed, time, memory, integral (+ spread)."""

    passed: bool
    time_s: float = 0.0
    peak_memory_kb: float = 0.0
    integral_kb_s: float = 0.0
    spread: dict[str, float] = field(default_factory=dict)
    instructions: float | None = None

    @classmethod
    def from_result(cls, result: ExecutionResult) -> Metrics:
        """The metrics of a sandbox result."""
        return cls(result.passed, result.time_s, result.peak_memory_kb, result.integral_kb_s,
                   dict(result.spread), result.instructions)

    @classmethod
    def from_dict(cls, data: Any) -> Metrics:
        """Metrics from a ``baseline_metrics`` dict (or its JSON)."""
        if isinstance(data, str):
            data = json.loads(data)
        if not isinstance(data, dict) or "passed" not in data:
            raise ConfigError("baseline_metrics must be a dict with at least 'passed' "
                              "(and time_s, peak_memory_kb, integral_kb_s)")
        return cls(bool(data["passed"]), float(data.get("time_s", 0.0)),
                   float(data.get("peak_memory_kb", 0.0)), float(data.get("integral_kb_s", 0.0)),
                   dict(data.get("spread", {})), data.get("instructions"))

    def value(self, objective: str) -> float:
        """The measurement an objective compares."""
        return float(getattr(self, METRIC_OF[objective]))


@dataclass
class Paired:
    """A candidate measured in interleaved rounds with its baseline (:meth:`Sandbox.run_paired`):
    per sandbox metric, its per-round ratios to the neighbouring baseline runs, and the spread
    of one ratio measured in its group (:func:`rewardkit.sandbox.measurement.pair_noise`)."""

    ratios: dict[str, list[float]]
    noise: dict[str, float]

    def ratio(self, objective: str) -> float | None:
        """The median over rounds of the candidate's ratio on ``objective``; None without one."""
        values = self.ratios.get(METRIC_OF.get(objective, ""), [])
        return statistics.median(values) if values else None

    def rounds(self, objective: str) -> int:
        """How many rounds gave a ratio on ``objective``."""
        return len(self.ratios.get(METRIC_OF.get(objective, ""), []))


@dataclass
class View:
    """Everything the components may read about one sample."""

    completion: Any
    columns: dict[str, Any]
    text: Text
    language: str = "python"
    code: str | None = None
    suite: TestSuite | None = None
    tests_problem: str | None = None  # why the row's tests could not be read
    result: ExecutionResult | None = None
    baseline: Metrics | None = None
    paired: Paired | None = None  # set when measured in rounds with its baseline
    report: Any = None  # rewardkit.analyzers.QualityReport

    @property
    def problem(self) -> str | None:
        """Why there is nothing to evaluate, if so."""
        if self.text.problem:
            return self.text.problem
        if self.tests_problem:
            return self.tests_problem
        return None if self.code is not None else "no code found in the completion"


def analyze_in_turn(codes: list[str]) -> list[Any]:
    """Quality reports of ``codes`` (default profile), one caller at a time."""
    from ..analyzers import analyze_many

    with ANALYSIS_LOCK:
        return analyze_many(codes)


class Engine:
    """Runs and analyses completions for the reward components, with caches.

    ``analyze`` turns distinct sources into quality reports (default:
    :func:`analyze_in_turn`); the reward service passes its own, which shares
    the analysis fairly between requests.

    Rows that share a ``baseline_code`` are measured together with it in ``rounds``
    interleaved rounds on one worker when a component needs it (``paired``): default the
    sandbox's ``repeats`` and ``repeats`` here, at least :data:`MIN_ROUNDS`.  The same group
    (baseline and distinct candidates) seen again reads its measurement from the cache; any
    other group measures the baseline afresh in its own rounds.
    """

    def __init__(self, sandbox: Sandbox | None = None, workers: int | None = None,
                 limits: Limits | None = None, repeats: int = 1, meter: str = "time",
                 cache_size: int = 4096,
                 analyze: Callable[[list[str]], list[Any]] = analyze_in_turn,
                 rounds: int | None = None) -> None:
        if rounds is not None and rounds < 1:
            raise ConfigError("rounds must be at least 1")
        self._sandbox, self._owns_sandbox = sandbox, sandbox is None
        self._analyze = analyze
        self._workers, self._limits, self._repeats, self._meter = workers, limits, repeats, meter
        self._rounds = rounds
        self._runs: OrderedDict[tuple[str, str, str], ExecutionResult] = OrderedDict()
        self._pairs: OrderedDict[tuple[tuple[str, str, str], tuple[str, ...]], PairedResult] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.executions = 0  # sandbox runs actually made (for tests and benchmarks)

    def __getstate__(self) -> dict[str, Any]:
        """What a copy in another process needs: the settings, not the caches, the lock or the
        workers.  A sandbox of the engine's own is started again on first use there; one given to
        it pickles as its settings (:meth:`Sandbox.__reduce__`) and the copy owns what it starts."""
        state = {key: value for key, value in vars(self).items() if key != "_lock"}
        state["_runs"], state["_pairs"] = OrderedDict(), OrderedDict()
        if self._owns_sandbox:
            state["_sandbox"] = None
        state["_owns_sandbox"] = True
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._lock = threading.Lock()

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox, started on first use."""
        with self._lock:
            if self._sandbox is None:
                self._sandbox = Sandbox(workers=self._workers, limits=self._limits,
                                        repeats=self._repeats, meter=self._meter)
            return self._sandbox

    def close(self) -> None:
        """Stop the sandbox's workers, if this engine started them (a sandbox passed in stays open)."""
        if self._owns_sandbox and self._sandbox is not None:
            self._sandbox.close()

    # -- building views ---------------------------------------------------------------
    def views(self, completions: list[Any], columns: dict[str, list[Any]],
              needs: set[str], format: str | None = None) -> list[View]:
        """One view per completion, with the runs, baselines and reports ``needs`` asks for.

        ``needs`` ⊆ {run, outcome, baseline, paired, analysis}: ``run`` runs every completion
        against its row's tests (which every row must have), ``outcome`` only those whose row has
        tests; ``paired`` measures the rows that share a ``baseline_code`` in rounds with it
        (:meth:`Sandbox.run_paired`), which sets their run, baseline and ``paired``.
        A row's tests are read by :func:`rewardkit.sandbox.formats.read` in the ``format`` named,
        else the one its columns fit; the values a GRPO group shares are read once.  A row that
        no format fits is a ConfigError naming the columns seen and the formats known; a row
        whose tests are malformed gets no run and its reason as the view's problem (its rewards
        score lowest).
        """
        if format is not None and format not in formats.FORMATS:
            raise ConfigError(f"unknown test format {format!r}; known: {', '.join(formats.FORMATS)}")
        read: dict[tuple[int, ...], formats.RowTests | ValueError] = {}  # by the ids of the values read
        views = [self._view(completion, {k: v[i] for k, v in columns.items()}, needs, format, read)
                 for i, completion in enumerate(completions)]
        paired = self._pair(views) if "paired" in needs else set()
        if needs & {"run", "outcome"}:
            runnable = [v for v in views
                        if v.code is not None and v.suite is not None and id(v) not in paired]
            results = self._run([(v.code, v.suite, v.language) for v in runnable])  # type: ignore[misc]
            for view in runnable:
                view.result = results[_key(view.code, view.suite, view.language)]  # type: ignore[arg-type]
        if "baseline" in needs:
            self._baselines([v for v in views if id(v) not in paired])
        if "analysis" in needs:
            self._analyse(views)
        return views

    def _view(self, completion: Any, columns: dict[str, Any], needs: set[str], format: str | None,
              read: dict[tuple[int, ...], formats.RowTests | ValueError]) -> View:
        # read where the rewards run code, and elsewhere for the language the tests declare
        tests = _row_tests(columns, format, read) \
            if needs & {"run", "baseline"} or _has_tests(columns, format) else None
        row = tests if isinstance(tests, formats.RowTests) else None
        language = str(columns.get("language") or (row and row.language) or "python")
        text = completion_text(completion)
        view = View(completion, columns, text, language)
        if needs & {"run", "baseline", "outcome"}:
            view.suite = row.suite if row is not None else None
            view.tests_problem = f"the row's tests are not usable: {tests}" \
                if isinstance(tests, ValueError) else None
        if text.value is not None:
            view.code = extract_code(text.value, language)
            if view.code is not None and row is not None and row.prompt and row.suite.entry_point:
                view.code = humaneval.program(row.prompt, view.code, row.suite.entry_point)
        return view

    def _run(self, jobs: list[tuple[str, TestSuite, str]]) -> dict[tuple[str, str, str], ExecutionResult]:
        """Results for these jobs: cached ones, and the rest run once each, in parallel.

        Infrastructure faults (``sandbox_error``) are returned but not cached.
        """
        wanted = {_key(code, suite, language): (code, suite, language) for code, suite, language in jobs}
        with self._lock:
            found = {key: self._runs[key] for key in wanted if key in self._runs}
            for key in found:
                self._runs.move_to_end(key)
        for key in wanted:
            if key not in found and (refused := _refused(*wanted[key])) is not None:
                found[key] = refused
        todo = [key for key in wanted if key not in found]
        if todo:
            results = self.sandbox.run_many([wanted[key] for key in todo])
            with self._lock:
                self.executions += len(todo)
                for key, result in zip(todo, results, strict=True):
                    found[key] = result
                    if result.status != Status.SANDBOX_ERROR:
                        self._runs[key] = result
                while len(self._runs) > self._cache_size:
                    self._runs.popitem(last=False)
        return found

    def _pair(self, views: list[View]) -> set[int]:
        """Measure each group of views that share a baseline_code (and tests and language) in
        rounds with it; the ids of the views this set run, baseline and ``paired`` for.

        A candidate whose code is the baseline's is the baseline: its ratios are 1.  Views
        with ``baseline_metrics``, malformed tests, or a group with nothing to run beside the
        baseline are left to the unpaired path.
        """
        groups: dict[tuple[str, str, str], tuple[str, TestSuite, list[View]]] = {}
        for view in views:
            code, suite = view.columns.get("baseline_code"), view.suite
            if view.columns.get("baseline_metrics") is not None or code is None or suite is None \
                    or view.tests_problem is not None:
                continue
            baseline = str(code).strip("\n")
            if _refused(baseline, suite, view.language) is None:
                key = _key(baseline, suite, view.language)
                groups.setdefault(key, (baseline, suite, []))[2].append(view)
        jobs = []
        for key, (baseline, suite, members) in groups.items():
            codes = tuple(sorted({v.code for v in members if v.code is not None and v.code != baseline
                                  and _refused(v.code, suite, v.language) is None}))
            if codes:
                jobs.append((key, baseline, suite, members, codes))
        measured = self._measure_pairs([(key, baseline, suite, codes)
                                        for key, baseline, suite, _, codes in jobs])
        for (_, baseline, _, members, codes), paired in zip(jobs, measured, strict=True):
            results = dict(zip(codes, paired.candidates, strict=True))
            ratios = dict(zip(codes, paired.ratios, strict=True))
            if paired.baseline.passed:
                results[baseline] = paired.baseline
                ratios[baseline] = {name: [1.0] * paired.rounds for name in paired.noise}
            for view in members:
                if paired.baseline.status != Status.SANDBOX_ERROR:
                    view.baseline = Metrics.from_result(paired.baseline)
                if view.code is None:
                    continue
                view.result = results.get(view.code) or _refused(view.code, view.suite, view.language)  # type: ignore[arg-type]
                if ratios.get(view.code):
                    view.paired = Paired(ratios[view.code], paired.noise)
        return {id(view) for *_, members, _ in jobs for view in members}

    def _measure_pairs(self, groups: list[tuple[tuple[str, str, str], str, TestSuite, tuple[str, ...]]]
                       ) -> list[PairedResult]:
        """Each group's paired measurement: from the cache, or run, the groups in parallel."""
        found: dict[int, PairedResult] = {}
        with self._lock:
            for index, (key, _, _, codes) in enumerate(groups):
                if (key, codes) in self._pairs:
                    found[index] = self._pairs[key, codes]
                    self._pairs.move_to_end((key, codes))
        todo = [index for index in range(len(groups)) if index not in found]
        if todo:
            sandbox = self.sandbox
            rounds = self._rounds or max(MIN_ROUNDS, self._repeats, sandbox.repeats)

            def one(index: int) -> PairedResult:
                key, baseline, suite, codes = groups[index]
                return sandbox.run_paired(baseline, codes, suite, key[2], rounds=rounds)

            results = in_threads(one, todo, sandbox.workers)
            with self._lock:
                for index, paired in zip(todo, results, strict=True):
                    found[index] = paired
                    key, _, suite, codes = groups[index]
                    self.executions += 1 + len(codes)
                    measured = [(key, paired.baseline)] + [
                        (_key(code, suite, key[2]), result)
                        for code, result in zip(codes, paired.candidates, strict=True)]
                    faults = [result for _, result in measured if result.status == Status.SANDBOX_ERROR]
                    for run_key, result in measured:
                        if result.status != Status.SANDBOX_ERROR:
                            self._runs[run_key] = result
                    if not faults:
                        self._pairs[key, codes] = paired
                for cache in (self._runs, self._pairs):
                    while len(cache) > self._cache_size:
                        cache.popitem(last=False)
        return [found[index] for index in range(len(groups))]

    def _baselines(self, views: list[View]) -> None:
        missing = []
        for view in views:
            if view.columns.get("baseline_metrics") is not None:
                view.baseline = Metrics.from_dict(view.columns["baseline_metrics"])
            elif view.tests_problem is not None:
                continue  # no tests to measure it on: the rewards read the view's problem
            elif view.columns.get("baseline_code") is not None and view.suite is not None:
                missing.append(view)
            else:
                raise ConfigError("this reward compares with a baseline: give a 'baseline_code' "
                                  "or 'baseline_metrics' column")
        jobs = [(str(v.columns["baseline_code"]).strip("\n"), v.suite, v.language) for v in missing]
        results = self._run(jobs)  # type: ignore[arg-type]
        for view, job in zip(missing, jobs, strict=True):
            result = results[_key(*job)]  # type: ignore[arg-type]
            if result.status != Status.SANDBOX_ERROR:
                view.baseline = Metrics.from_result(result)

    def _analyse(self, views: list[View]) -> None:
        codes = sorted({v.code for v in views if v.code is not None})
        reports = dict(zip(codes, self._analyze(codes), strict=True)) if codes else {}
        for view in views:
            if view.code is not None:
                view.report = reports[view.code]


def _has_tests(columns: dict[str, Any], format: str | None) -> bool:
    """Whether the row has tests: in the format named (any of its columns given), or in any."""
    if format is not None:
        return any(columns.get(name) is not None for name in formats.FORMATS[format].columns)
    return formats.has_tests(columns)


def _row_tests(columns: dict[str, Any], format: str | None,
               read: dict[tuple[int, ...], formats.RowTests | ValueError]) -> formats.RowTests | ValueError:
    """The row's tests, or the SuiteError that says why they are malformed; ConfigError when
    the row has no tests that a format reads.

    ``read`` caches by the identity of the row's test columns' values, alive in the batch.
    """
    if format is not None and not _has_tests(columns, format):
        raise ConfigError(f"format {format!r} reads the columns "
                          f"{', '.join(formats.FORMATS[format].columns)}; this row has "
                          f"{', '.join(sorted(k for k, v in columns.items() if v is not None)) or 'none'}")
    key = (id(format), *(id(columns.get(name)) for name in SUITE_COLUMNS))
    if key not in read:
        try:
            read[key] = formats.read(columns, format)
        except formats.FormatError as exc:  # a ``tests`` given says what is wrong with it
            if columns.get("tests") is None:
                raise ConfigError(f"this reward runs code: the dataset needs a 'tests' column or "
                                  f"the columns of another test format; {exc}") from None
            read[key] = _suite_error(columns["tests"], exc)
        except (ValueError, TypeError, KeyError) as exc:  # a reader's fault is the row's
            read[key] = exc if isinstance(exc, ValueError) else SuiteError(repr(exc))
    return read[key]


def _suite_error(tests: Any, unread: formats.FormatError) -> ValueError:
    """Why a ``tests`` value that no format reads is not rewardkit's own suite either."""
    try:
        TestSuite.from_dict(tests)
    except (ValueError, TypeError) as exc:
        return exc if isinstance(exc, ValueError) else SuiteError(str(exc))
    return unread


def _refused(code: str, suite: TestSuite, language: str) -> ExecutionResult | None:
    """A compile error naming the language, for a job the sandbox cannot run (never a crash)."""
    try:
        name = resolve_language(language).name
    except ValueError as exc:
        return ExecutionResult(Status.COMPILE_ERROR, tests_total=len(suite), feedback=f"{exc}.")
    refused = suite.kind.refusal(name)
    return None if refused is None else \
        ExecutionResult(Status.COMPILE_ERROR, tests_total=len(suite), feedback=f"{refused}.")


def _key(code: str, suite: TestSuite, language: str) -> tuple[str, str, str]:
    return code, json.dumps(suite.to_dict(), sort_keys=True), language
