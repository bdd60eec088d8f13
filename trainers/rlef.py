"""RLEF (seed 004): multi-turn code repair grounded in execution feedback.

Turn structure (the RLEF slides, "Multi-Turn Conversation Setup"):

1. Turn 1: the user message is the problem; the model answers with code.
2. That code runs on the problem's *public* tests only.  If they pass, or
   ``turns`` answers (3 by default) have been given, the episode ends.
   Otherwise the answer and a user message with the execution feedback
   (wrong answer with input / expected / got, exception, timeout, out of
   memory, compile error, or "no code") join the chat, and the model answers
   again seeing the problem, every earlier answer and every feedback.
3. The last answer's code is the submission: it runs on the *private* tests,
   which never appear in any prompt or feedback.

Reward (the slides' "Reward Function" and "Failure Mode Addressed"): each
turn t earns ``r(s_t, a_t)``, and the episode's return is their sum (the
advantage is ``A_t = -V(c_t) + sum_i R(s_i, a_i)``, no discounting):

* ``-0.2`` (:data:`INVALID`) at every turn whose response is invalid: no code,
  or code that does not compile / parse.  The slides add it against
  "invalid code in non-final responses", so it applies at any turn;
* at the last turn, also ``+1`` when the submitted code passes all private
  tests and ``-1`` otherwise; invalid code cannot pass, so an invalid final
  answer earns ``-1.2``, never more than a wrong one;
* ``0`` at the other turns.

The slides list +1, -1 and -0.2 as the values of ``r(s_t, a_t)`` without
saying how they combine at the last turn; adding them (an invalid final
answer is both invalid and failing) is the one reading under which an
invalid response, final or not, never earns more than a wrong one.

For example (public runs, turn by turn): wrong, wrong, wrong: 0, 0, -1, so
-1; no code, wrong, wrong: -0.2, 0, -1, so -1.2; wrong, wrong, broken: 0, 0,
-1.2, so -1.2; broken, right: -0.2, +1, so 0.8.  :class:`Turn` records its
``r_t`` (``Turn.reward``) and :class:`Episode` the return (``Episode.reward``).
The paper trains with PPO and a turn-level value, so turn t's tokens see the
return from t on; a GRPO rollout gets one scalar, the whole return, which is
what :meth:`RLEFEnvironment.get_reward` gives.

Two ways to run it:

* :func:`repair` runs batched episodes with any
  :class:`~rewardkit.trainers.generators.Generator` (evaluation, data
  collection, tests with the replay generator);
* :class:`RLEFEnvironment` plugs the same loop into TRL's
  ``GRPOTrainer(environment_factory=...)``: the model tests code through the
  ``run_public_tests`` tool (each call is a turn, its result the feedback),
  and ``get_reward`` judges the last tested code on the private tests and
  returns the episode's return; a rollout that tests no code gave one
  response without code: -0.2 and -1.

Script suites (HumanEval ``check(candidate)``) hold one opaque check, not
cases, so they cannot be split; :func:`split_tests` refuses them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from ..benchmarks.problem import Problem
from ..envs.code_env import Environment, tool
from ..envs.code_env import valid_response as valid_response
from ..envs.feedback import HEADLINES as HEADLINES
from ..envs.feedback import MAX_DETAIL, PASSED, feedback_text
from ..envs.feedback import NO_CODE as NO_CODE
from ..envs.problem import split_tests
from ..rewards.extract import extract_code
from ..rewards.formulas import RLEF_INVALID as INVALID
from ..rewards.formulas import rlef
from ..sandbox import ExecutionResult, Limits, Sandbox, TestSuite
from .generators.base import Generator, Prompt, Sampling
from .prompts import SYSTEM_PROMPT, afterburner_prompt, baseline_prompt, chat

TURNS = 3
RETRY = "Fix the code and give the complete corrected solution in one fenced code block."
# the environment's tool outputs are feedback_text's, never cut (its detail is MAX_DETAIL at most)
FEEDBACK_CHARS = MAX_DETAIL + 500

Messages = list[dict[str, str]]


# -- feedback ---------------------------------------------------------------------------------------
def repair_message(result: ExecutionResult | None) -> str:
    """The user message of the next turn: the feedback and a request to try again."""
    return f"{feedback_text(result)}\n\n{RETRY}"


# -- episodes ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    """One problem ready for repair: the first prompt and the split tests."""

    problem_id: str
    messages: Messages
    public: TestSuite
    private: TestSuite
    language: str = "python"


def make_task(problem: Problem, public: int | float = 1, seed: int = 0, prompt: str = "baseline",
              objective: str = "time", system: str | None = SYSTEM_PROMPT) -> Task:
    """A :class:`Task` with the baseline (F.1) or afterburner (F.3, no original code) prompt."""
    if prompt == "baseline":
        text = baseline_prompt(problem.statement, objective, problem.language, problem.starter_code)
    elif prompt == "afterburner":
        text = afterburner_prompt(problem.statement, objective, problem.language)
    else:
        raise ValueError(f"unknown prompt {prompt!r}; use 'baseline' or 'afterburner'")
    public_suite, private_suite = split_tests(problem.tests, public, seed)
    return Task(problem.problem_id, chat(text, system), public_suite, private_suite, problem.language)


@dataclass
class Turn:
    """One answer: the messages it answered, its text and code, the public run and the feedback sent back."""

    messages: Messages
    text: str
    code: str | None
    result: ExecutionResult | None  # on the public tests; None when there was no code
    feedback: str | None  # the next turn's user message; None when the episode stopped here
    reward: float = 0.0  # r(s_t, a_t): set once the episode is judged

    @property
    def valid(self) -> bool:
        """Whether the answer had code that compiles (RLEF's valid response)."""
        return valid_response(self.code, self.result)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {"messages": self.messages, "text": self.text, "code": self.code,
                "result": self.result.to_dict() if self.result else None, "feedback": self.feedback,
                "reward": self.reward}


@dataclass
class Episode:
    """A finished repair episode: its turns, the private run of the final code and the RLEF return."""

    problem_id: str
    turns: list[Turn] = field(default_factory=list)
    private: ExecutionResult | None = None
    reward: float = 0.0

    @property
    def final_code(self) -> str | None:
        """The code of the last turn (what the private tests judge)."""
        return self.turns[-1].code if self.turns else None

    @property
    def solved(self) -> bool:
        """Whether the final code passed the private tests."""
        return self.private is not None and self.private.passed

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {"problem_id": self.problem_id, "turns": [t.to_dict() for t in self.turns],
                "private": self.private.to_dict() if self.private else None, "reward": self.reward,
                "solved": self.solved}


def turn_rewards(valid: Sequence[bool], passed: bool) -> list[float]:
    """``r(s_t, a_t)`` of each turn: :data:`INVALID` for an invalid response, and at the last turn
    +1 when the final code passed the private tests, else -1 (module docstring)."""
    if not valid:
        raise ValueError("an episode has at least one turn")
    rewards = [0.0 if ok else INVALID for ok in valid[:-1]]
    return [*rewards, rlef(passed, valid[-1])]


def repair(problems: Iterable[Problem | Task], generator: Generator, turns: int = TURNS,
           sandbox: Sandbox | None = None, public: int | float = 1, seed: int = 0,
           prompt: str = "baseline", objective: str = "time", sampling: Sampling | None = None,
           limits: Limits | None = None) -> list[Episode]:
    """Run one RLEF episode per problem, batched: every turn asks the generator once for all open episodes.

    Problems are split with :func:`split_tests` (``public``, ``seed``) and
    prompted with :func:`make_task` (``prompt``, ``objective``); pass
    :class:`Task` objects to choose the split and messages yourself.
    """
    if turns < 1:
        raise ValueError("turns must be at least 1")
    tasks = [p if isinstance(p, Task) else make_task(p, public, seed, prompt, objective) for p in problems]
    with ExitStack() as stack:
        box = sandbox or stack.enter_context(Sandbox())
        episodes = _run_turns(tasks, generator, turns, box, sampling, limits)
        codes = [episode.final_code for episode in episodes]
        judged = _run_codes(box, codes, [task.private for task in tasks], tasks, limits)
    for episode, private in zip(episodes, judged, strict=True):
        passed = private is not None and private.passed
        rewards = turn_rewards([turn.valid for turn in episode.turns], passed)
        for turn, reward in zip(episode.turns, rewards, strict=True):
            turn.reward = reward
        episode.private, episode.reward = private, sum(rewards)
    return episodes


def _run_turns(tasks: list[Task], generator: Generator, turns: int, sandbox: Sandbox,
               sampling: Sampling | None, limits: Limits | None) -> list[Episode]:
    """The multi-turn loop on the public tests."""
    episodes = [Episode(task.problem_id) for task in tasks]
    chats = [list(task.messages) for task in tasks]
    open_ = list(range(len(tasks)))
    for turn in range(1, turns + 1):
        prompts: list[Prompt] = [list(chats[i]) for i in open_]
        texts = generator.generate(prompts, sampling)
        codes = [extract_code(text, tasks[i].language) for i, text in zip(open_, texts, strict=True)]
        results = _run_codes(sandbox, codes, [tasks[i].public for i in open_], [tasks[i] for i in open_],
                             limits)
        still_open = []
        for i, text, code, result in zip(open_, texts, codes, results, strict=True):
            done = turn == turns or (result is not None and result.passed)
            feedback = None if done else repair_message(result)
            episodes[i].turns.append(Turn(list(chats[i]), text, code, result, feedback))
            if feedback is not None:
                chats[i] += [{"role": "assistant", "content": text}, {"role": "user", "content": feedback}]
                still_open.append(i)
        open_ = still_open
        if not open_:
            break
    return episodes


def _run_codes(sandbox: Sandbox, codes: list[str | None], suites: list[TestSuite], tasks: list[Task],
               limits: Limits | None) -> list[ExecutionResult | None]:
    """Run each code on its suite (in the task's language) in parallel; ``None`` where there is no code."""
    runnable = [i for i, code in enumerate(codes) if code is not None]
    jobs = [(str(codes[i]), suites[i], tasks[i].language) for i in runnable]
    results: list[ExecutionResult | None] = [None] * len(codes)
    for i, result in zip(runnable, sandbox.run_many(jobs, limits=limits), strict=True):
        results[i] = result
    return results


# -- TRL ------------------------------------------------------------------------------------------
class RLEFEnvironment(Environment):
    """One RLEF rollout as a TRL environment, for ``GRPOTrainer(environment_factory=...)``: a
    :class:`~rewardkit.envs.CodeEnv` episode with one tool and the ``rlef`` preset.

    ``reset(**row)`` reads the row's tests (any format; a ``tests`` suite is
    split with :func:`split_tests`) and ``language``; the model then calls the
    ``run_public_tests`` tool with its code (at most ``turns`` times, stopping
    once they pass) and reads the feedback; ``get_reward`` judges the last
    tested code on the private tests and returns the episode's return.  Set
    ``GRPOConfig(max_tool_calling_iterations=turns)`` and leave room in
    ``max_completion_length`` for ``turns`` calls and their feedback: TRL runs a
    tool first and drops a result that no longer fits, and the attempt still
    counts here (the model did submit that code).
    """

    default_preset = "rlef"

    def __init__(self, sandbox: Sandbox | None = None, turns: int = TURNS, public: int | float = 1,
                 seed: int = 0, limits: Limits | None = None) -> None:
        super().__init__(max_turns=turns, feedback_chars=FEEDBACK_CHARS, public=public, seed=seed,
                         sandbox=sandbox, limits=limits)

    def _options(self) -> dict[str, Any]:
        return {"sandbox": self.sandbox, "turns": self.max_turns, "public": self.public, "seed": self.seed,
                "limits": self.limits}

    @property
    def public_tests(self) -> TestSuite | None:
        """The tests the tool runs."""
        return self.problem.visible if self.problem else None

    @property
    def private_tests(self) -> TestSuite | None:
        """The tests that judge the last tested code."""
        return self.problem.judge if self.problem else None

    @property
    def private(self) -> ExecutionResult | None:
        """The last tested code's run on the private tests (once ``get_reward`` has judged it)."""
        return self.result

    def reset(self, **row: Any) -> str:
        """Start a rollout for a dataset row; returns the note appended to the user message."""
        super().reset(**row)
        return (f"\n\nTest your code with the run_public_tests tool (at most {self.max_turns} times). "
                "The last code you test is your final answer, judged on hidden tests.")

    def _over(self) -> str:
        last = self.attempts[-1][1] if self.attempts else None
        if last is not None and last.passed:
            return f"{PASSED} Your last tested code is your final answer."
        return f"No test runs left ({self.max_turns} used); your last tested code is your final answer."

    def _run_public_tests(self, code: str) -> str:
        """Run a candidate solution on the problem's public tests.

        Args:
            code: The complete solution code to test, plain or in a fenced code block.

        Returns:
            Whether the public tests passed, or feedback on the first failing test.
        """
        _, result = self._test(code)
        self.ended = result is not None and result.passed
        return feedback_text(result)

    run_public_tests = tool(_run_public_tests)


def environment_factory(sandbox: Sandbox, **options: Any) -> Callable[[], RLEFEnvironment]:
    """``environment_factory=`` for GRPOTrainer: environments sharing ``sandbox`` (``options`` as
    :class:`RLEFEnvironment` takes them)."""
    return functools.partial(RLEFEnvironment, sandbox, **options)
