"""CodeEnv as a verifiers (0.4) taskset: rewardkit rows as tasks, CodeEnv's tools, its reward.

verifiers 0.4 (``import verifiers.v1 as vf``) serves a task's tools as MCP servers: the
:class:`CodeToolset` of a rollout runs in a process of its own (``python -m
rewardkit.envs.verifiers``, started by verifiers), which makes one :class:`~rewardkit.envs.CodeEnv`,
resets it with the rollout's row (``setup_task``) and offers its tools (``run_tests``,
``run_input``, ``measure``, ``quality``, ``submit``; ``tools=`` picks some).  After each call
the server writes the episode's final answer to the rollout's state (:class:`CodeState`,
synced by verifiers' state channel), and a ``submit`` stops the rollout.  The task's
``@vf.reward`` ``reward`` scores that answer, or the model's last reply where no tool ran
code, with CodeEnv's ``get_reward`` on the row's hidden tests.

An infrastructure fault follows ``fault`` (:mod:`rewardkit.rewards.faults`, default
``skip``): the reward raises :class:`~rewardkit.rewards.faults.RewardFault`, which verifiers
records as a ``TaskError``, the rollout ``ok=False`` and unscored; a number is given as the
reward with the metric ``rewardkit_fault`` 1.0.  The metric is 0.0 for a scored rollout.

In Python::

    taskset = code_taskset(rows, preset="pass_rate", max_turns=4)   # rows: any format rewardkit reads

From verifiers' command line (its taskset ids name top-level modules), a module
``rewardkit_code.py`` holding ``from rewardkit.envs.verifiers import CodeTaskset`` and
``__all__ = ["CodeTaskset"]``, the rows in a JSON Lines file::

    --env.taskset.id rewardkit_code --env.taskset.rows rows.jsonl
    --env.taskset.task.options '{"preset": "pass_rate"}' --env.agent.harness.id null

(the ``null`` harness: the model gets CodeEnv's tools only; the default ``bash`` harness
would also give it a shell in the rollout's runtime, outside rewardkit's sandbox).  CodeEnv
options travel to the tool server as JSON: a ``sandbox`` object or ``Limits`` cannot; give
``workers`` and ``limits`` as plain values.

The classes are defined here, at import, because verifiers resolves them from their module
(the tool server is this module run as a program; the task data class is imported by name).
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import Field

from ..optional import requires

with requires("envs"):
    import verifiers.v1 as vf

from ..rewards.faults import FAULT_KEY, Policy, RewardFault, apply, fault_policy
from .code_env import TOOLS, CodeEnv

__all__ = ["CodeState", "CodeTask", "CodeTaskConfig", "CodeTaskData", "CodeTaskset", "CodeTasksetConfig",
           "CodeToolset", "CodeToolsetConfig", "code_taskset"]


class CodeState(vf.State):
    """What the tool server leaves for the reward: the episode's final answer (the submitted
    code, else the last code run on the tests), whether it was submitted, tool calls used."""

    answer: str | None = None
    submitted: bool = False
    tool_calls: int = 0


class CodeTaskData(vf.TaskData):
    """A task: the rewardkit row (``row``), the prompt built from it."""

    row: dict[str, Any] = Field(default_factory=dict)


class CodeTaskConfig(vf.TaskConfig):
    """CodeEnv options (``preset``, ``tools``, ``max_turns``, preset options...) and the fault policy."""

    options: dict[str, Any] = Field(default_factory=dict)
    fault: str | float | None = None


class CodeToolsetConfig(vf.ToolsetConfig):
    """The CodeEnv options of the rollout's environment."""

    options: dict[str, Any] = Field(default_factory=dict)


class CodeToolset(vf.Toolset[CodeToolsetConfig, CodeState]):
    """CodeEnv's tools on one CodeEnv per rollout (verifiers starts a server per rollout)."""

    TOOL_PREFIX = None  # the tools keep CodeEnv's names

    def __init__(self, config: CodeToolsetConfig) -> None:
        super().__init__(config)
        self.env = CodeEnv(**config.options)
        self._turn = asyncio.Lock()  # one tool call at a time on the episode

    async def setup_task(self, task: CodeTaskData) -> None:
        """Start the episode on the rollout's row."""
        await asyncio.to_thread(self.env.reset, **task.row)

    def register(self, mcp: Any) -> None:
        """Register the tools the environment offers, described as CodeEnv describes them."""
        for name in self.env.tools:
            mcp.add_tool(self._with_state(getattr(self, name)), name=name,
                         description=inspect.getdoc(TOOLS[name]))

    async def _call(self, name: str, **arguments: str) -> str:
        """Run the tool on the episode, and leave its final answer in the rollout's state."""
        async with self._turn:
            output = await asyncio.to_thread(self.env.call, name, **arguments)
            state = self.state
            state.answer = self.env.final_answer
            state.submitted = self.env.submitted is not None
            state.tool_calls = self.env.turns
        return output

    async def run_tests(self, code: str) -> str:
        """CodeEnv's ``run_tests``."""
        return await self._call("run_tests", code=code)

    async def run_input(self, code: str, stdin: str) -> str:
        """CodeEnv's ``run_input``."""
        return await self._call("run_input", code=code, stdin=stdin)

    async def measure(self, code: str) -> str:
        """CodeEnv's ``measure``."""
        return await self._call("measure", code=code)

    async def quality(self, code: str) -> str:
        """CodeEnv's ``quality``."""
        return await self._call("quality", code=code)

    async def submit(self, code: str) -> str:
        """CodeEnv's ``submit``."""
        return await self._call("submit", code=code)


class CodeTask(vf.Task[CodeTaskData, CodeState, CodeTaskConfig]):
    """A rewardkit row as a verifiers task: CodeEnv's tools, CodeEnv's reward."""

    @classmethod
    def toolsets(cls, config: CodeTaskConfig) -> list[vf.Toolset]:
        """CodeEnv's tools, served by one toolset per rollout (``cls``: verifiers' signature)."""
        del cls
        return [CodeToolset(CodeToolsetConfig(options=config.options))]

    @vf.stop
    async def submitted(self, trace: vf.Trace) -> bool:
        """The rollout ends once the answer is submitted."""
        return bool(trace.state.submitted)

    @vf.reward
    async def reward(self, task: CodeTaskData, trace: vf.Trace) -> float:
        """CodeEnv's reward of the final answer: the state's (from the tools), else the last reply.

        Raises :class:`RewardFault` on an infrastructure fault under ``skip``/``raise``.
        """
        policy: Policy = fault_policy(self.config.fault, "verifiers")
        answer = trace.state.answer if trace.state.answer is not None else trace.last_reply
        value, fault = await asyncio.to_thread(_score, self.config.options, task.row, answer)
        trace.record_metric(FAULT_KEY, float(fault))
        score = apply(None if fault else value, policy, "CodeEnv episode", who="verifiers")
        if score is None:
            raise RewardFault("no reward: infrastructure fault (CodeEnv episode)")
        return score


def _score(options: Mapping[str, Any], row: Mapping[str, Any], answer: str) -> tuple[float, bool]:
    """CodeEnv's reward for submitting ``answer`` on ``row``, and whether a fault took it."""
    env = CodeEnv(**{**options, "tools": None})
    env.reset(**row)
    env.call("submit", code=answer)
    return env.get_reward(), env.fault


def _task(row: Mapping[str, Any], config: CodeTaskConfig) -> CodeTask:
    """The task of one row; CodeEnv builds the prompt (the row's own ``prompt`` where it has one)."""
    env = CodeEnv(**config.options)
    problem = env.reset(**row)
    prompt = row.get("prompt") if problem is None else problem
    return CodeTask(CodeTaskData(prompt=prompt, row=dict(row), id=_text(row.get("id") or row.get("task_id"))),
                    config)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


class CodeTasksetConfig(vf.TasksetConfig):
    """Rows (a list, or a JSON Lines file's path) and the task config (``task.options``...)."""

    rows: list[dict[str, Any]] | str = Field(default_factory=list)
    task: CodeTaskConfig = CodeTaskConfig()


class CodeTaskset(vf.Taskset[CodeTask, CodeTasksetConfig]):
    """One :class:`CodeTask` per row."""

    def load(self) -> Iterator[CodeTask]:
        """The rows, given as a list or as the path of a JSON Lines file."""
        rows = self.config.rows
        if isinstance(rows, str):
            rows = [json.loads(line) for line in Path(rows).read_text().splitlines() if line.strip()]
        for row in rows:
            yield _task(row, self.config.task)


def code_taskset(rows: Iterable[Mapping[str, Any]], *, fault: Policy | None = None,
                 **options: Any) -> CodeTaskset:
    """A verifiers taskset of ``rows`` (any format rewardkit reads), with CodeEnv ``options``
    (``preset``, ``tools``, ``max_turns``, preset options...) and the fault policy ``fault``."""
    fault_policy(fault, "verifiers")  # fail fast on a bad policy
    CodeEnv(**options)  # and on bad options
    task = CodeTaskConfig(options=options, fault=fault)
    return CodeTaskset(CodeTasksetConfig(rows=[dict(row) for row in rows], task=task))


if __name__ == "__main__":  # verifiers starts a rollout's tool server as this module
    from rewardkit.envs.verifiers import CodeToolset as _Served  # the importable classes, not __main__'s

    _Served.run()
