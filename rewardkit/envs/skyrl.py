"""CodeEnv as a skyrl-gym text environment, registered as ``rewardkit-code``.

SkyRL makes an environment per trajectory with
``skyrl_gym.make(env_class, env_config=..., extras=...)``: ``env_config`` is the
``environment.skyrl_gym.<env_class>`` section of the training config (here:
CodeEnv options such as ``preset`` or ``max_turns``) and ``extras`` the
dataset row's columns besides the prompt (any format rewardkit reads; SkyRL's
``reward_spec.ground_truth`` is read as the row's ``ground_truth`` column, so
its LiveCodeBench rows work as they are).  ``init(prompt)`` starts the
episode; each ``step(text)`` runs the one tool call it finds in the model's
text, in skyrl-gym's tag convention::

    <tool><run_tests>```python ...```</run_tests></tool>
    <tool><run_input><code>...</code><stdin>2</stdin></run_input></tool>
    <tool_call>{"name": "run_tests", "arguments": {"code": "..."}}</tool_call>
    <solution>```python ...```</solution>          (the final answer: submit)

The step that ends the episode (the answer, or the last turn) carries the
episode's reward, the earlier ones ``0.0``.  Importing this module registers
the id; :func:`register` adds ids with their own CodeEnv options.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Mapping
from typing import Any

from ..optional import requires

with requires("envs"):
    import skyrl_gym
    from omegaconf import DictConfig, OmegaConf
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput, ConversationType

from . import CodeEnv

ENV_ID = "rewardkit-code"
ENTRY_POINT = "rewardkit.envs.skyrl:CodeTextEnv"

TOOL_TAG = re.compile(r"<tool>\s*<(\w+)>(.*?)</\1>\s*</tool>", re.DOTALL)
TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
SOLUTION = re.compile(r"<solution>(.*?)</solution>", re.DOTALL)
USAGE = ("Call one tool per reply as <tool><NAME>ARGUMENT</NAME></tool>, with several arguments as "
         "<tool><NAME><ARG>...</ARG>...</NAME></tool>; give your final answer as <solution>CODE</solution>.")


def _options(env_config: Any) -> dict[str, Any]:
    """``env_config`` (None, a mapping or SkyRL's OmegaConf ``DictConfig``) as a plain dict."""
    if isinstance(env_config, DictConfig):
        return dict(OmegaConf.to_container(env_config, resolve=True))  # type: ignore[arg-type]
    return dict(env_config or {})


def _row(extras: Mapping[str, Any]) -> dict[str, Any]:
    """The dataset row in ``extras``: SkyRL's ``max_turns`` removed, ``reward_spec.ground_truth``
    lifted to a ``ground_truth`` column unless the row has one."""
    row = {key: value for key, value in extras.items() if key != "max_turns"}
    spec = row.get("reward_spec")
    if isinstance(spec, Mapping) and "ground_truth" in spec and row.get("ground_truth") is None:
        row["ground_truth"] = spec["ground_truth"]
    return row


def parse_action(text: str, parameters: Mapping[str, list[str]]) -> tuple[str, dict[str, Any]]:
    """The tool call in a model's reply as (tool name, arguments); ``parameters`` maps each tool
    offered to its parameter names.  A ``<solution>`` is a ``submit``.  Raises ``ValueError``
    with the message the model sees when the reply has no usable call."""
    solution = SOLUTION.search(text)
    if solution:
        return "submit", {"code": solution.group(1).strip("\n")}
    call = TOOL_CALL.search(text)
    if call:
        try:
            payload = json.loads(call.group(1))
            arguments = payload.get("arguments", {})
            if isinstance(arguments, str):
                arguments = json.loads(arguments)
            name = payload["name"]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError('<tool_call> must hold JSON {"name": ..., "arguments": {...}}') from exc
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise ValueError('<tool_call> must hold JSON {"name": ..., "arguments": {...}}')
        return name, arguments
    tag = TOOL_TAG.search(text)
    if not tag:
        raise ValueError(f"No tool call found. {USAGE}")
    name, body = tag.group(1), tag.group(2)
    names = parameters.get(name, [])
    tagged = {key: match.group(1) for key in names
              if (match := re.search(rf"<{key}>(.*?)</{key}>", body, re.DOTALL))}
    if not tagged and names:
        tagged = {names[0]: body}
    return name, {key: value.strip("\n") for key, value in tagged.items()}


class CodeTextEnv(BaseTextEnv):
    """A :class:`~rewardkit.envs.CodeEnv` episode behind skyrl-gym's ``init``/``step``.

    CodeEnv options come from ``options`` (the registration's keyword arguments), then
    ``env_config``; ``extras["max_turns"]`` (which SkyRL's generator sets) bounds the model's
    replies and CodeEnv's tool calls alike.  ``instructions=True`` appends the tools and the
    call syntax to the prompt.
    """

    def __init__(self, env_config: Any = None, extras: Mapping[str, Any] | None = None,
                 **options: Any) -> None:
        super().__init__()
        options = {**options, **_options(env_config)}
        extras = dict(extras or {})
        self.instructions = bool(options.pop("instructions", False))
        if "max_turns" in extras:
            options["max_turns"] = int(extras["max_turns"])
        self.env = CodeEnv(**options)
        self.max_turns = self.env.max_turns
        self.row = _row(extras)

    def init(self, prompt: ConversationType) -> tuple[ConversationType, dict[str, Any]]:
        """Start the episode on the row, ``prompt`` as its prompt column unless it has one (as in
        TRL's rows); CodeEnv's problem text, if any, and with ``instructions`` the tools and their
        syntax are appended to the last message, as TRL does with ``reset``'s observation."""
        problem = self.env.reset(**{"prompt": prompt or None, **self.row})
        if self.instructions:
            tools = ", ".join(f"{name}({', '.join(self._parameters().get(name, []))})"
                              for name in self.env.tools)
            problem = "\n\n".join(part for part in (problem, f"Tools: {tools}. {USAGE}") if part)
        if not problem:
            return prompt, {}
        if not prompt:
            return [{"role": "user", "content": problem}], {}
        last = prompt[-1]
        return [*prompt[:-1], {**last, "content": f"{last['content']}\n\n{problem}"}], {}

    def _parameters(self) -> dict[str, list[str]]:
        return {name: list(inspect.signature(getattr(self.env, name)).parameters)
                for name in self.env.tools if callable(getattr(self.env, name, None))}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """Run the reply's tool call (or tell the model why there is none)."""
        self.turns += 1
        try:
            tool, arguments = parse_action(action, self._parameters())
        except ValueError as exc:
            tool, arguments, output = None, {}, str(exc)
        else:
            output = self.env.call(tool, **arguments)
        done = bool(self.env.done) or self.turns >= self.max_turns
        reward = float(self.env.get_reward()) if done else 0.0
        return BaseTextEnvStepOutput(
            observations=[] if done else [{"role": "user", "content": output}], reward=reward, done=done,
            metadata={"tool_name": tool, "tool_input": arguments, "output": output})

    def get_metrics(self) -> dict[str, Any]:
        """Replies and tool calls of the episode."""
        return {"turns": self.turns, "tool_calls": self.env.turns}


def register(env_id: str = ENV_ID, **options: Any) -> None:
    """Register ``env_id`` with skyrl-gym, its environments made with CodeEnv ``options``
    (``env_config`` still overrides them); registering an id again replaces it."""
    if env_id in skyrl_gym.registry:
        skyrl_gym.envs.registration.deregister(env_id)
    skyrl_gym.register(id=env_id, entry_point=ENTRY_POINT, kwargs=options)


if ENV_ID not in skyrl_gym.registry:
    register()
