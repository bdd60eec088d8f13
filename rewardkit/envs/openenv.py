"""CodeEnv as an OpenEnv environment, its server app and its client.

:class:`CodeEnvironment` is an ``openenv.core.Environment``: ``reset(**row)``
takes a dataset row in any format rewardkit reads, each ``step`` runs one
CodeEnv tool call (:class:`CodeAction`: a tool name and its arguments) and
returns a :class:`CodeObservation` with the tool's output; the step that ends
the episode (``submit``, or the last turn) carries the episode's reward, the
earlier ones ``0.0``.  :func:`create_code_app` serves it with OpenEnv's own
FastAPI app (one environment per WebSocket session) and
:class:`CodeEnvClient` talks to that server::

    app = create_code_app(preset="pass_rate", max_turns=4)    # uvicorn serves it
    with CodeEnvClient(base_url="http://127.0.0.1:8000").sync() as client:
        client.reset(**row)
        result = client.step(CodeAction(tool_name="submit", arguments={"code": code}))
        result.reward, result.done

The environment and its factory (``functools.partial(CodeEnvironment, ...)``)
pickle with plain ``pickle``.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from ..optional import requires

with requires("envs"):
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.interfaces import Environment
    from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from . import CodeEnv

if TYPE_CHECKING:
    from fastapi import FastAPI

ENV_NAME = "rewardkit-code"


class CodeAction(Action):
    """One CodeEnv tool call: the tool's name (``run_tests``, ``submit``...) and its arguments."""

    tool_name: str = Field(description="Name of the CodeEnv tool to call")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool's keyword arguments")


class CodeObservation(Observation):
    """The tool's output (after ``reset``: the problem text, empty when the row's own prompt is
    what the model sees), the tools offered and the tool calls used so far."""

    output: str = Field(default="", description="The tool's output, or the problem text after reset")
    tools: list[str] = Field(default_factory=list, description="Names of the tools offered")
    turns: int = Field(default=0, description="Tool calls used in this episode")


class CodeState(State):
    """The episode's state: ``step_count`` counts every step, ``turns`` the tool calls CodeEnv
    counted; ``reward`` is set once the episode is done."""

    tools: list[str] = Field(default_factory=list)
    turns: int = 0
    done: bool = False
    reward: float | None = None


class CodeEnvironment(Environment[CodeAction, CodeObservation, CodeState]):
    """A :class:`~rewardkit.envs.CodeEnv` episode behind OpenEnv's ``reset``/``step``/``state``.

    Every keyword argument is a CodeEnv option (``preset``, ``max_turns``, ``tools``...).
    Each instance owns its CodeEnv, so concurrent sessions do not share state.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, **options: Any) -> None:
        super().__init__()
        self.env = CodeEnv(**options)
        self._state = CodeState()

    def reset(self, seed: int | None = None, episode_id: str | None = None, **row: Any) -> CodeObservation:
        """Start an episode on ``row`` (any column layout rewardkit reads); ``seed`` is unused:
        an episode depends only on its row and its actions."""
        del seed
        prompt = self.env.reset(**row)
        self._state = CodeState(episode_id=episode_id, tools=list(self.env.tools))
        return CodeObservation(output=prompt or "", tools=list(self.env.tools), turns=0,
                               done=bool(self.env.done))

    def step(self, action: CodeAction, timeout_s: float | None = None, **kwargs: Any) -> CodeObservation:
        """Run one tool call; once the episode is done the observation carries its reward.
        CodeEnv's own time limits apply, so ``timeout_s`` is not used."""
        del timeout_s, kwargs
        output = self.env.call(action.tool_name, **action.arguments)
        done = bool(self.env.done)
        reward = float(self.env.get_reward()) if done else 0.0
        self._state = self._state.model_copy(update={
            "step_count": self._state.step_count + 1, "turns": self.env.turns, "done": done,
            "reward": reward if done else None})
        return CodeObservation(output=output, tools=list(self.env.tools), turns=self.env.turns,
                               done=done, reward=reward)

    @property
    def state(self) -> CodeState:
        """The current episode's state."""
        return self._state


def create_code_app(max_concurrent_envs: int = 1, **options: Any) -> FastAPI:
    """OpenEnv's FastAPI app serving :class:`CodeEnvironment` with CodeEnv ``options``; each
    WebSocket session (one :class:`CodeEnvClient`) gets its own environment."""
    return create_app(partial(CodeEnvironment, **options), CodeAction, CodeObservation, env_name=ENV_NAME,
                      max_concurrent_envs=max_concurrent_envs)


class CodeEnvClient(EnvClient[CodeAction, CodeObservation, CodeState]):
    """Client of a :func:`create_code_app` server (async; ``.sync()`` gives a blocking one).
    ``reset(**row)`` sends the row; ``step(CodeAction(...))`` runs a tool call."""

    def _step_payload(self, action: CodeAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[CodeObservation]:
        observation = CodeObservation(**payload.get("observation", {}), done=payload.get("done", False),
                                      reward=payload.get("reward"))
        return StepResult(observation=observation, reward=payload.get("reward"),
                          done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> CodeState:
        return CodeState(**payload)
