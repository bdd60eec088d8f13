"""Attacks on the rewards' formulas: quality paid for code that does nothing, and time differences
below the meter's resolution paid as gains.  Real sandbox runs and analyses, no stand-ins.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator

import pytest

from rewardkit import rewards
from rewardkit.rewards import Engine
from rewardkit.rewards.components import RESOLUTION, resolution_for
from rewardkit.sandbox import Sandbox
from rewardkit.sandbox.runtime.languages import LANGUAGES
from rewardkit.trainers.datasets import answer_text

SUM_TESTS = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{n * (n + 1) // 2}\n"}
                                        for n in (3, 100, 1000)]}
DOCSTRING = '"""Read n and print the sum 1 + 2 + ... + n."""\n'
# correct, with findings in every characteristic (unused imports, subprocess, a bare except, a
# linear search and a string built in a loop): the CISQ mean is 0.30
FLAWED = ("import os\nimport subprocess\nimport sys\n\ntry:\n    n = int(input())\nexcept:\n    n = 0\n"
          "seen = []\ndigits = ''\nfor d in str(n * (n + 1) // 2):\n    if d in seen:\n        pass\n"
          "    seen.append(d)\n    digits += d\nprint(digits)\n")


def fenced(code: str) -> str:
    return f"```python\n{code}```"


def test_code_that_does_nothing_earns_no_quality(engine: Engine) -> None:
    """Under the paper's formula a lone docstring outscores a correct answer with findings; gated
    (the default) it earns format alone, and the run behind the gate is pass rate's own."""
    samples = [{"completion": fenced(DOCSTRING), "tests": SUM_TESTS},
               {"completion": fenced(FLAWED), "tests": SUM_TESTS}]
    paper = rewards.cisq_grpo(engine=engine, quality_gate=None).score(samples)
    assert paper[0].value == pytest.approx(0.7)
    assert paper[0].value > paper[1].value  # the hack the gate closes

    before = engine.executions
    docstring, flawed = rewards.cisq_grpo(engine=Engine(sandbox=engine.sandbox)).score(samples)
    assert docstring.components["quality"] == 0.0
    assert docstring.value == pytest.approx(0.2)
    assert flawed.components == paper[1].components and flawed.value > 0.5
    assert engine.executions == before  # the other engine ran each completion once, for both

    [gated] = rewards.quality_efficiency(engine=engine).score(
        [{"completion": answer_text(DOCSTRING, "plan"), "tests": SUM_TESTS,
          "baseline_metrics": {"passed": True, "time_s": 0.01}}])
    assert gated.components["quality"] == 0.0


def test_each_completion_runs_once_for_pass_rate_and_the_gate(sandbox: Sandbox) -> None:
    engine = Engine(sandbox=sandbox)
    reward = rewards.cisq_grpo(engine=engine)
    group = [fenced(DOCSTRING), fenced(FLAWED), fenced(DOCSTRING)]
    reward(completions=group, tests=[SUM_TESTS] * 3)
    assert engine.executions == 2  # two distinct completions


def test_quality_alone_scores_code_without_tests(sandbox: Sandbox) -> None:
    """A row with no tests has nothing to gate on: quality alone scores its analysis, unrun."""
    engine = Engine(sandbox=sandbox)
    [result] = rewards.quality(engine=engine).score([{"completion": fenced(DOCSTRING)}])
    assert result.value == 1.0
    assert engine.executions == 0
    # with tests, the same reward gates: the docstring passes none of them
    [tested] = rewards.quality(engine=engine).score([{"completion": fenced(DOCSTRING), "tests": SUM_TESTS}])
    assert tested.value == 0.0 and engine.executions == 1


def test_an_unknown_gate_is_refused() -> None:
    with pytest.raises(rewards.ConfigError, match="passed_any"):
        rewards.components.quality(gate="passed_all")


# -- the meters' resolution ------------------------------------------------------------------
ONE_CASE = {"mode": "stdio", "cases": [{"input": "100\n", "output": "5050\n"}]}
CPP_SUM = ('#include <iostream>\n#include <string>\n'
            'int main(){long n; std::cin >> n; std::cout << n * (n + 1) / 2 << "\\n";}\n')
PY_SUM = "n = int(input())\nprint(n * (n + 1) // 2)\n"
COPIES = 6
# the sum by a while loop (tens of ms of CPU over the three cases), and by a for loop over pairs:
# 2-3x faster
PY_SLOW = "n = int(input())\ntotal = i = 0\nwhile i <= n:\n    total += i\n    i += 1\nprint(total)\n"
PY_FAST = ("n = int(input())\ntotal = 0\nfor i in range(1, n + 1, 2):\n    total += 2 * i + 1\n"
           "if n % 2:\n    total -= n + 1\nprint(total)\n")
LOOP_TESTS = {"mode": "stdio", "cases": [{"input": "200000\n", "output": f"{200_000 * 200_001 // 2}\n"}] * 3}


@pytest.fixture(scope="module")
def timed() -> Iterator[Engine]:
    """An engine measuring as the efficiency presets do: three repeats, two workers."""
    with Sandbox(workers=2, repeats=3) as sandbox:
        yield Engine(sandbox=sandbox)


@pytest.mark.parametrize(("language", "code", "comment"), [("cpp", CPP_SUM, "//"), ("python", PY_SUM, "#")])
def test_comment_only_copies_of_a_tiny_program_score_zero(timed: Engine, language: str, code: str,
                                                          comment: str) -> None:
    """Six copies of a sub-millisecond program, differing from the baseline in a comment only, all
    score 0: their times differ by less than the language's resolution."""
    reward = rewards.afterburner("time", engine=timed)
    completions = [answer_text(f"{code}{comment} copy {n}\n", "plan", language) for n in range(COPIES)]
    results = reward.score([{"completion": completion, "tests": ONE_CASE, "language": language,
                             "baseline_code": f"{code}{comment} baseline\n"} for completion in completions])
    scores = [r.components["efficiency_time"] for r in results]
    assert scores == [0.0] * COPIES, [r.info["efficiency_time"] for r in results]


def test_a_real_speedup_above_the_resolution_still_counts(timed: Engine) -> None:
    """A candidate 2x faster over tens of milliseconds scores above 0 in the median of 3 tries."""
    reward = rewards.efficiency("time", engine=timed)
    scores = []
    for n in range(3):
        [value] = reward(completions=[answer_text(f"{PY_FAST}# try {n}\n", "plan")], tests=[LOOP_TESTS],
                         baseline_code=[f"{PY_SLOW}# try {n}\n"])
        scores.append(value)
    assert statistics.median(scores) > 0, scores


def test_every_language_has_a_resolution() -> None:
    assert set(RESOLUTION) == set(LANGUAGES)
    assert resolution_for("time", "c++") == RESOLUTION["cpp"]["time"]  # an alias names the language
    assert resolution_for("integral", "cpp") == RESOLUTION["cpp"]["integral"]
    assert resolution_for("memory", "cpp") == resolution_for("instructions", "cpp") == 0.0
