"""``CodeEnv``: a coding problem as a tool-using episode, for TRL's ``GRPOTrainer(environment_factory=...)``.

``reset(**row)`` reads the row's tests in any format (:mod:`.problem`); the
model then calls tools (every call is a turn, at most ``max_turns``):

* ``run_tests(code)``: the visible tests, and feedback on the first failure;
* ``run_input(code, stdin)``: what the program prints for an input of its own;
* ``measure(code)``: CPU time and memory on the visible tests, against the row's
  ``baseline_code`` when it has one;
* ``quality(code)``: static-analysis findings (Python);
* ``submit(code)``: the final answer; ends the episode.

``get_reward()`` scores the final answer (the submitted code, else the last
code run on the tests) with a rewardkit preset on the hidden tests (the
visible ones where the row has none), once.  Hidden tests appear in no tool
output.  Tools return short text capped at ``feedback_chars`` and never
raise: bad code, bad arguments, a tool not offered, a call before ``reset``
or after the episode ended each get a sentence that says so.

TRL offers every public method of the environment's class as a tool (except
``reset`` and ``get_reward``), so ``CodeEnv(tools=[...])`` returns an instance
of a class that defines exactly the tools offered (one class per tool set,
made once per process); everything else it offers is a property or private.
An environment pickles as its options and episode state; the sandbox and the
reward it runs are shared by the environments of a process and started on
first use there.
"""

from __future__ import annotations

import functools
import inspect
import os
import threading
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from ..rewards import PRESETS, Engine, Reward
from ..rewards.composite import RewardResult
from ..rewards.engine import analyze_in_turn
from ..rewards.extract import extract_code
from ..rewards.faults import apply, fault_policy
from ..rewards.formulas import RLEF_INVALID
from ..rewards.presets import REPEATS
from ..sandbox import ExecutionResult, Limits, Sandbox, Status, SuiteError, TestSuite
from ..sandbox.formats import humaneval
from . import feedback
from .problem import Problem, read_problem, statement

ALL_TOOLS = ("run_tests", "run_input", "measure", "quality", "submit")
MEASURE_REPEATS = 3
FINDINGS_SHOWN = 5
EPISODE_OVER = "The episode is over: {why}. Further tool calls do nothing."
NOT_RESET = "Error: no problem is loaded; the environment must be reset with a dataset row first."

_lock = threading.Lock()
_sandboxes: dict[tuple[Any, ...], Sandbox] = {}
_rewards: dict[tuple[Any, ...], Reward] = {}
_classes: dict[tuple[str, ...], type[CodeEnv]] = {}


def tool(implementation: Callable[..., str]) -> Callable[..., str]:
    """A tool method from a private implementation (``_run_tests`` -> ``run_tests``): its signature
    and docstring (what TRL renders into the prompt), called through the checks of
    :meth:`Environment.call`, so that no argument the model writes makes it raise."""
    name = implementation.__name__.lstrip("_")

    @functools.wraps(implementation)
    def method(self: Environment, *args: Any, **kwargs: Any) -> str:
        return self._invoke(name, implementation, args, kwargs)

    method.__name__ = method.__qualname__ = name
    method.tool_implementation = implementation  # type: ignore[attr-defined]
    return method


def _shared_sandbox(workers: int | None, limits: Limits | None) -> Sandbox:
    """This process's sandbox for tools with these settings, started on first use."""
    key = (os.getpid(), workers, limits)
    with _lock:
        if key not in _sandboxes:
            _sandboxes[key] = Sandbox(workers=workers, limits=limits)
        return _sandboxes[key]


class Environment:
    """The episode machinery every coding environment shares: reading the row, running code,
    counting turns, and scoring the final answer with a preset (see the module docstring).

    Subclasses define their tools with :func:`tool`; options are keywords (``CodeEnv``'s).
    """

    default_preset: ClassVar[str] = "pass_rate"

    def __init__(self, *, preset: str | None = None, max_turns: int = 6, feedback_chars: int = 1000,
                 public: int | float = 1, seed: int = 0, format: str | None = None,
                 sandbox: Sandbox | None = None, workers: int | None = None, limits: Limits | None = None,
                 fault: Any = None, **preset_options: Any) -> None:
        preset = preset or self.default_preset
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
        if max_turns < 1 or feedback_chars < 1:
            raise ValueError("max_turns and feedback_chars must be at least 1")
        if isinstance(public, bool) or public <= 0 or (isinstance(public, float) and public >= 1):
            raise ValueError(f"public must be a positive count or a fraction in (0, 1), got {public!r}")
        self.preset, self.preset_options = preset, preset_options
        self.max_turns, self.feedback_chars = max_turns, feedback_chars
        self.public, self.seed, self.format = public, seed, format
        self.sandbox, self.workers, self.limits = sandbox, workers, limits
        self.fault_policy = fault_policy(fault, "env")  # fault=None: 0.0, flagged by ``fault``
        self.tools: list[str] = [name for name, _ in _tool_members(type(self))]
        PRESETS[preset](**preset_options, **self._engine_options())  # fail fast on bad preset options
        self._clear()

    def _clear(self) -> None:
        self.row: dict[str, Any] | None = None
        self.problem: Problem | None = None
        self.problem_error: str | None = None
        self.prompt: str | None = None
        self.turns = 0
        self.submitted: str | None = None
        self.attempts: list[tuple[str | None, ExecutionResult | None]] = []  # code run on the tests
        self.last_answer: str | None = None  # the text of the last code run on the tests
        self.ended = False
        self.reward: float | None = None
        self.scored: RewardResult | None = None
        self.result: ExecutionResult | None = None  # the final answer's run on the judging tests
        self.fault = False
        self._baseline: ExecutionResult | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickles as the options (rebuilding the tool set's class where it lands) and the state."""
        return _restore, (_factory_of(type(self)), self._options()), vars(self)

    def _options(self) -> dict[str, Any]:
        return {"preset": self.preset, "max_turns": self.max_turns, "feedback_chars": self.feedback_chars,
                "public": self.public, "seed": self.seed, "format": self.format, "sandbox": self.sandbox,
                "workers": self.workers, "limits": self.limits, "fault": self.fault_policy,
                **self.preset_options}

    # -- the episode --------------------------------------------------------------------------------
    def reset(self, **row: Any) -> str | None:
        """Start an episode on a dataset row (TRL passes every column).

        Returns the problem's statement built from the row, or None when the row has a ``prompt``
        (what the model already sees).  A row no test format reads raises FormatError; a row whose
        tests are malformed starts an episode whose tools say so and whose reward is the lowest.
        """
        self._clear()
        self.row = row
        try:
            self.problem = read_problem(row, self.format, self.public, self.seed)
        except SuiteError as exc:
            if type(exc).__name__ == "FormatError":
                raise
            self.problem_error = str(exc)
        if row.get("prompt") is None:
            self.prompt = statement(row) or "Solve the programming problem."
        return self.prompt

    @property
    def done(self) -> bool:
        """Whether the episode is over: submitted, ended by the environment, or out of turns."""
        return self.ended or self.submitted is not None or self.turns >= self.max_turns

    @property
    def call(self) -> Callable[..., str]:
        """``env.call(tool, **arguments)``: run an offered tool by name; never raises.

        A property, so that TRL does not take the dispatcher itself for a tool.
        """
        return self._call

    def _call(self, tool_name: str, /, **arguments: Any) -> str:
        method = getattr(type(self), tool_name, None) if tool_name in self.tools else None
        if method is None:
            return (f"Error: there is no tool {tool_name!r}; the tools are "
                    f"{', '.join(self.tools) or 'none'}.")
        return self._invoke(tool_name, method.tool_implementation, (), arguments)

    def _invoke(self, name: str, implementation: Callable[..., str], args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> str:
        if self.row is None:
            return NOT_RESET
        if self.done:
            return self._over()
        self.turns += 1
        signature = inspect.signature(implementation)
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as exc:
            return self._cap(f"Error: {name} takes {_parameters(signature)}: {exc}.")
        arguments = dict(list(bound.arguments.items())[1:])
        wrong = [key for key, value in arguments.items() if not isinstance(value, str)]
        if wrong:
            return self._cap(f"Error: {name} takes {_parameters(signature)}; {', '.join(wrong)} "
                             f"must be text, got {', '.join(type(arguments[k]).__name__ for k in wrong)}.")
        if self.problem is None:  # nothing can run: the episode ends with the lowest reward
            self.ended = True
            return self._cap(f"Error: this problem's tests could not be read: {self.problem_error}")
        return self._cap(implementation(self, **arguments))

    def _over(self) -> str:
        why = ("you submitted your answer" if self.submitted is not None
               else f"all {self.max_turns} tool calls are used" if self.turns >= self.max_turns
               else "the environment ended it")
        return EPISODE_OVER.format(why=why)

    def _cap(self, text: str) -> str:
        return feedback.cap(text, self.feedback_chars)

    # -- running code ---------------------------------------------------------------------------------
    @property
    def box(self) -> Sandbox:
        """The sandbox tools run in: the one given, else this process's shared one."""
        return self.sandbox if self.sandbox is not None else _shared_sandbox(self.workers, self.limits)

    def _source(self, text: str) -> str | None:
        """The code to run from what the model wrote (HumanEval: joined to the prompt it continues)."""
        if self.problem is None:
            raise RuntimeError(NOT_RESET)
        code = extract_code(text, self.problem.language)
        suite = self.problem.visible
        if code is not None and self.problem.prefix and suite.entry_point:
            code = humaneval.program(self.problem.prefix, code, suite.entry_point)
        return code

    def _run(self, code: str, suite: TestSuite | dict[str, Any], repeats: int = 1) -> ExecutionResult:
        """One run; a language or mode the sandbox refuses is the code's compile error, never a raise."""
        if self.problem is None:
            raise RuntimeError(NOT_RESET)
        try:
            return self.box.run(code, suite, self.problem.language, self.limits, repeats)
        except ValueError as exc:
            return ExecutionResult(Status.COMPILE_ERROR, feedback=f"{exc}.")

    def _test(self, text: str, repeats: int = 1) -> tuple[str | None, ExecutionResult | None]:
        """Run an answer on the visible tests and record it as an attempt (None: no code)."""
        if self.problem is None:
            raise RuntimeError(NOT_RESET)
        code = self._source(text)
        result = None if code is None else self._run(code, self.problem.visible, repeats)
        self.attempts.append((code, result))
        self.last_answer = text
        return code, result

    # -- the reward ----------------------------------------------------------------------------------
    def _engine_options(self) -> dict[str, Any]:
        """How the preset runs code: in the sandbox given (unless ``limits`` are given: an engine
        applies limits to a sandbox of its own only), else in an engine of its own."""
        if self.sandbox is not None and self.limits is None:
            return {"sandbox": self.sandbox}
        if self.workers is not None:
            objective = self.preset_options.get("objective", "time")
            meter = "instructions" if objective == "instructions" else "time"
            return {"engine": Engine(workers=self.workers, limits=self.limits,
                                     repeats=REPEATS.get(self.preset, 1), meter=meter)}
        return {"limits": self.limits}

    def _reward_function(self) -> Reward:
        """This process's reward for these options, made on first use."""
        key = (os.getpid(), self.preset, repr(sorted(self.preset_options.items())), id(self.sandbox),
               self.workers, self.limits)
        with _lock:
            if key not in _rewards:
                _rewards[key] = PRESETS[self.preset](**self.preset_options, **self._engine_options())
            return _rewards[key]

    @property
    def final_answer(self) -> str | None:
        """The text judged: the submitted code, else the last code run on the tests."""
        return self.submitted if self.submitted is not None else self.last_answer

    def _columns(self) -> dict[str, Any]:
        """The row as the reward reads it: its own columns, with the judging tests where they are
        not the row's own (a row that continues a prompt, HumanEval's, is passed as it is)."""
        if self.row is None:
            raise RuntimeError(NOT_RESET)
        if self.problem is None or (self.problem.prefix and self.problem.hidden is None):
            return dict(self.row)
        return {**self.row, "tests": self.problem.judge.to_dict(), "language": self.problem.language}

    def get_reward(self) -> float:
        """The preset's reward of the final answer on the judging tests, computed once.

        With the ``rlef`` preset, each earlier run of invalid code (none, or not compiling) adds
        -0.2, as RLEF scores an episode.  An infrastructure fault sets ``fault`` and scores what the
        ``fault=`` policy says (:mod:`rewardkit.rewards.faults`: 0.0 by default, or raise).
        """
        if self.row is None:
            raise RuntimeError("reset() must be called before get_reward()")
        if self.reward is not None:
            return self.reward
        reward = self._reward_function()
        columns = self._columns()
        sample = {**columns, "completion": self.final_answer}
        (self.scored,) = reward.score([sample])
        needs = set().union(*(component.needs for component, _ in reward.components))
        if needs & {"run", "outcome"}:  # the engine's cached run: nothing runs twice
            keys = sorted(columns)
            (view,) = reward.engine.views([self.final_answer], {k: [columns[k]] for k in keys}, {"outcome"})
            self.result = view.result
        value = self.scored.value
        if value is None:  # an infrastructure fault: the fault policy's number, or RewardFault
            self.fault = True
            value = float(apply(None, self.fault_policy, self.scored.info, "CodeEnv"))  # type: ignore[arg-type]
        if self.preset == "rlef":
            invalid = sum(not valid_response(code, result) for code, result in self._earlier_attempts())
            value += RLEF_INVALID * invalid
        self.reward = value
        return value

    def _earlier_attempts(self) -> list[tuple[str | None, ExecutionResult | None]]:
        """The runs before the final answer (the last run is the final answer when nothing was
        submitted)."""
        return self.attempts if self.submitted is not None else self.attempts[:-1]


def valid_response(code: str | None, result: ExecutionResult | None) -> bool:
    """RLEF's valid response: it has code, and the code compiles (parses) where it ran."""
    return code is not None and (result is None or result.status != Status.COMPILE_ERROR)


def _parameters(signature: inspect.Signature) -> str:
    names = [name for name in signature.parameters if name != "self"]
    return ", ".join(f"{name} (text)" for name in names)


def _tool_members(cls: type) -> list[tuple[str, Callable[..., str]]]:
    return [(name, member) for name, member in inspect.getmembers(cls, inspect.isfunction)
            if hasattr(member, "tool_implementation")]


SEVERITY_ORDER = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}


def _ms(result: ExecutionResult) -> str:
    return f"{result.time_s * 1000:.1f} ms"


def _kib(result: ExecutionResult) -> str:
    return f"{result.peak_memory_kb:.0f} KiB"


def _ratio(before: float, after: float) -> str:
    if before <= 0 or after <= 0:
        return "no comparison"
    if abs(before - after) <= 0.02 * before:
        return "about the same"
    if before >= after:
        return f"yours is {before / after:.2f}x faster"
    return f"yours is {after / before:.2f}x slower"


class CodeEnv(Environment):
    """A coding problem as a tool-using episode (module docstring); every option is a keyword.

    ``preset`` names any rewardkit preset or single component (``PRESETS``), its options given
    alongside (``objective="memory"``...); ``tools`` the tools offered (default all);
    ``max_turns`` the tool calls an episode may make; ``feedback_chars`` the longest tool
    output; ``public`` the visible share of a row's cases where the row has no public/private
    split (drawn with ``seed``); ``format`` the rows' test format (default: found from the
    columns); ``sandbox``, ``workers`` and ``limits`` where and how code runs.
    """

    def __new__(cls, *, tools: Sequence[str] | None = None, **options: Any) -> CodeEnv:
        """An instance of the class whose methods are exactly the tools offered."""
        chosen = tuple(ALL_TOOLS if tools is None else tools)
        unknown = [name for name in chosen if name not in TOOLS]
        if unknown or not chosen or isinstance(tools, str):
            raise ValueError(f"tools must be a list of some of {', '.join(ALL_TOOLS)}; got {tools!r}")
        return super().__new__(tool_class(tuple(dict.fromkeys(chosen))))

    def __init__(self, *, tools: Sequence[str] | None = None, **options: Any) -> None:
        super().__init__(**options)

    def _options(self) -> dict[str, Any]:
        return {**super()._options(), "tools": list(self.tools)}

    # -- the tools (the public methods of each tool set's class, see tool_class) ---------------------
    def _run_tests(self, code: str) -> str:
        """Run a complete solution on the problem's visible tests.

        Args:
            code: The complete solution source code, plain or in one fenced code block.

        Returns:
            How many visible tests passed, and what went wrong on the first one that failed.
        """
        _, result = self._test(code)
        if result is None:
            return feedback.NO_CODE
        counts = f"{result.tests_passed}/{result.tests_total} visible tests passed."
        return counts if result.passed else f"{counts}\n{feedback.feedback_text(result)}"


    def _run_input(self, code: str, stdin: str) -> str:
        """Run a program on an input of your choice and show what it prints.

        Args:
            code: The program's source code, plain or in one fenced code block.
            stdin: The text given to the program on standard input.

        Returns:
            What the program printed, or the error it stopped with.
        """
        source = self._source(code)
        if source is None:
            return feedback.NO_CODE
        result = self._run(source, {"mode": "stdio", "cases": [{"input": stdin, "output": ""}]})
        if result.passed:
            return "The program printed nothing."
        if result.status == Status.WRONG_ANSWER and "\nGot:\n" in result.feedback:
            return "The program printed:\n" + result.feedback.split("\nGot:\n", 1)[1]
        return feedback.feedback_text(result).replace(" on a public test", "")


    def _measure(self, code: str) -> str:
        """Measure a solution's CPU time and peak memory on the visible tests.

        Args:
            code: The complete solution source code, plain or in one fenced code block.

        Returns:
            The time and memory, compared with the reference solution's when the problem has one.
        """
        if self.problem is None:
            raise RuntimeError(NOT_RESET)
        _, result = self._test(code, MEASURE_REPEATS)
        if result is None:
            return feedback.NO_CODE
        if not result.passed:
            return f"Not measured: the code fails the visible tests.\n{feedback.feedback_text(result)}"
        text = f"Passed the visible tests. CPU time {_ms(result)}, peak memory {_kib(result)}."
        baseline_code = (self.row or {}).get("baseline_code")
        if not isinstance(baseline_code, str) or not baseline_code.strip():
            return text
        if self._baseline is None:
            self._baseline = self._run(baseline_code.strip("\n"), self.problem.visible, MEASURE_REPEATS)
        base = self._baseline
        if not base.passed:
            return f"{text} The reference solution fails these tests: nothing to compare with."
        return (f"{text} Reference solution: CPU time {_ms(base)} ({_ratio(base.time_s, result.time_s)}), "
                f"peak memory {_kib(base)} ({_ratio(base.peak_memory_kb, result.peak_memory_kb)}).")


    def _quality(self, code: str) -> str:
        """Check a solution's code quality with static analysis (maintainability, security, reliability).

        Args:
            code: The solution source code, plain or in one fenced code block.

        Returns:
            The quality score in [0, 1] and the most serious findings.
        """
        if self.problem is None:
            raise RuntimeError(NOT_RESET)
        if self.problem.language != "python":
            return "Quality analysis covers Python code only."
        source = self._source(code)
        if source is None:
            return feedback.NO_CODE
        report = analyze_in_turn([source])[0]
        findings = sorted(report.findings, key=lambda f: SEVERITY_ORDER.get(f.severity, 9))
        lines = [f"Quality score {report.score:.2f} ({len(findings)} findings)."]
        lines += [f"line {f.line}: {f.rule} ({f.severity}, {f.characteristic}) {f.message}"
                  for f in findings[:FINDINGS_SHOWN]]
        if report.errors:
            lines.append("Not analysed by: " + ", ".join(sorted({e.tool for e in report.errors})) + ".")
        return "\n".join(lines)


    def _submit(self, code: str) -> str:
        """Submit your final solution; this ends the episode.

        Args:
            code: The complete final solution source code, plain or in one fenced code block.

        Returns:
            A confirmation; the solution is judged on hidden tests after the episode.
        """
        self.submitted = code
        return "Submitted. The episode is over; your solution will be judged on hidden tests."


TOOLS: dict[str, Callable[..., str]] = {name: tool(getattr(CodeEnv, f"_{name}")) for name in ALL_TOOLS}


def tool_class(tools: tuple[str, ...]) -> type[CodeEnv]:
    """The ``CodeEnv`` subclass offering ``tools`` (one per tool set and process)."""
    with _lock:
        if tools not in _classes:
            members: dict[str, Any] = {name: TOOLS[name] for name in tools}
            members["__module__"] = __name__
            members["__qualname__"] = "CodeEnv"
            members["__doc__"] = f"CodeEnv offering {', '.join(tools)}."
            _classes[tools] = type("CodeEnv", (CodeEnv,), members)
        return _classes[tools]


def _factory_of(cls: type) -> Callable[..., Any]:
    return CodeEnv if issubclass(cls, CodeEnv) else cls


def _restore(factory: Callable[..., Environment], options: dict[str, Any]) -> Environment:
    return factory(**options)
