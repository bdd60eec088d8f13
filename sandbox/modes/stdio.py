"""``stdio`` mode: a program per case, fed the case's input, judged on what it prints."""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable
from typing import Any

from ..link import clip
from ..runtime import compile_plain, protocol
from ..runtime.apps import apps_program
from ..suite import SUITE_CACHE, Case, SuiteError, TestSuite
from ..types import Status
from .base import Mode, Run, compiles, text_field

PROGRAMS = ("apps",)  # a stdio suite's ``program``: how a Python program is run, when not as itself


def normalize_output(text: str) -> str:
    """Compare outputs modulo trailing whitespace on each line and at the end."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


@functools.lru_cache(maxsize=SUITE_CACHE)
def evaluator(source: str) -> Callable[[str, str], Any]:
    """The ``evaluate(expected, actual)`` function a suite's evaluator source defines."""
    namespace: dict[str, Any] = {"__builtins__": builtins, "__name__": "__evaluator__"}
    exec(compile_plain(source, "<evaluator>"), namespace)  # nosec B102 - the suite's trusted evaluator
    if not callable(namespace.get("evaluate")):
        raise ValueError("the evaluator source must define evaluate(expected, actual)")
    return namespace["evaluate"]  # type: ignore[no-any-return]


class Stdio(Mode):
    """Each case's ``input`` on stdin; stdout compared with its ``output`` modulo trailing
    whitespace, or by the suite's ``evaluator``.  Every language runs it."""

    name = "stdio"
    fields = ("cases", "evaluator")

    def read(self, data: dict[str, Any]) -> dict[str, Any]:
        """Cases of ``{"input", "output"}``, at least one; an optional evaluator."""
        cases = []
        for index, raw in enumerate(data.get("cases", [])):
            if not isinstance(raw, dict):
                raise SuiteError(f"case {index} must be an object, got {type(raw).__name__}")
            if "input" not in raw or "output" not in raw:
                raise SuiteError(f"stdio case {index} needs 'input' and 'output'")
            cases.append(Case(input=str(raw["input"]), output=str(raw["output"])))
        if not cases:
            raise SuiteError("stdio mode needs at least one case in 'cases'")
        source = text_field(data, "evaluator")
        if source is not None:
            compiles("evaluator", source)
        return {"cases": tuple(cases), "evaluator": source}

    def to_dict(self, suite: TestSuite) -> dict[str, Any]:
        """Cases and evaluator."""
        return {"cases": [{"input": c.input, "output": c.output} for c in suite.cases],
                "evaluator": suite.evaluator}

    def begin(self, message: protocol.Begin, suite: TestSuite, language: str) -> protocol.Begin:
        """A Python program of a suite marked ``program: "apps"`` runs as APPS's harness runs it
        (a top-level ``return`` ends it)."""
        if suite.extra.get("program") == "apps" and language == "python":
            message["code"] = apps_program(message["code"])
        return message

    def judge(self, run: Run) -> None:
        """Run the program once per case; a case that hits a limit ends the suite."""
        tally, suite = run.tally, run.suite
        for index, case in enumerate(suite.cases):
            if tally.out_of_time(index):
                return
            report = run.link.ask(protocol.Run(op="run", stdin=case.input))
            if not report.get("ok"):
                raise protocol.ProtocolError(f"worker could not run the case: {clip(repr(report))}")
            tally.add_usage(report)
            if report["outcome"] != "ok":
                tally.outcome(report, index, run.limits)
                if report["outcome"] != "runtime_error":
                    return  # a case that hit a limit would only hit it again
                continue
            expected, actual = case.output or "", report["stdout"]
            if run.suite_code.matches(expected, actual) if suite.evaluator is not None \
                    else normalize_output(expected) == normalize_output(actual):
                tally.passed += 1
            else:
                tally.fail(Status.WRONG_ANSWER, index, _wrong(index, case, actual))


def _wrong(index: int, case: Case, got: str) -> str:
    return (f"Wrong answer on test {index + 1}.\nInput:\n{clip(case.input)}\n"
            f"Expected:\n{clip(case.output or '')}\nGot:\n{clip(got)}")
