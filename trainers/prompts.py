"""Prompt templates of the Afterburner seed (appendix F), in rewardkit's own words.

Three pieces, with the same slots as the paper's:

* :data:`SYSTEM_PROMPT`: answer with ``<thinking>`` then ``<solution>``
  holding one fenced code block (the format the ``afterburner_format``
  reward checks);
* :func:`baseline_prompt` (F.1): solve the problem efficiently, no history;
* :func:`afterburner_prompt` (F.3): problem, original code and its measured
  performance, and what to do: write a first solution when there is no
  original, fix it when it failed, else make it faster / leaner.

The seed's Table 2 ablations change what the prompt shows: "Remove Feedback"
leaves out the execution feedback (the "Original performance" section, i.e.
passed / time / memory / integral as Monolith measured them, and the failure
text rewardkit adds), "Remove Original Code" leaves the original solution
empty and keeps its performance (``original_code=None``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

INSTRUCTIONS = {
    "time": "time-efficient",
    "memory": "memory-efficient",
    "integral": "time- and memory-efficient",
}
LANGUAGE_NAMES = {"python": "Python 3", "cpp": "C++", "c": "C", "java": "Java", "javascript": "JavaScript",
                  "go": "Go", "rust": "Rust"}

SYSTEM_PROMPT = (
    "You improve programs. First reason about the problem and the code inside <thinking> and "
    "</thinking>. Then give your final answer inside <solution> and </solution>: one complete "
    "program in a single fenced code block with its language tag, and nothing else after it."
)

BASELINE_TEMPLATE = """You are a skilled competitive programmer.

Write a {instruction} solution to the problem below in {language}.

## Problem
{problem}

## Answer format
Give the complete code in one fenced code block tagged with the language.
Keep the exact function or class signature of the starter code.
{starter}"""

AFTERBURNER_TEMPLATE = """## Task
Solve the problem below in {language}.

## Problem
{problem}

## Original solution
{original}
{performance}
## What to do
- If the original solution is empty, write a first solution.
- If it did not pass, fix it.
- If it passed, make it more {instruction} while keeping it correct.
- Give the complete code in one fenced code block tagged with the language.
"""
PERFORMANCE_TEMPLATE = """
## Original performance
Passed: {passed} | Time: {time} | Memory: {memory} | Integral: {integral}
"""


def instruction_for(objective: str) -> str:
    """The efficiency instruction of an objective (time, memory, integral)."""
    if objective not in INSTRUCTIONS:
        raise ValueError(f"unknown objective {objective!r}; use one of {', '.join(INSTRUCTIONS)}")
    return INSTRUCTIONS[objective]


def baseline_prompt(problem: str, objective: str = "time", language: str = "python",
                    starter_code: str = "") -> str:
    """F.1: ask for an efficient solution straight away."""
    starter = f"\n## Starter code\n```{language}\n{starter_code.rstrip()}\n```\n" if starter_code else ""
    return BASELINE_TEMPLATE.format(instruction=instruction_for(objective),
                                    language=LANGUAGE_NAMES.get(language, language), problem=problem.strip(),
                                    starter=starter)


def afterburner_prompt(problem: str, objective: str = "time", language: str = "python",
                       original_code: str | None = None,
                       original_metrics: Mapping[str, Any] | None = None,
                       feedback: str | None = None, *, execution_feedback: bool = True) -> str:
    """F.3: improve ``original_code`` given its measured performance (and the failure, if any).

    ``original_metrics`` has ``passed``, ``time_s``, ``peak_memory_kb`` and
    ``integral_kb_s``; ``feedback`` (the sandbox's text for the first
    failing test) is appended when the original failed.  With
    ``execution_feedback=False`` (the seed's "Remove Feedback" ablation,
    Table 2) neither the metrics nor the failure text are shown.
    """
    metrics = dict(original_metrics or {})
    original = f"```{language}\n{original_code.rstrip()}\n```" if original_code else "(empty)"
    performance = PERFORMANCE_TEMPLATE.format(
        passed=_show(metrics.get("passed")), time=_show(metrics.get("time_s"), " s"),
        memory=_show(metrics.get("peak_memory_kb"), " KiB"),
        integral=_show(metrics.get("integral_kb_s"), " KiB·s")) if execution_feedback else ""
    text = AFTERBURNER_TEMPLATE.format(
        language=LANGUAGE_NAMES.get(language, language), problem=problem.strip(), original=original,
        performance=performance, instruction=instruction_for(objective))
    if execution_feedback and feedback and not metrics.get("passed"):
        text += f"\n## Why it failed\n{feedback.strip()}\n"
    return text


def chat(prompt: str, system: str | None = SYSTEM_PROMPT) -> list[dict[str, str]]:
    """``prompt`` as chat messages, with the system prompt first."""
    return ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]


def _show(value: Any, unit: str = "") -> str:
    if value is None:
        return "n/a"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}{unit}"
    return f"{value}{unit}"
