"""The stdlib's debuggers, profilers, timers and loaders run code given as text: a program that hides
its code in them scores no better than its code in plain sight."""

from __future__ import annotations

import pytest

from rewardkit.analyzers import analyze, analyze_many

# faults of every kind: a shell command from input (bandit), a type error (mypy), a bare except
PLAIN = (
    "import subprocess\n"
    "LIMIT: int = 'ten'\n"
    "try:\n"
    "    subprocess.call(input(), shell=True)\n"
    "except:\n"
    "    pass\n"
)
HEAD = '"""Runs its code."""\n'
# Each runs PLAIN (or hides it from the tools in some other way the stdlib offers)
RUNNERS = {
    "timeit.timeit": f"import timeit\ntimeit.timeit({PLAIN!r}, number=1)\n",
    "from timeit import Timer": f"from timeit import Timer as T\nT({PLAIN!r}).timeit(1)\n",
    "timeit.repeat setup": f"import timeit\ntimeit.repeat('pass', setup={PLAIN!r}, number=1)\n",
    "cProfile.run": f"import cProfile\ncProfile.run({PLAIN!r})\n",
    "profile.runctx": f"import profile\nprofile.runctx({PLAIN!r}, {{}}, {{}})\n",
    "pdb.run": f"import pdb\npdb.run({PLAIN!r})\n",
    "trace.Trace().run": f"import trace\ntrace.Trace(count=False, trace=False).run({PLAIN!r})\n",
    "bdb.Bdb().run": f"import bdb\nbdb.Bdb().run({PLAIN!r})\n",
    "star import of bdb": f"from bdb import *\nBdb().runctx({PLAIN!r}, {{}}, {{}})\n",
    "doctest": "import doctest\n\n\ndef f():\n    '''\n    >>> import os; os.system(input())\n    '''\n"
               "\n\ndoctest.run_docstring_examples(f, {})\n",
    "breakpoint reads code from stdin": "breakpoint()\n",
}


@pytest.fixture(scope="module")
def plain_score() -> float:
    return analyze(HEAD + PLAIN).score


@pytest.mark.parametrize("name", list(RUNNERS))
def test_hiding_code_in_a_runner_does_not_pay(name: str, plain_score: float) -> None:
    [report] = analyze_many([HEAD + RUNNERS[name]])
    assert report.score <= plain_score, report.findings


def test_readable_runner_text_is_analysed_as_code() -> None:
    [report] = analyze_many([HEAD + RUNNERS["timeit.timeit"]])
    at_call = {(f.tool, f.rule) for f in report.findings if f.line == 3}
    assert ("rk-dynamic", "dynamic-code") in at_call
    assert ("bandit", "B602") in at_call and ("rk-reliability", "bare-except") in at_call
    assert not any(f.is_input_fault for f in report.findings)


def test_timing_a_function_of_the_module_is_not_hidden_code() -> None:
    code = HEAD + "import timeit\n\n\ndef f() -> int:\n    return 1\n\n\nprint(timeit.timeit(f, number=3))\n"
    assert not any(f.tool in ("rk-input", "rk-dynamic") for f in analyze(code).findings)
