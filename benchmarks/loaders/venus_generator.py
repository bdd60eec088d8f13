"""Running a Venus record's ``test_case_generator`` in the sandbox, as the Afterburner paper builds its cases.

Venus (Afterburner paper, appendix "Language-Agnostic Test Cases") ships with
each problem a generator program that produces test cases, stdin text and
expected stdout text, and accepts a generated case only when the canonical
solutions agree on it.  The generator is dataset code: it runs in the
sandbox (a script-mode job whose module is :data:`DRIVER` plus the
generator's source), never in the loader's process; only the list of cases
comes back, as plain data.

The dataset card does not say how a generator is called, so the driver
accepts the forms these sources use:

* ``generate_test_cases(num_cases)`` (or with no argument) returning
  ``[{"input": str, "output": str}, ...]``: the paper's Figure 7;
* a ``TestCaseGenerator`` class with ``generate_test_input``,
  ``generate_expected_output``, ``serialize_input``/``deserialize_input`` and
  ``serialize_output``/``deserialize_output``: the Afterburner repository's
  ``jitt/jitt.py`` (``PYTHON_TEST_CASE_CONSTRUCTION_TEMPLATE``), whose loop we
  follow: a case is kept when the output recomputed from the deserialised
  input equals the deserialised output; the serialised texts are the case;
* a module-level ``test_cases`` list once the source has run.

The generator runs after the problem's first reference solution (so a
``Solution`` it calls is defined, as JITT assumes), with ``random`` seeded
(:attr:`CaseGenerator.seed`), so a load is repeatable.  Validation: every
generated case must be passed by the first :attr:`CaseGenerator.validators`
references (the paper: all of them; ``validators=None`` does that); a case
one of them fails is dropped, and a generator that loses more than a quarter
of its cases that way is reported as disagreeing with the references.
"""

from __future__ import annotations

from ...sandbox import Limits, Sandbox, Status, TestSuite
from . import sandboxed
from .common import LoaderError

DEFAULT_CASES = 16
DEFAULT_VALIDATORS = 3
ENTRY = "venus_generated_cases"
# generation may build large inputs; the default per-case limits are for solutions
GENERATION_LIMITS = Limits(time_s=60.0, memory_mb=2048, output_kb=65536)

DRIVER = '''import inspect
import random


def _text_case(index, case):
    if isinstance(case, dict):
        pair = (case.get("input"), case.get("output"))
    elif isinstance(case, (list, tuple)) and len(case) == 2:
        pair = tuple(case)
    else:
        raise TypeError(f"generated case {index} is not an input/output pair: {case!r:.200}")
    if not all(isinstance(part, str) for part in pair):
        raise TypeError(f"generated case {index}: input and output must be text (stdin and stdout), "
                        f"got {type(pair[0]).__name__} and {type(pair[1]).__name__}")
    return {"input": pair[0], "output": pair[1]}


def _jitt(generator, count):
    cases = []
    for _ in range(count):
        try:
            given = generator.generate_test_input()
            wanted = generator.generate_expected_output(given)
            given_text = generator.serialize_input(given)
            wanted_text = generator.serialize_output(wanted)
            again = generator.generate_expected_output(generator.deserialize_input(given_text))
            if again == generator.deserialize_output(wanted_text):
                cases.append({"input": given_text, "output": wanted_text})
        except Exception:
            continue
    return cases


def venus_generated_cases(count, seed):
    random.seed(seed)
    space = {"__name__": "test_case_generator"}
    exec(SOLUTION, space)
    exec(GENERATOR, space)
    make = space.get("generate_test_cases")
    if callable(make):
        made = make(count) if inspect.signature(make).parameters else make()
    elif isinstance(space.get("TestCaseGenerator"), type):
        made = _jitt(space["TestCaseGenerator"](), count)
    elif isinstance(space.get("test_cases"), list):
        made = space["test_cases"]
    else:
        raise LookupError("the test_case_generator defines none of generate_test_cases(), "
                          "class TestCaseGenerator, or a test_cases list")
    return [_text_case(index, case) for index, case in enumerate(made)]
'''

class CaseGenerator:
    """Runs Venus ``test_case_generator`` sources in a sandbox started on first use.

    ``count``: cases asked of each generator (``0`` skips generation and keeps
    the record's ``test_cases``); ``seed``: ``random``'s seed in the
    generator; ``validators``: how many references must pass each case
    (``None``: all, as the paper); ``sandbox``: one to use instead of a
    private one (with ``trust_suites=True``: the job's check is ours).
    """

    def __init__(self, count: int = DEFAULT_CASES, seed: int = 0, validators: int | None = DEFAULT_VALIDATORS,
                 sandbox: Sandbox | None = None) -> None:
        if count < 0 or (validators is not None and validators < 0):
            raise ValueError("count and validators must be zero or more")
        self.count, self.seed, self.validators = count, seed, validators
        self._sandbox, self._own = sandbox, sandbox is None

    def __enter__(self) -> CaseGenerator:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the private sandbox, if one was started."""
        if self._own and self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox the generators and the validating references run in."""
        if self._sandbox is None:
            self._sandbox = Sandbox(workers=1)
        return self._sandbox

    def cases(self, generator: str, solution: str, references: list[str], evaluator: str | None,
              where: str) -> list[dict[str, str]]:
        """The validated cases of one generator; LoaderError saying why there are none."""
        if self.count == 0:
            return []
        made = self._generate(generator, solution, where)
        if not made:
            raise LoaderError(f"{where}: its test_case_generator produced no test case")
        checked = references if self.validators is None else references[:self.validators]
        for number, reference in enumerate(checked):
            made = self._validated(made, reference, evaluator, f"{where}: reference #{number}")
        return made

    def _generate(self, generator: str, solution: str, where: str) -> list[dict[str, str]]:
        code = f"{DRIVER}\nGENERATOR = {generator!r}\nSOLUTION = {solution!r}\n"
        ((result, made),) = sandboxed.collect(
            self.sandbox, [(code, ENTRY, lambda candidate: candidate(self.count, self.seed))],
            limits=GENERATION_LIMITS)
        if result.status == Status.SANDBOX_ERROR:
            raise LoaderError(f"{where}: the sandbox failed while running its test_case_generator: "
                              f"{result.feedback}")
        if not result.passed or not isinstance(made, list):
            raise LoaderError(f"{where}: its test_case_generator failed ({result.status.value}): "
                              f"{result.feedback.strip()[-1500:]}")
        return made

    def _validated(self, cases: list[dict[str, str]], reference: str, evaluator: str | None,
                   where: str) -> list[dict[str, str]]:
        """``cases`` less those ``reference`` fails (one run per failure found)."""
        kept, budget = list(cases), len(cases) // 4
        while kept:
            suite = TestSuite.from_dict({"mode": "stdio", "evaluator": evaluator, "cases": kept})
            result = self.sandbox.run(reference, suite, repeats=1)
            if result.passed:
                return kept
            if result.status == Status.SANDBOX_ERROR or result.failed_case is None:
                raise LoaderError(f"{where} cannot validate the generated cases ({result.status.value}): "
                                  f"{result.feedback.strip()[-500:]}")
            del kept[result.failed_case]
            if len(cases) - len(kept) > budget:
                raise LoaderError(f"{where} fails more than a quarter of the cases its "
                                  f"test_case_generator produced; first: {result.feedback.strip()[:500]}")
        return kept
