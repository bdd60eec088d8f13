"""The work behind the routes, without HTTP: shared sandboxes, engines and rewards.

One :class:`Service` serves every request.  Rewards are built once per
(preset, objective) and share an engine per measurement mode (presets that
time code measure 3 times, the others once), so runs, baselines and analyses
are cached across requests and clients.  Every method may be called from many
threads at once; bad input raises ``ValueError`` (``ConfigError``,
``SuiteError``, ``ScoreError`` are ValueErrors) with a message for the caller.

Clients are not trusted.  Their suites' evaluators and checks run in a
sandboxed referee, never in this process (``Sandbox(trust_suites=False)``).
Sandbox jobs and analysis chunks take turns between requests
(:mod:`.scheduler`), within the caps of :class:`~.config.ServeConfig`; a
profile's time budget is bounded by the service's.  A request analyses its
chunks on at most all but one of the analysis workers at once, each chunk on
a worker of its own, so a source that keeps a tool busy for its whole budget
holds one worker, and another request's analysis still finds one free.
"""

from __future__ import annotations

import contextvars
import functools
import math
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .. import __version__
from ..analyzers import QualityReport, analyze_many, shutdown_pool
from ..analyzers.faults import infrastructure_report
from ..analyzers.profile import load_profile
from ..rewards import PRESETS, ConfigError, Engine, Reward
from ..rewards.engine import SUITE_COLUMNS
from ..rewards.faults import fault_policy
from ..rewards.presets import REPEATS
from ..sandbox import Limits, Sandbox, TestSuite
from ..sandbox.formats import case_count
from ..scoring import make_reward
from .config import ServeConfig
from .openrlhf import answer_body, request_batch, with_pass_rate
from .scheduler import OverBudget, Scheduler

# Profile thresholds that set how much work an analysis may do: a client may lower them only.
BOUNDED_THRESHOLDS = ("max_source_bytes", "max_ast_depth")
# Sources in one analysis turn, at most: a batch is far cheaper per source than one at a time
# (tools such as mypy check a chunk in one call), and a turn stays a fraction of a second.
MAX_CHUNK = 8


class BatchTooLarge(ValueError):
    """More items in one request than the service takes."""


class Service:
    """Scores, runs and analyses for the reward service; ``close()`` stops its sandboxes."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self._engines: dict[int, Engine] = {}  # by runs per measurement, each on its own sandbox
        self._rewards: dict[tuple[str, str | None], Reward] = {}
        self._lock = threading.Lock()
        # sandbox jobs of every engine share the workers' count of slots; analysis chunks, one
        # per analysis worker
        self.scheduler = Scheduler({"run": config.sandbox_workers, "analysis": config.analysis_workers},
                                   {"run": config.caps.run_s, "analysis": config.caps.analysis_s})
        self.stopping = False

    # -- shared state ---------------------------------------------------------------------------
    def _engine(self, repeats: int = 1) -> Engine:
        """The engine whose sandbox measures ``repeats`` times (its workers start on first use)."""
        with self._lock:
            if repeats not in self._engines:
                sandbox = Sandbox(self.config.backend, self.config.sandbox_workers, repeats=repeats,
                                  limits=self.config.limits, trust_suites=False,
                                  admission=functools.partial(self.scheduler.turn, "run"))
                self._engines[repeats] = Engine(sandbox=sandbox, analyze=self._analyze_codes)
            return self._engines[repeats]

    def reward(self, preset: str, objective: str | None = None) -> Reward:
        """The preset's reward, built on first use; ``ScoreError`` for an unknown preset or objective."""
        key = (preset, objective)
        with self._lock:
            if key in self._rewards:
                return self._rewards[key]
        built = make_reward(preset, objective, engine=self._engine(REPEATS.get(preset, 1)))
        with self._lock:
            return self._rewards.setdefault(key, built)

    def stop(self) -> None:
        """Refuse new work: every turn not yet started is cancelled (requests answer 503)."""
        self.stopping = True
        self.scheduler.close()

    def close(self) -> None:
        """Cancel what waits, then stop every sandbox's workers and the analysis processes, which
        ends the jobs still running (uvicorn ends the process by its signal, before ``atexit``
        would)."""
        self.stop()
        with self._lock:
            engines = list(self._engines.values())
            self._engines.clear()
            self._rewards.clear()
        for engine in engines:
            engine.sandbox.close()  # the engine leaves a sandbox it was given open
        shutdown_pool()

    # -- the routes' work -----------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        """What the service runs (``started_repeats``: the sandboxes started so far, by runs per
        measurement) and what it accepts."""
        with self._lock:
            started = sorted(self._engines)
        load = self.scheduler.load()
        config = self.config
        return {"status": "stopping" if self.stopping else "ok", "version": __version__,
                "presets": sorted(PRESETS),
                "sandbox": {"backend": config.backend, "workers": config.sandbox_workers,
                            "started_repeats": started, "limits": config.limits.to_dict()},
                "load": load, "saturated": any(lane["waiting"] for lane in load.values()),
                "max_concurrent": config.max_concurrent, **config.caps.to_dict(),
                "auth": bool(config.token)}

    def components(self, preset: str, objective: str | None = None) -> dict[str, Any]:
        """The preset's components and weights, in order."""
        reward = self.reward(preset, objective)
        return {"preset": preset, "objective": objective, "name": reward.__name__,
                "components": {component.name: weight for component, weight in reward.components}}

    def score(self, preset: str, objective: str | None, completions: Sequence[Any],
              columns: dict[str, list[Any]], format: str | None = None) -> dict[str, Any]:
        """Each completion's reward, component values and info, as the in-process reward computes them;
        the rows' tests in ``format``, or in the format each row's columns fit."""
        self._check_batch(len(completions))
        self._check_suites(columns)
        reward = self.reward(preset, objective)
        if format is not None:  # the preset's components and engine, reading this format
            reward = Reward(reward.components, reward.engine, reward.strict, reward.__name__, format)
        results = reward.evaluate(list(completions), columns)
        names = [component.name for component, _ in reward.components]
        return {"rewards": [r.value for r in results],
                "components": {name: [r.components.get(name) for r in results] for name in names},
                "info": [r.info for r in results]}

    def run(self, code: str, tests: dict[str, Any] | str, language: str = "python",
            limits: dict[str, float] | None = None, repeats: int | None = None) -> dict[str, Any]:
        """``ExecutionResult.to_dict()`` of one run, within the service's limits."""
        self._check_cases(tests)
        suite = TestSuite.from_dict(tests)
        result = self._engine().sandbox.run(code, suite, language, self._limits(limits), repeats)
        return result.to_dict()

    def analyze(self, codes: Sequence[str], profile: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """``QualityReport.to_dict()`` of each source, in order."""
        self._check_batch(len(codes))
        return [report.to_dict() for report in self._analyze_codes(list(codes), profile)]

    def _analyze_codes(self, codes: list[str], profile: dict[str, Any] | None = None) -> list[QualityReport]:
        """Reports of ``codes`` under the service's bounds on ``profile``: chunks of a few
        sources, each a turn on one analysis worker, on all workers but one at once (about two
        chunks a worker, so that the request's analysis time is counted as it goes)."""
        bounded = self._profile(profile)
        share = max(1, self.config.analysis_workers - 1)
        size = max(1, min(MAX_CHUNK, math.ceil(len(codes) / (2 * share))))
        chunks = [codes[start:start + size] for start in range(0, len(codes), size)]
        if len(chunks) <= 1:
            return [report for chunk in chunks for report in self._analyze_chunk(chunk, bounded)]
        with ThreadPoolExecutor(min(share, len(chunks)), thread_name_prefix="rewardkit-analysis") as pool:
            # each chunk's turn is taken as this request (the scheduler reads it from the context)
            done = [pool.submit(contextvars.copy_context().run, self._analyze_chunk, chunk, bounded)
                    for chunk in chunks]
            return [report for future in done for report in future.result()]

    def _analyze_chunk(self, chunk: list[str], profile: dict[str, Any]) -> list[QualityReport]:
        """Reports of one chunk, analysed in a turn on one worker; infrastructure reports when the
        request has no analysis time left (no score, not a low one)."""
        try:
            with self.scheduler.turn("analysis"):
                return analyze_many(chunk, profile, workers=1)
        except OverBudget as exc:
            return [infrastructure_report("rewardkit-serve", f"not analysed: {exc}")] * len(chunk)

    def openrlhf(self, preset: str, objective: str | None, queries: Sequence[str],
                 prompts: Sequence[str] | None, labels: Sequence[Any] | None,
                 eos: Sequence[str] = (), fault: str | None = None) -> dict[str, Any]:
        """OpenRLHF's remote reward answer (:mod:`.openrlhf`): ``rewards``, ``scores`` (the pass
        rate) and ``extra_logs``, of completions cut from ``queries`` without their end text
        (the defaults and ``eos``); ``fault`` is the fault policy (:mod:`..rewards.faults`)."""
        policy = fault_policy(fault, "openrlhf")  # a bad one is refused before any work
        completions, columns = request_batch(queries, prompts, labels, eos)
        self._check_batch(len(completions))
        self._check_suites(columns)
        reward = with_pass_rate(self.reward(preset, objective))
        return answer_body(reward.evaluate(completions, columns), [c.name for c, _ in reward.components],
                           fault=policy)

    # -- checks -----------------------------------------------------------------------------------------
    def _profile(self, profile: dict[str, Any] | None) -> dict[str, Any]:
        """``profile`` with its time budget and size limits bounded by the service's."""
        for section, values in (profile or {}).items():
            if not isinstance(values, dict):
                raise ConfigError(f"profile section {section!r} must be an object, got "
                                  f"{type(values).__name__}")
        bounded = {section: dict(values) for section, values in (profile or {}).items()}
        thresholds, defaults = bounded.setdefault("thresholds", {}), load_profile().data["thresholds"]
        ceilings = {"tool_timeout_s": self.config.caps.tool_s} | \
            {name: defaults[name] for name in BOUNDED_THRESHOLDS}
        for name, ceiling in ceilings.items():
            asked = thresholds.get(name, defaults[name])
            if not isinstance(asked, (int, float)) or isinstance(asked, bool) or not asked > 0:
                raise ConfigError(f"threshold {name} must be a positive number, got {asked!r}")
            thresholds[name] = min(asked, ceiling)
        load_profile(bounded)  # the rest of it checked before any work: a ValueError is a 400
        return bounded

    def _check_suites(self, columns: dict[str, list[Any]]) -> None:
        """:meth:`_check_cases` for each distinct suite of the columns that hold suites."""
        for column in SUITE_COLUMNS:
            for tests in {id(tests): tests for tests in columns.get(column) or ()}.values():
                self._check_cases(tests)

    def _check_cases(self, tests: Any) -> None:
        """BatchTooLarge for a suite over the case cap, counted without building the suite (that
        is done once, by the engine or the run, which also says what is wrong with a bad one)."""
        cases = case_count(tests)  # in any shape a suite is read from (verl's, open-r1's)
        if cases is not None and cases > self.config.caps.cases:
            raise BatchTooLarge(f"a test suite with {cases} cases; this service takes at "
                                f"most {self.config.caps.cases} per suite (start it with a larger "
                                "--max-cases)")

    def _check_batch(self, size: int) -> None:
        if size > self.config.caps.batch:
            raise BatchTooLarge(f"{size} items in one request; this service takes at most "
                                f"{self.config.caps.batch} (split the batch, or start it with a "
                                "larger --max-batch)")

    def _limits(self, asked: dict[str, float] | None) -> Limits:
        if not asked:
            return self.config.limits
        ceiling = self.config.limits.to_dict()
        unknown = sorted(set(asked) - set(ceiling))
        if unknown:
            raise ConfigError(f"unknown limits {unknown}; known: {sorted(ceiling)}")
        over = [f"{name}={value:g} (at most {ceiling[name]:g})" for name, value in asked.items()
                if value > ceiling[name]]
        if over:
            raise ConfigError(f"limits above this service's: {', '.join(over)}")
        return Limits(**{**ceiling, **asked})
