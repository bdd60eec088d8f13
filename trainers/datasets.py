"""Training sets of the Afterburner seed (§4, appendix E) from any set of :class:`Problem`.

Every builder needs the problems' references measured on this machine: rows
are ranked by those measurements, and GRPO prompts show them.  References
without metrics are measured first
(:func:`rewardkit.benchmarks.references.measure_references`, cached per
machine), in ``sandbox`` or, by default, a sandbox with the efficiency
presets' repeats (3), as ``rewardkit train`` measures them.

* :func:`grpo_rows` (DS_GRPO): a prompt (P, I, C, M) per problem and the
  columns the rewards read; no target answer.
* :func:`sft_rows` (DS_SFT): the prompt shows a slower reference C⁻, the
  completion is a faster one C⁺ in the Afterburner format.
* :func:`dpo_rows` (DS_DPO): three references ranked on the objective: the
  middle one in the prompt, the best chosen, the worst rejected.
* :func:`cold_start_filter` (DS_COLD): keep responses in the Afterburner format.

Rows are plain dicts (``datasets.Dataset.from_list(rows)``); ``conversational``
picks TRL's chat format (system prompt, then the user prompt) or its standard
one (the system prompt's text above the prompt).  ``tests`` and
``baseline_metrics`` are JSON strings, so that Arrow keeps them whole.  The
seed mixes its three instructions: concatenate the rows of each objective.
Every row keeps its ``objective`` column, and GRPO rewards each row on its
own objective (:func:`rewardkit.trainers.grpo.build_trainer` with
``objective=None``, or a preset's ``objective="row"``)::

    rows = [row for objective in ("time", "memory", "integral")
            for row in grpo_rows(problems, objective)]
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from typing import Any

from ..benchmarks.problem import Problem, Reference
from ..benchmarks.references import measure_references
from ..rewards.engine import METRIC_OF
from ..rewards.formulas import afterburner_format
from ..rewards.presets import EFFICIENCY_REPEATS
from ..sandbox import Sandbox
from .prompts import SYSTEM_PROMPT, afterburner_prompt, chat, instruction_for

Row = dict[str, Any]
Picker = Callable[[Problem], Reference | None]

UNITS = {"time": "s", "memory": "KiB", "integral": "KiB·s"}
BASELINE_KEYS = ("passed", "time_s", "peak_memory_kb", "integral_kb_s", "spread")
DRAWS_PER_GROUP = 20  # random draws tried per wanted pair or triple before giving up on a problem


def grpo_rows(problems: Iterable[Problem], objective: str = "time",
              original: str | Picker = "slowest", conversational: bool = True,
              sandbox: Sandbox | None = None) -> list[Row]:
    """DS_GRPO: one prompt per problem, showing ``original`` and its measured performance.

    ``original`` is ``"slowest"`` (the passing reference that measures worst
    on the objective; problems without one are left out) or a function picking a
    reference of a problem, ``None`` for an empty original (write a first
    solution).  Columns: ``prompt``, ``tests``, ``baseline_code``,
    ``baseline_metrics``, ``language``, ``problem_id``, ``objective``.
    """
    if original == "slowest":
        pick = _slowest(objective)
    elif callable(original):
        pick = original
    else:
        raise ValueError(f"original must be 'slowest' or a function, got {original!r}")
    rows = []
    for problem in _measured(problems, sandbox):
        reference = pick(problem)
        if reference is None and original == "slowest":
            continue
        code = reference.code if reference else ""
        metrics = _baseline_metrics(reference)
        rows.append({"prompt": _prompt(problem, objective, code, metrics, conversational),
                     "tests": json.dumps(problem.tests.to_dict()), "baseline_code": code,
                     "baseline_metrics": json.dumps(metrics), "language": problem.language,
                     "problem_id": problem.problem_id, "objective": objective})
    return rows


def sft_rows(problems: Iterable[Problem], objective: str = "time", per_problem: int = 1,
             margin: float = 0.05, conversational: bool = True, seed: int = 0,
             sandbox: Sandbox | None = None) -> list[Row]:
    """DS_SFT: ``per_problem`` random pairs of passing references, slower C⁻ → faster C⁺.

    A pair counts only when C⁻ measures more than ``1 + margin`` times C⁺ on
    the objective, so that timing noise does not decide which is better.
    Columns: ``prompt``, ``completion``, ``problem_id``, ``objective``.
    """
    rows = []
    for problem in _measured(problems, sandbox):
        for better, worse in _groups(problem, objective, 2, per_problem, margin, seed):
            rows.append({"prompt": _prompt(problem, objective, worse.code, _metrics(worse), conversational),
                         "completion": _completion(problem, objective, better, worse, conversational),
                         "problem_id": problem.problem_id, "objective": objective})
    return rows


def dpo_rows(problems: Iterable[Problem], objective: str = "time", per_problem: int = 1,
             margin: float = 0.05, conversational: bool = True, seed: int = 0,
             sandbox: Sandbox | None = None) -> list[Row]:
    """DS_DPO: ``per_problem`` random triples of passing references ranked on the objective.

    The mediocre one is the prompt's original, the best the ``chosen`` and
    the worst the ``rejected`` answer; the worst must measure more than
    ``1 + margin`` times the best.  Columns: ``prompt``, ``chosen``,
    ``rejected``, ``problem_id``, ``objective``.
    """
    rows = []
    for problem in _measured(problems, sandbox):
        for best, middle, worst in _groups(problem, objective, 3, per_problem, margin, seed):
            rows.append({"prompt": _prompt(problem, objective, middle.code, _metrics(middle), conversational),
                         "chosen": _completion(problem, objective, best, middle, conversational),
                         "rejected": _completion(problem, objective, worst, middle, conversational),
                         "problem_id": problem.problem_id, "objective": objective})
    return rows


def cold_start_filter(texts: Iterable[str]) -> list[str]:
    """DS_COLD: the responses that match the Afterburner format regex (appendix E.5)."""
    return [text for text in texts if afterburner_format(text) > 0]


def answer_text(code: str, rationale: str, language: str = "python") -> str:
    """A response in the Afterburner format: ``<thinking>`` rationale, ``<solution>`` with one code block."""
    return (f"<thinking>{rationale}</thinking>\n"
            f"<solution>\n```{language}\n{code.strip()}\n```\n</solution>")


# -- helpers ------------------------------------------------------------------------------------------
def _measured(problems: Iterable[Problem], sandbox: Sandbox | None) -> list[Problem]:
    """``problems``, once every reference has metrics: those without are measured in ``sandbox``."""
    problems = list(problems)
    unmeasured = [p for p in problems if not p.measured]
    if unmeasured and sandbox is not None:
        measure_references(unmeasured, sandbox)
    elif unmeasured:
        with Sandbox(repeats=EFFICIENCY_REPEATS) as own:
            measure_references(unmeasured, own)
    return problems


def _value(reference: Reference, objective: str) -> float:
    return float((reference.metrics or {})[METRIC_OF[objective]])


def _slowest(objective: str) -> Picker:
    instruction_for(objective)  # a bad objective fails here, before any work

    def pick(problem: Problem) -> Reference | None:
        passing = problem.passing_references()
        return max(passing, key=lambda r: _value(r, objective)) if passing else None

    return pick


def _groups(problem: Problem, objective: str, size: int, count: int, margin: float,
            seed: int) -> list[list[Reference]]:
    """Up to ``count`` distinct random groups of ``size`` passing references, best first.

    The worst of a group must measure more than ``1 + margin`` times its best.
    The draws depend on ``seed``, the problem and the objective only.
    """
    instruction_for(objective)
    passing = problem.passing_references()
    if len(passing) < size:
        return []
    rng = random.Random(f"{seed}/{problem.problem_id}/{objective}")
    seen: set[tuple[int, ...]] = set()
    groups: list[list[Reference]] = []
    for _ in range(count * DRAWS_PER_GROUP):
        pick = tuple(sorted(rng.sample(range(len(passing)), size)))
        if pick in seen:
            continue
        seen.add(pick)
        group = sorted((passing[i] for i in pick), key=lambda r: _value(r, objective))
        if _value(group[-1], objective) > (1 + margin) * _value(group[0], objective):
            groups.append(group)
            if len(groups) == count:
                break
    return groups


def _metrics(reference: Reference) -> dict[str, Any]:
    return dict(reference.metrics or {})


def _baseline_metrics(reference: Reference | None) -> dict[str, Any]:
    """What the rewards compare with: the measured metrics, or a failing empty original."""
    if reference is None:
        return {"passed": False}
    return {key: value for key, value in _metrics(reference).items() if key in BASELINE_KEYS}


def _prompt(problem: Problem, objective: str, code: str, metrics: dict[str, Any],
            conversational: bool) -> str | list[dict[str, str]]:
    text = afterburner_prompt(problem.statement, objective, problem.language, code or None, metrics)
    return chat(text) if conversational else f"{SYSTEM_PROMPT}\n\n{text}"


def _completion(problem: Problem, objective: str, answer: Reference, original: Reference,
                conversational: bool) -> str | list[dict[str, str]]:
    text = answer_text(answer.code, _rationale(objective, answer, original), problem.language)
    return [{"role": "assistant", "content": text}] if conversational else text


def _rationale(objective: str, answer: Reference, original: Reference) -> str:
    """A short thinking text: where the original stands, and the approach of the answer."""
    approach = answer.label or "a better algorithm and fewer operations"
    return (f"The original passes with {objective} {_value(original, objective):.4g} {UNITS[objective]}. "
            f"To make it more {instruction_for(objective)}, use: {approach}.")

