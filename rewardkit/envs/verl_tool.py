"""CodeEnv's tools as verl (0.9.1) agent-loop tools, and the reward of the episode they played.

verl's tool agent loop (``verl/experimental/agent_loop/tool_agent_loop.py``, ``_call_tool``)
makes a tool instance per *call*: ``create(create_kwargs=...)``, ``execute(instance_id,
arguments, agent_data=...)``, ``release(instance_id)``; ``create_kwargs`` is the row's
``extra_info.tools_kwargs.<tool name>.create_kwargs``.  So the :class:`CodeEnv` of a
trajectory is kept by its ``agent_data.request_id``, reset with the first call's
``create_kwargs`` (the dataset row: ``tests`` and any column rewardkit reads), and dropped
when its episode is done.  The call that ends the episode (``submit``, or the last of
``max_turns``) returns the episode's reward as its step reward, which verl keeps in
``tool_rewards`` and hands to the reward function as ``extra_info["tool_rewards"]``
(managers ``naive``, ``remote``, ``rate_limited``), with the fault flag the tool leaves in
``agent_data.extra_fields``; :func:`compute_score` reads them.

An infrastructure fault follows ``fault`` (:mod:`rewardkit.rewards.faults`; verl cannot drop
a sample): default 0.0, flagged ``rewardkit_fault`` 1.0 in the tool's metrics and in
:func:`compute_score`'s result.  (``raise`` in a tool would be caught by verl's loop and
turned into an error text and a 0.0 reward, so the tool refuses it.)

Tool config (``actor_rollout_ref.rollout.multi_turn.tool_config_path``), one entry per tool::

    tools:
      - class_name: rewardkit.envs.verl_tool.CodeEnvTool
        config: {type: native, tool: run_tests, preset: pass_rate, max_turns: 4}
      - class_name: rewardkit.envs.verl_tool.CodeEnvTool
        config: {type: native, tool: submit, preset: pass_rate, max_turns: 4}

and the reward: ``custom_reward_function: {path: pkg://rewardkit.envs.verl_tool, name: compute_score}``.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import typing
from collections import OrderedDict
from typing import Any, ClassVar
from uuid import uuid4

try:
    from verl.tools.base_tool import BaseTool
    from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse
except ModuleNotFoundError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError("rewardkit.envs.verl_tool needs verl (0.9.1): pip install verl") from exc

from ..rewards.faults import FAULT_KEY, RAISE, Policy, apply, fault_policy
from .code_env import TOOLS, CodeEnv

# config keys that are verl's or this adapter's, not CodeEnv options
OWN_KEYS = frozenset({"type", "tool", "fault"})
# episodes kept at most (trajectories that never ended are dropped oldest first)
MAX_EPISODES = 4096
JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean"}


def tool_schema(name: str) -> OpenAIFunctionToolSchema:
    """The OpenAI function schema of CodeEnv's tool ``name``, from its signature and docstring."""
    if name not in TOOLS:
        raise ValueError(f"CodeEnv has no tool {name!r}; its tools: {', '.join(TOOLS)}")
    method = TOOLS[name]
    hints = typing.get_type_hints(method)
    params = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
    doc = inspect.getdoc(method) or name
    return OpenAIFunctionToolSchema.model_validate({"type": "function", "function": {
        "name": name, "description": doc.split("\n\n")[0],
        "parameters": {"type": "object",
                       "properties": {p.name: {"type": JSON_TYPES.get(hints.get(p.name, str), "string")}
                                      for p in params},
                       "required": [p.name for p in params if p.default is inspect.Parameter.empty]}}})


class CodeEnvTool(BaseTool):
    """One of CodeEnv's tools (``config["tool"]``) for verl's tool agent loop; the tools of
    one trajectory share its :class:`CodeEnv`, made with the config's other keys as options."""

    _episodes: ClassVar[OrderedDict[str, CodeEnv]] = OrderedDict()
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, config: dict[str, Any], tool_schema: OpenAIFunctionToolSchema | None = None) -> None:
        self.tool = str(config.get("tool") or (tool_schema.function.name if tool_schema else ""))
        self.fault: Policy = fault_policy(config.get("fault"), "verl")
        if self.fault == RAISE:
            raise ValueError("fault='raise' cannot reach verl from a tool (its loop turns the error into "
                             "a 0.0 reward); give a number")
        self.options = {k: v for k, v in config.items() if k not in OWN_KEYS}
        self._rows: dict[str, dict[str, Any]] = {}
        super().__init__(config, tool_schema or globals()["tool_schema"](self.tool))

    async def create(self, instance_id: str | None = None, create_kwargs: dict[str, Any] | None = None,
                     **kwargs: Any) -> tuple[str, ToolResponse]:
        """A call's instance; ``create_kwargs`` (the dataset row) starts the trajectory's episode."""
        instance_id = instance_id or str(uuid4())
        self._rows[instance_id] = dict(create_kwargs or {})
        return instance_id, ToolResponse()

    async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any
                      ) -> tuple[ToolResponse, float | None, dict[str, float]]:
        """Run the tool in the trajectory's episode: its text, and, when the call ends the
        episode, the episode's reward (``None`` before: verl then records no step reward)."""
        agent_data = kwargs.get("agent_data")
        key = str(getattr(agent_data, "request_id", None) or instance_id)
        env = await asyncio.to_thread(self._episode, key, self._rows.get(instance_id, {}))
        text = await asyncio.to_thread(env.call, self.tool, **parameters)
        if not env.done:
            return ToolResponse(text=text), None, {}
        with self._lock:
            self._episodes.pop(key, None)
        reward, fault = await asyncio.to_thread(_episode_reward, env, self.fault)
        extra_fields = getattr(agent_data, "extra_fields", None)
        if isinstance(extra_fields, dict):  # reaches the reward function as extra_info
            extra_fields[FAULT_KEY] = fault
        return ToolResponse(text=text), reward, {"reward": reward, FAULT_KEY: fault}

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """The episode's reward so far for the trajectory ``instance_id`` names (by request id)."""
        with self._lock:
            env = self._episodes.get(instance_id)
        return 0.0 if env is None else (await asyncio.to_thread(_episode_reward, env, self.fault))[0]

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """The call is over; the trajectory's episode lives on until it is done."""
        self._rows.pop(instance_id, None)

    def _episode(self, key: str, row: dict[str, Any]) -> CodeEnv:
        with self._lock:
            env = self._episodes.get(key)
            if env is not None:
                return env
        env = CodeEnv(**self.options)
        env.reset(**row)
        with self._lock:
            env = self._episodes.setdefault(key, env)
            while len(self._episodes) > MAX_EPISODES:
                self._episodes.popitem(last=False)
        return env


def _episode_reward(env: CodeEnv, policy: Policy) -> tuple[float, float]:
    """The episode's reward under the fault policy ``policy``, and the fault flag."""
    value = env.get_reward()
    score = apply(None if env.fault else value, policy, "CodeEnv episode", who="verl")
    return float(score if score is not None else 0.0), float(env.fault)


def compute_score(data_source: Any, solution_str: str, ground_truth: Any,
                  extra_info: dict[str, Any] | None = None, **reward_kwargs: Any) -> dict[str, float]:
    """verl's reward of a tool episode: the last step reward the tools gave
    (``extra_info["tool_rewards"]``, the episode's reward from the call that ended it); a
    trajectory that never ended its episode scores its final response as the answer, in a
    fresh CodeEnv made with ``reward_kwargs`` (options) from the row (``ground_truth`` as its
    ``tests``, ``extra_info``'s other keys as columns)."""
    del data_source  # verl's argument; the row's columns say all the episode needs
    info = dict(extra_info or {})
    rewards = [r for r in info.get("tool_rewards") or [] if r is not None]
    if rewards:
        return {"score": float(rewards[-1]), "episode_ended": 1.0, FAULT_KEY: float(info.get(FAULT_KEY, 0.0))}
    policy = fault_policy(reward_kwargs.pop("fault", None), "verl")
    env = CodeEnv(**{k: v for k, v in reward_kwargs.items()
                     if k not in ("reward_router_address", "reward_model_tokenizer")})
    columns = {k: v for k, v in info.items()
               if k not in ("tool_rewards", "turn_scores", "num_turns", "rollout_reward_scores")}
    env.reset(**{**columns, "tests": ground_truth})
    env.call("submit", code=solution_str)
    score, fault = _episode_reward(env, policy)
    return {"score": score, "episode_ended": 0.0, FAULT_KEY: fault}
