"""The Afterburner iterative optimisation loop (the Afterburner paper's Algorithm 1), batched over problems.

Iteration 0 measures the original code of each problem, or generates one
from the Afterburner prompt with an empty original (as the seed does).
Each later iteration asks the generator to improve the current best code of
every problem (one ``generate`` call for all problems), runs every candidate
(a candidate whose problem has a passing best code in interleaved rounds with
that code on one worker, :meth:`~rewardkit.sandbox.Sandbox.run_paired`; the
others in one ``sandbox.run_many``) and keeps the best greedily:

* a passing candidate replaces a failing current one ("first passing");
* a failing candidate never replaces a passing one, and fail→fail keeps the
  current code too (the seed adopts a candidate only when it is strictly
  better, and two failures are not ordered);
* between passing codes the candidate must be better on the objective by
  more than the noise floor: its gain is the median over rounds of its ratio
  to the current code's neighbouring runs, and the floor the one the
  efficiency reward applies to such pairs
  (:func:`~rewardkit.rewards.components.paired_floor`); codes measured apart
  are compared with :func:`~rewardkit.rewards.components.noise_floor_for`.

The prompt shows the current best code, its metrics and, when it fails,
its own sandbox feedback.  ``feedback=False`` and ``show_original=False`` are
the seed's Table 2 ablations: "Remove Feedback" leaves out the execution
feedback, i.e. the measured performance (passed, time, memory, integral) and
the failure text; "Remove Original Code" leaves out the code and keeps its
performance (and failure text).  Every iteration is a :class:`Step` of the problem's
:class:`Trajectory`, with the per-sample values of the best code so far
(Pass@1, Beyond-T/M/I as ``rewardkit bench`` defines them, against the
passing references run in the same rounds as the step's codes, or at
iteration 0 those measured at the start); :func:`iteration_metrics` averages them over
problems for the Figure-5 plot, with how many prompts each iteration sent
and how many of them the generator gave no text for (the reason is in the
step's ``generator_error``).

A generator that answers none of an iteration's prompts (a server that is
down, a wrong URL or model name) stops the run with :class:`GenerationFailed`
instead of running on with empty answers.  Iteration 0 generates its first
codes before the references are measured, so that an unreachable server is
found within seconds.
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from tqdm import tqdm

from ..benchmarks import metrics
from ..benchmarks.loaders import runnable_code
from ..benchmarks.problem import Problem
from ..benchmarks.references import measure_references, metrics_of
from ..benchmarks.runner import HEADLINE, SampleResult, on_scale, reference_table, sample_values
from ..rewards.components import noise_floor_for, paired_floor
from ..rewards.engine import METRIC_OF, MIN_ROUNDS, Metrics, Paired
from ..rewards.extract import completion_text, extract_code
from ..sandbox import Sandbox
from ..sandbox.measurement import PAIRED_METRICS, MeasurementProtocol, PairedResult
from ..sandbox.sandbox import in_threads
from .generators.base import Generator, Prompt, Sampling
from .prompts import SYSTEM_PROMPT, afterburner_prompt, chat, instruction_for

WORDS = {"time": ("faster", "slower"), "memory": ("leaner", "heavier"),
         "integral": ("lower integral", "higher integral")}
NO_CODE = "no_code"  # the status of a completion with no code to run


@dataclass
class Step:
    """One iteration for one problem: the code tried, how it ran, and whether it became the best.

    ``metrics`` has ``passed``, ``status``, ``time_s``, ``peak_memory_kb``,
    ``integral_kb_s`` and ``spread``; ``best_iteration`` is the step whose
    code is the best after this one, and ``values`` that code's Pass@1 and
    Beyond values against the problem's references.
    """

    iteration: int
    code: str | None
    text: str  # the full completion, reasoning included ("" for a given original)
    metrics: dict[str, Any]
    passed: bool
    accepted: bool
    reason: str
    feedback: str = ""
    prompt: Prompt | None = None
    best_iteration: int = 0
    values: dict[str, float] = field(default_factory=dict)
    generator_error: str | None = None  # why the generator gave no text for this step's prompt


@dataclass
class Trajectory:
    """Every iteration of one problem's optimisation, in order."""

    problem_id: str
    objective: str
    steps: list[Step] = field(default_factory=list)

    @property
    def best(self) -> Step:
        """The step whose code is the best after the last iteration."""
        return self.steps[self.steps[-1].best_iteration]

    @property
    def best_code(self) -> str | None:
        """The best code found."""
        return self.best.code

    @property
    def best_metrics(self) -> dict[str, Any]:
        """The measured metrics of the best code."""
        return self.best.metrics

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: ids, the best code and metrics, then every step."""
        return {"problem_id": self.problem_id, "objective": self.objective, "best_code": self.best_code,
                "best_metrics": self.best_metrics, "best_iteration": self.steps[-1].best_iteration,
                "steps": [asdict(step) for step in self.steps]}


class GenerationFailed(RuntimeError):
    """The generator gave no text for any prompt of an iteration; the message says why.

    ``trajectories`` holds the iterations done before this one (none when
    iteration 0 failed), and ``reasons`` the generator's error per prompt.
    """

    def __init__(self, generator: str, iteration: int, reasons: list[str],
                 trajectories: list[Trajectory]) -> None:
        self.iteration, self.reasons, self.trajectories = iteration, reasons, trajectories
        common = "; ".join(f"{count} x {reason}" for reason, count in Counter(reasons).most_common(2))
        super().__init__(f"generator {generator!r} gave no text for any of the {len(reasons)} prompts of "
                         f"iteration {iteration}: {common}")


def judge(objective: str, current: Mapping[str, Any], candidate: Mapping[str, Any],
          paired: Paired | None = None) -> tuple[bool, str]:
    """Whether ``candidate`` replaces ``current`` (greedy keep-best, see the module docstring), and why.

    ``paired``: the candidate measured in rounds with the current code, whose ratio then
    gives the gain and whose spread the floor."""
    if candidate.get("status") == "sandbox_error":
        return False, "sandbox error (not judged)"
    if not candidate.get("passed"):
        return False, f"fails ({candidate.get('status')})"
    if not current.get("passed"):
        return True, "first passing"
    ratio = paired.ratio(objective) if paired is not None else None
    if paired is not None and ratio is not None:
        gain, floor = 1.0 - ratio, paired_floor(objective, paired)
    else:
        now, new = Metrics.from_dict(dict(current)), Metrics.from_dict(dict(candidate))
        floor = noise_floor_for(objective, now, new)
        before, after = now.value(objective), new.value(objective)
        gain = (before - after) / before if before > 0 else 0.0
    better, worse = WORDS[objective]
    if gain > floor:
        return True, f"{better} by {gain:.0%}"
    if gain < -floor:
        return False, f"{worse} by {-gain:.0%}"
    return False, f"within noise ({gain:+.1%}, floor {floor:.1%})"


def problem_text(problem: Problem) -> str:
    """What the prompt shows as the problem: the statement, and the starter code when there is one."""
    text = problem.statement.strip()
    if problem.starter_code.strip():
        text += f"\n\n## Starter code\n```{problem.language}\n{problem.starter_code.rstrip()}\n```"
    return text


def problem_key(problems: Sequence[Problem]) -> Callable[[Prompt], str]:
    """A function from an Afterburner prompt to its problem's id ("" if none), e.g. for ReplayGenerator.

    A prompt belongs to the problem whose :func:`problem_text` it shows
    between the template's "## Problem" and "## Original solution" headers.
    """
    texts: dict[str, str] = {}
    for problem in problems:
        marked = f"## Problem\n{problem_text(problem)}\n\n## Original solution\n"
        if texts.setdefault(marked, problem.problem_id) != problem.problem_id:
            raise ValueError(f"problems {texts[marked]} and {problem.problem_id} show the same text; "
                             "their prompts cannot be told apart")

    def key(prompt: Prompt) -> str:
        content = prompt if isinstance(prompt, str) else "\n".join(m.get("content", "") for m in prompt)
        return next((pid for marked, pid in texts.items() if marked in content), "")

    return key


def optimize(problems: Problem | Sequence[Problem], generator: Generator, objective: str = "time",
             iterations: int = 10, original_code: str | Mapping[str, str] | None = None,
             sandbox: Sandbox | None = None, feedback: bool = True, show_original: bool = True,
             sampling: Sampling | None = None, progress: bool = True) -> list[Trajectory]:
    """Run Algorithm 1 for ``iterations`` rounds on every problem; one trajectory per problem, in order.

    ``original_code`` is one code for every problem or a mapping from problem
    id to code; problems without one get a generated first code.  Without
    ``feedback`` the prompts leave out the execution feedback (the current
    code's measured passed / time / memory / integral and why it failed);
    without ``show_original`` they leave out the current code (its
    performance and failure text stay).  These are the seed's Table 2
    ablations.
    References without metrics are measured first, with ``sandbox``
    (default ``Sandbox(repeats=3)``, closed at the end).  A ``sampling.seed``
    is offset by the iteration, so that a rejected candidate's unchanged
    prompt does not get the same completion again.  Progress goes to stderr.
    """
    instruction_for(objective)
    if iterations < 0:
        raise ValueError(f"iterations must be zero or more, got {iterations}")
    chosen = [problems] if isinstance(problems, Problem) else list(problems)
    if not chosen:
        raise ValueError("no problems to optimise")
    originals = _originals(chosen, original_code)
    loop = _Loop(chosen, generator, objective, sandbox or Sandbox(repeats=3), sampling, feedback)
    try:
        drafts = loop.draft(originals)  # before measuring: a generator that never answers fails fast
        measure_references([p for p in chosen if not p.measured],
                           loop.sandbox, progress=progress)
        with tqdm(total=iterations + 1, desc="optimizing", unit="iteration", disable=not progress,
                  file=sys.stderr) as bar:
            for iteration in range(iterations + 1):
                if iteration == 0:
                    loop.start(originals, drafts)
                else:
                    loop.improve(feedback, show_original)
                failed = sum(t.steps[-1].generator_error is not None for t in loop.trajectories)
                bar.set_postfix(passing=f"{loop.passing()}/{len(chosen)}", no_text=failed)
                bar.update()
    finally:
        if sandbox is None:
            loop.sandbox.close()
    return loop.trajectories


def iteration_metrics(trajectories: Sequence[Trajectory], seed: int = 0) -> list[dict[str, Any]]:
    """Per iteration: Pass@1 and Beyond-T/M/I of the best codes so far, with 95% CIs across problems.

    Each row also counts the prompts sent to the generator (``prompts``) and
    those it gave no text for (``generation_failures``).  A metric's value
    is the mean over the problems that have it; its CI bootstraps the
    problems (:func:`~rewardkit.benchmarks.metrics.bootstrap` drawing as many
    problems as there are, with replacement).
    """
    rows = []
    for index in range(len(trajectories[0].steps) if trajectories else 0):
        steps = [t.steps[index] for t in trajectories]
        row: dict[str, Any] = {"iteration": index, "accepted": sum(s.accepted for s in steps),
                               "passing_candidates": sum(s.passed for s in steps),
                               "prompts": sum(s.prompt is not None for s in steps),
                               "generation_failures": sum(s.generator_error is not None for s in steps)}
        for name in HEADLINE:
            values = [s.values[name] for s in steps if name in s.values]
            if values:
                _, low, high = metrics.bootstrap([values], k=len(values), seed=seed)
                row[name] = {"value": statistics.fmean(values), "ci95": [low, high], "problems": len(values)}
        rows.append(row)
    return rows


class _Loop:
    """The state of one batched run: a trajectory per problem, its last step's best being current."""

    def __init__(self, problems: list[Problem], generator: Generator, objective: str, sandbox: Sandbox,
                 sampling: Sampling | None, feedback: bool = True) -> None:
        self.problems, self.generator, self.objective = problems, generator, objective
        self.feedback = feedback  # False: the "Remove Feedback" ablation, no metrics nor failure text
        self.sandbox, self.sampling = sandbox, sampling
        self.trajectories = [Trajectory(p.problem_id, objective) for p in problems]

    def draft(self, originals: list[str | None]) -> dict[int, tuple[Prompt, str, str | None]]:
        """Iteration 0's generation: per problem without an original, its prompt, text and error."""
        todo = [i for i, code in enumerate(originals) if code is None]
        prompts = [self._prompt(self.problems[i], None, None, None) for i in todo]
        texts, errors = self._generate(prompts, 0)
        return {i: (prompt, text, error) for i, prompt, text, error in zip(todo, prompts, texts, errors,
                                                                            strict=True)}

    def start(self, originals: list[str | None], drafts: dict[int, tuple[Prompt, str, str | None]]) -> None:
        """Iteration 0: the given originals, or the first codes :meth:`draft` generated."""
        codes = [code if code is not None else _code(drafts[i][1], self.problems[i].language)
                 for i, code in enumerate(originals)]
        for i, (run, feedback) in self._run(codes).items():
            prompt, text, error = drafts.get(i, (None, "", None))
            reason = "original" if originals[i] is not None else "generated"
            status = "passes" if run["passed"] else f"fails ({run['status']})"
            self._record(i, Step(0, codes[i], text, run, bool(run["passed"]), True, f"{reason}, {status}",
                                 _why(feedback, error), prompt, generator_error=error))

    def improve(self, feedback: bool, show_original: bool) -> None:
        """One iteration: a candidate per problem from its current best, judged against it."""
        bests = [t.best for t in self.trajectories]
        prompts = [self._prompt(problem, best.code if show_original else None, best.metrics,
                                best.feedback if feedback and not best.passed else None)
                   for problem, best in zip(self.problems, bests, strict=True)]
        iteration = len(self.trajectories[0].steps)
        texts, errors = self._generate(prompts, iteration)
        codes = [_code(text, p.language) for text, p in zip(texts, self.problems, strict=True)]
        paired = self._paired(codes, [best.code if best.passed else None for best in bests])
        alone = self._run(codes, skip=set(paired))
        for i, code in enumerate(codes):
            measured = paired.get(i)
            run, why = alone[i] if measured is None else measured.metrics_and_feedback
            pair = measured.pair if measured else None
            accepted, reason = judge(self.objective, bests[i].metrics, run, pair)
            in_round = measured.best_and_references(accepted, self.sandbox.protocol) if measured else None
            self._record(i, Step(iteration, code, texts[i], run, bool(run["passed"]), accepted, reason,
                                 _why(why, errors[i]), prompts[i], generator_error=errors[i]), in_round)

    def passing(self) -> int:
        """How many problems have a passing best code."""
        return sum(t.best.passed for t in self.trajectories)

    def _prompt(self, problem: Problem, code: str | None, measured: Mapping[str, Any] | None,
                feedback: str | None) -> Prompt:
        text = afterburner_prompt(problem_text(problem), self.objective, problem.language, code, measured,
                                  feedback, execution_feedback=self.feedback)
        return chat(text, SYSTEM_PROMPT)

    def _generate(self, prompts: list[Prompt], iteration: int) -> tuple[list[str], list[str | None]]:
        """One text per prompt and, per prompt, the generator's error if it gave none.

        :class:`GenerationFailed` when it gave an error for every prompt.
        """
        if not prompts:
            return [], []
        sampling = self.sampling
        if sampling is not None and sampling.seed is not None:
            sampling = replace(sampling, seed=sampling.seed + iteration)
        texts = self.generator.generate(prompts, sampling)
        if len(texts) != len(prompts):
            raise RuntimeError(f"generator {self.generator.name!r} gave {len(texts)} texts for "
                               f"{len(prompts)} prompts")
        errors = list(self.generator.last_errors)
        if len(errors) != len(texts):
            errors = [None] * len(texts)
        reasons = [error for error in errors if error is not None]
        if len(reasons) == len(prompts):
            raise GenerationFailed(self.generator.name, iteration, reasons, self.trajectories)
        return texts, errors

    def _paired(self, codes: list[str | None], currents: list[str | None]) -> dict[int, _InRounds]:
        """Per problem with a candidate and a passing current code: the candidate, the current code
        and the problem's passing references measured in the same rounds on one worker, the
        problems in parallel."""
        todo = {i: (current, code) for i, (code, current) in enumerate(zip(codes, currents, strict=True))
                if code is not None and current is not None}
        if not todo:
            return {}
        rounds = max(MIN_ROUNDS, self.sandbox.repeats)

        def one(i: int) -> _InRounds:
            problem, (current, code) = self.problems[i], todo[i]
            return _InRounds.measure(self.sandbox, problem, runnable_code(problem, current),
                                     runnable_code(problem, code), rounds)

        indices = list(todo)
        return dict(zip(indices, in_threads(one, indices, self.sandbox.workers), strict=True))

    def _run(self, codes: list[str | None], skip: Collection[int] = ()
             ) -> dict[int, tuple[dict[str, Any], str]]:
        """Each code's metrics and feedback by index, but those in ``skip`` (measured in pairs
        instead); every code that exists runs in one ``run_many``."""
        jobs = [(i, (runnable_code(p, code), p.tests, p.language))
                for i, (p, code) in enumerate(zip(self.problems, codes, strict=True))
                if code is not None and i not in skip]
        runs = self.sandbox.run_many([job for _, job in jobs])
        results = dict(zip([i for i, _ in jobs], runs, strict=True))
        return {i: (metrics_of(results[i]), results[i].feedback) if i in results
                else ({"passed": False, "status": NO_CODE}, "no code found in the completion")
                for i in range(len(codes)) if i not in skip}

    def _record(self, index: int, step: Step,
                in_round: tuple[dict[str, Any], dict[str, list[float]]] | None = None) -> None:
        """Append ``step``; its values rank the best code among the references measured with it
        in ``in_round`` (its metrics and theirs, on one scale), else among those measured when
        the run started."""
        trajectory, problem = self.trajectories[index], self.problems[index]
        previous = trajectory.steps[-1].best_iteration if trajectory.steps else 0
        step.best_iteration = step.iteration if step.accepted else previous
        trajectory.steps.append(step)
        step.values = _values(problem, *in_round) if in_round else _values(problem, trajectory.best.metrics)


@dataclass
class _InRounds:
    """One problem's step measured in rounds: the current code as the baseline, the candidate and
    the passing references that are neither (:attr:`others`) as candidates, in that order."""

    base: str
    candidate: str
    references: list[str]
    measured: PairedResult

    @classmethod
    def measure(cls, sandbox: Sandbox, problem: Problem, base: str, candidate: str, rounds: int) -> _InRounds:
        """Run ``base``, ``candidate`` and ``problem``'s passing references in ``rounds`` rounds."""
        references = [r.code for r in problem.passing_references()]
        measured = sandbox.run_paired(base, [candidate, *_others(references, base, candidate)],
                                      problem.tests, problem.language, rounds=rounds)
        return cls(base, candidate, references, measured)

    @property
    def others(self) -> list[str]:
        """The references measured as candidates of their own."""
        return _others(self.references, self.base, self.candidate)

    @property
    def metrics_and_feedback(self) -> tuple[dict[str, Any], str]:
        """The candidate's metrics (its runs combined) and its feedback."""
        result = self.measured.candidates[0]
        return metrics_of(result), result.feedback

    @property
    def pair(self) -> Paired | None:
        """The candidate's ratios to the current code and their noise, when both passed."""
        ratios = self.measured.ratios[0]
        return Paired(ratios, self.measured.noise) if ratios else None

    def best_and_references(self, accepted: bool, protocol: MeasurementProtocol
                            ) -> tuple[dict[str, Any], dict[str, list[float]]] | None:
        """The best code's metrics after the step and the passing references' values, all on the
        current code's scale from these rounds; None when the current code failed in them."""
        baseline = self.measured.baseline
        if not baseline.passed:
            return None
        scale = {name: float(getattr(baseline, name)) for name in PAIRED_METRICS}
        scaled = on_scale(self.measured, scale, protocol)
        runs = dict(zip([self.candidate, *self.others], scaled, strict=True))
        runs[self.base] = baseline
        best = runs[self.candidate if accepted else self.base]
        return metrics_of(best, protocol), reference_table([runs[code] for code in self.references], protocol)


def _others(references: list[str], base: str, candidate: str) -> list[str]:
    """The references' distinct codes, but ``base`` and ``candidate``."""
    return [ref for ref in dict.fromkeys(references) if ref not in (base, candidate)]


def _originals(problems: list[Problem], original_code: str | Mapping[str, str] | None) -> list[str | None]:
    if original_code is None or isinstance(original_code, str):
        return [original_code] * len(problems)
    unknown = set(original_code) - {p.problem_id for p in problems}
    if unknown:
        raise ValueError(f"original code for unknown problems: {', '.join(sorted(unknown))}")
    return [original_code.get(p.problem_id) for p in problems]


def _why(feedback: str, generator_error: str | None) -> str:
    return f"the generator gave no text: {generator_error}" if generator_error else feedback


def _code(text: str, language: str) -> str | None:
    value = completion_text(text).value
    return extract_code(value, language) if value is not None else None


def _values(problem: Problem, measured: Mapping[str, Any],
            references: Mapping[str, Sequence[float]] | None = None) -> dict[str, float]:
    """The code's Pass@1 and Beyond values, exactly as ``rewardkit bench`` computes them per sample;
    ``references``: the passing references' values measured with it (default: their ``metrics``)."""
    time_s, memory, integral = (float(measured.get(key, 0.0)) for key in METRIC_OF.values())
    status, passed = str(measured.get("status")), bool(measured.get("passed"))
    result = SampleResult(problem.problem_id, 0, "", status, passed, time_s, memory, integral, "")
    return {name: value for name, value in sample_values(result, problem, references).items()
            if name in HEADLINE}
