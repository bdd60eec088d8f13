"""CodeEnv's tools driven as verl 0.9.1's tool agent loop drives a ``BaseTool``.

verl's own classes come from the unpacked wheel in ``.cache/verl`` (its package ``__init__``
needs tensordict and ray, so the package is entered without it); the loop's calls are copied
from ``tool_agent_loop.py``, ``_call_tool``: per call ``create(create_kwargs=...)``,
``execute(instance_id, arguments, agent_data=...)``, ``release(instance_id)``.
"""

from __future__ import annotations

import asyncio
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from killer import killing

WHEEL = Path(__file__).resolve().parents[2] / ".cache" / "verl" / "verl"
if not WHEEL.is_dir():
    pytest.skip("verl's unpacked wheel is not in .cache/verl", allow_module_level=True)
if "verl" not in sys.modules:
    package = types.ModuleType("verl")
    package.__path__ = [str(WHEEL)]
    sys.modules["verl"] = package

from verl.tools.base_tool import BaseTool  # noqa: E402
from verl.tools.tool_registry import initialize_tools_from_config  # noqa: E402

from rewardkit.envs import verl_tool  # noqa: E402
from rewardkit.sandbox import Limits, Sandbox  # noqa: E402

CONFIG = Path(verl_tool.__file__).with_name("verl_tool.yaml")
TESTS = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{2 * n}\n"} for n in (1, 5, 40)]}
RIGHT = "n = int(input())\nprint(2 * n)\n"
WRONG = "print(0)\n"


async def call(tool: BaseTool, row: dict[str, Any], arguments: dict[str, Any], agent: Any
               ) -> tuple[Any, Any, Any]:
    """One tool call as verl's ``_call_tool`` makes it."""
    instance_id, _ = await tool.create(create_kwargs=row)
    try:
        return await tool.execute(instance_id, arguments, agent_data=agent)  # type: ignore[no-any-return]
    finally:
        await tool.release(instance_id)


def trajectory(request_id: str) -> Any:
    """The two attributes of verl's ``AgentData`` that the tool reads."""
    return types.SimpleNamespace(request_id=request_id, extra_fields={})


def test_verl_loads_the_example_config_and_a_trajectory_shares_one_episode() -> None:
    tools = {tool.name: tool for tool in initialize_tools_from_config(str(CONFIG))}
    assert set(tools) == {"run_tests", "submit"} and all(isinstance(t, BaseTool) for t in tools.values())
    assert tools["run_tests"].tool_schema.function.parameters.required == ["code"]
    row = {"tests": TESTS}
    first, second = trajectory("a"), trajectory("b")

    async def play() -> list[Any]:
        return [await call(tools["run_tests"], row, {"code": WRONG}, first),
                await call(tools["run_tests"], row, {"code": RIGHT}, second),
                await call(tools["submit"], row, {"code": RIGHT}, first),
                await call(tools["submit"], row, {"code": WRONG}, second)]

    tested, _, right, wrong = asyncio.run(play())
    assert tested[1] is None and tested[0].text.startswith("0/") and "wrong answer" in tested[0].text
    assert right[1] == 1.0 and right[2] == {"reward": 1.0, "rewardkit_fault": 0.0}
    assert wrong[1] == 0.0
    assert first.extra_fields == {"rewardkit_fault": 0.0}
    # verl hands the step rewards and extra fields to the reward function as extra_info
    info = {"tool_rewards": [right[1]], **first.extra_fields}
    assert verl_tool.compute_score("code", "", TESTS, info, preset="pass_rate") == {
        "score": 1.0, "episode_ended": 1.0, "rewardkit_fault": 0.0}


def test_a_trajectory_that_never_submits_scores_its_final_response() -> None:
    answer = f"```python\n{RIGHT}```"
    got = verl_tool.compute_score("code", answer, TESTS, {"tool_rewards": []}, preset="pass_rate")
    assert got == {"score": 1.0, "episode_ended": 0.0, "rewardkit_fault": 0.0}


def test_a_sandbox_fault_gets_the_stated_value_flagged() -> None:
    with killing("runtime.worker"), Sandbox(workers=1, limits=Limits(time_s=2)) as doomed:
        tool = verl_tool.CodeEnvTool({"type": "native", "tool": "submit", "preset": "pass_rate",
                                      "sandbox": doomed, "fault": -1.0}, None)
        agent = trajectory("faulted")
        _, reward, metrics = asyncio.run(call(tool, {"tests": TESTS}, {"code": RIGHT}, agent))
    assert reward == -1.0 and metrics == {"reward": -1.0, "rewardkit_fault": 1.0}
    assert agent.extra_fields == {"rewardkit_fault": 1.0}
    with pytest.raises(ValueError, match="cannot reach verl"):
        verl_tool.CodeEnvTool({"type": "native", "tool": "submit", "fault": "raise"}, None)
