"""How an embedded problem is written, and how it becomes :class:`Problem` objects.

A :class:`Spec` is plain Python written for this project: a statement, the
function to implement, a seeded generator of test arguments, and reference
solutions of different complexity.  :func:`build` turns it into a ``call``
problem (``mini/<slug>``) and, when the spec has a :class:`StdioForm`, a
``stdio`` problem as well (``mini/<slug>/stdio``) whose references are the
same functions with a stdin/stdout main appended.  :func:`source`,
:func:`stdin_main` and :func:`numbers_form` are how the specs in ``easy``,
``medium`` and ``hard`` write their references and stdio forms.

Expected outputs come from running the first reference here, in this process:
the references are our own trusted code, and the generator is seeded, so the
suites are the same on every machine.  A spec whose answers are not unique
gives a ``verify`` function instead; its problems are judged by an evaluator
(stdio form only, where the expected output carries the input).
"""

from __future__ import annotations

import json
import random
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...sandbox import TestSuite
from ..problem import Problem, Reference

SEED = 20260601
CASES = 10  # generated cases per spec (the default of :attr:`Spec.cases`)


@dataclass(frozen=True)
class StdioForm:
    """How the call problem reads as a stdin/stdout program.

    ``render_input(*args) -> str`` writes one case's stdin; ``main`` is source
    appended to each reference that reads stdin, calls the entry point and
    prints the answer; ``render_output(value) -> str`` is the expected stdout
    (without the trailing newline, which is added).  For a spec with
    ``verify``, ``main`` prints the answer as JSON, which the evaluator reads.
    """

    render_input: Callable[..., str]
    main: str
    render_output: Callable[[Any], str] = str


@dataclass(frozen=True)
class Spec:
    """One embedded problem as written.

    ``signature`` is the function to implement, ``name(arg: type, ...) ->
    type``: it names the entry point and makes the starter code.
    ``generate(rng, index)`` returns the argument tuple of case ``index``
    (cases may grow with the index, so the last ones separate complexity
    classes); ``references`` maps a label ("naive O(n^2)", "sorting",
    "optimal"...) to source defining ``entry_point``; the first writes the
    expected outputs.
    """

    slug: str
    title: str
    difficulty: str
    tags: tuple[str, ...]
    statement: str
    signature: str
    generate: Callable[[random.Random, int], tuple[Any, ...]]
    references: dict[str, str]
    cases: int = CASES
    stdio: StdioForm | None = None
    verify: str | None = None  # source of verify(args, answer) -> bool when answers are not unique
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def entry_point(self) -> str:
        """The function's name."""
        return self.signature.split("(", 1)[0]

    @property
    def starter_code(self) -> str:
        """The function's stub."""
        return f"def {self.signature}:\n    ...\n"


# -- writing specs ---------------------------------------------------------------------------
def source(text: str) -> str:
    """Source written indented inside a module (a reference, a ``verify``, a main body), as plain source."""
    return textwrap.dedent(text).strip() + "\n"


def stdin_main(body: str, imports: str = "import sys") -> str:
    """A stdio main: ``imports``, then ``_main()`` running ``body`` (which reads stdin and prints)."""
    return f"{imports}\n\ndef _main():\n{textwrap.indent(source(body), '    ')}\n_main()\n"


def numbers_input(nums: list[int], *rest: int) -> str:
    """A list of integers as stdin: its length, its values, then one line per further integer."""
    return "\n".join([str(len(nums)), " ".join(map(str, nums)), *map(str, rest)]) + "\n"


READ_NUMBERS = ("data = [int(x) for x in sys.stdin.read().split()]\n"
                "nums, rest = data[1:1 + data[0]], data[1 + data[0]:]\n")


def numbers_form(call: str, imports: str = "import sys") -> StdioForm:
    """The stdio form of a problem on a list of integers (and maybe further integers).

    Cases are written by :func:`numbers_input`; the main reads them into
    ``nums`` and ``rest`` and prints ``call`` (an expression on those).
    """
    return StdioForm(render_input=numbers_input, main=stdin_main(f"{READ_NUMBERS}print({call})", imports))


# -- building problems -----------------------------------------------------------------------
def expected_values(spec: Spec) -> list[tuple[tuple[Any, ...], Any]]:
    """Each case's arguments with the first reference's answer."""
    rng = random.Random(f"{SEED}/{spec.slug}")
    namespace: dict[str, Any] = {}
    exec(next(iter(spec.references.values())), namespace)  # nosec B102 - our own reference code
    solve = namespace[spec.entry_point]
    out = []
    for index in range(spec.cases):
        args = spec.generate(rng, index)
        out.append((args, solve(*_copy(args))))
    return out


def _copy(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """Arguments as fresh objects, so a reference that mutates its input cannot change a case."""
    return tuple(json.loads(json.dumps(args)))


def call_suite(spec: Spec, values: list[tuple[tuple[Any, ...], Any]]) -> TestSuite:
    """The call-mode suite, or a script-mode one calling ``verify`` when answers are not unique."""
    if spec.verify is None:
        return TestSuite.from_dict({"mode": "call", "entry_point": spec.entry_point,
                                    "cases": [{"args": list(a), "expected": e} for a, e in values]})
    check = (f"CASES = {json.dumps([list(a) for a, _ in values])}\n\n"
             "import copy\n\n"
             "def check(candidate):\n"
             "    for args in CASES:  # the candidate gets a copy: sorting it in place must not fool verify\n"
             "        assert verify(args, candidate(*copy.deepcopy(args))), f'wrong answer for {args!r}'\n")
    return TestSuite.from_dict({"mode": "script", "entry_point": spec.entry_point,
                                "definitions": spec.verify, "check": check})


def stdio_suite(spec: Spec, form: StdioForm, values: list[tuple[tuple[Any, ...], Any]]) -> TestSuite:
    """The stdio-mode suite; with ``verify``, the expected output carries the input for the evaluator."""
    cases = []
    for args, expected in values:
        output = form.render_output(expected) + "\n"
        if spec.verify is not None:  # any valid answer passes: the evaluator needs the input
            output = json.dumps({"args": list(args), "one_valid_answer": expected}) + "\n"
        cases.append({"input": form.render_input(*args), "output": output})
    suite: dict[str, Any] = {"mode": "stdio", "cases": cases}
    if spec.verify is not None:
        suite["evaluator"] = (f"{spec.verify}\n\nimport json\n\n"
                              "def evaluate(expected, actual):\n"
                              "    case = json.loads(expected)\n"
                              "    try:\n"
                              "        answer = json.loads(actual)\n"
                              "    except ValueError:\n"
                              "        return False\n"
                              "    return verify(case['args'], answer)\n")
    return TestSuite.from_dict(suite)


def build(spec: Spec) -> list[Problem]:
    """The spec's problems: the call form, then the stdio form if it has one."""
    values = expected_values(spec)
    common: dict[str, Any] = {"title": spec.title, "statement": spec.statement, "difficulty": spec.difficulty,
              "tags": spec.tags, "source": "mini", "extra": dict(spec.extra)}
    problems = [Problem(f"mini/{spec.slug}", tests=call_suite(spec, values),
                        starter_code=spec.starter_code,
                        references=[Reference(code, label) for label, code in spec.references.items()],
                        **common)]
    if spec.stdio is not None:
        form = spec.stdio
        problems.append(Problem(
            f"mini/{spec.slug}/stdio", tests=stdio_suite(spec, form, values),
            starter_code=f"{spec.starter_code}\n\n{form.main}",
            references=[Reference(f"{code.rstrip()}\n\n\n{form.main}", label)
                        for label, code in spec.references.items()],
            **common))
    return problems
