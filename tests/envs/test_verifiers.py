"""The verifiers (0.4) adapter driven through verifiers' own ``Rollout``: its subprocess runtime,
interception server and state channel, the adapter's tool server started by verifiers, and a
harness that plays a scripted agent (MCP tool calls, no model); rewards compared with CodeEnv's.

verifiers learns a local tool server's port from a ``/tmp/vf-port-<hex>`` file that it never
removes; the tests remove the ones their rollouts made (the file runs on one xdist worker, so
no other test's port file is touched while verifiers waits on it)."""

from __future__ import annotations

import asyncio
import glob
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verifiers.v1")

import verifiers.v1 as vf
from killer import killing
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from verifiers.v1.rollout import Rollout, RolloutTimeouts
from verifiers.v1.session import RolloutLimits

from rewardkit.envs import CodeEnv
from rewardkit.envs.verifiers import CodeTaskset, CodeTasksetConfig, code_taskset
from rewardkit.rewards.faults import FAULT_KEY

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "formats"))
from competitive_rows import ROWS, STDIO_RIGHT, STDIO_WRONG

ROW = {"tests": {"mode": "stdio", "cases": [{"input": "2\n", "output": "4\n"},
                                            {"input": "5\n", "output": "10\n"}]}}
LIMIT_S = 60.0
PORT_FILES = "/tmp/vf-port-*"  # nosec B108 - verifiers' own path, only removed here


@pytest.fixture(autouse=True, scope="module")
def remove_port_files() -> Iterator[None]:
    """Remove the port files verifiers left for this module's tool servers."""
    before = set(glob.glob(PORT_FILES))
    yield
    for path in set(glob.glob(PORT_FILES)) - before:
        os.remove(path)


class ScriptedHarness(vf.Harness[vf.HarnessConfig]):
    """An agent that makes the given tool calls over MCP, in process, and records their output."""

    SUPPORTS_MCP = True
    NEEDS_CONTAINER = False
    EXECUTES_CODE = False

    def __init__(self, calls: list[tuple[str, dict[str, str]]]) -> None:
        super().__init__(vf.HarnessConfig(id="scripted"))
        self.calls = calls
        self.tools: list[str] = []
        self.outputs: list[str] = []

    async def launch(self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str,
                     mcp_urls: dict[str, str], data: Any, **kwargs: Any) -> vf.ProgramResult:
        for url in mcp_urls.values():
            async with Client(streamable_http_client(url)) as client:
                self.tools += [tool.name for tool in (await client.list_tools()).tools]
                for name, arguments in self.calls:
                    result = await client.call_tool(name, arguments)
                    self.outputs.append(getattr(result.content[0], "text", ""))
        return vf.ProgramResult(0, "", "")


def _rollouts(*runs: tuple[Any, list[tuple[str, dict[str, str]]]]) -> list[tuple[Any, ScriptedHarness]]:
    """Rollouts of (task, scripted calls), run concurrently, each opened, run and closed by verifiers."""

    async def one(task: Any, calls: list[tuple[str, dict[str, str]]]) -> tuple[Any, ScriptedHarness]:
        harness = ScriptedHarness(calls)
        rollout = Rollout(task=task, agent_config=vf.AgentConfig(runtime=vf.SubprocessConfig()),
                          harness=harness, ctx=vf.ModelContext("scripted", vf.EvalClientConfig()),
                          runtime_config=vf.SubprocessConfig(), timeouts=RolloutTimeouts(agent=LIMIT_S),
                          limits=RolloutLimits())
        if await rollout.open():
            await rollout.step()
        return await rollout.close(), harness

    async def run() -> list[tuple[Any, ScriptedHarness]]:
        return list(await asyncio.gather(*(one(task, calls) for task, calls in runs)))

    return asyncio.run(run())


def _code_env_reward(row: dict[str, Any], answer: str) -> float:
    env = CodeEnv(preset="pass_rate")
    env.reset(**row)
    env.call("submit", code=answer)
    return env.get_reward()


@pytest.mark.slow  # each rollout starts verifiers' tool server process (importing verifiers: ~3 s)
def test_right_and_wrong_answers_score_as_code_env() -> None:
    right_task, wrong_task = code_taskset([ROW, ROW], preset="pass_rate", tools=["run_tests", "submit"],
                                          max_turns=3)
    (right, harness), (wrong, _) = _rollouts(
        (right_task, [("run_tests", {"code": STDIO_WRONG}), ("submit", {"code": STDIO_RIGHT}),
                      ("run_tests", {"code": STDIO_WRONG})]),
        (wrong_task, [("submit", {"code": STDIO_WRONG})]))
    assert right.ok and wrong.ok, (right.errors, wrong.errors)
    assert sorted(harness.tools) == ["run_tests", "submit"]
    assert harness.outputs[0].startswith("0/1 visible tests passed")
    assert "episode is over" in harness.outputs[2]
    assert right.state.submitted and right.state.answer == STDIO_RIGHT and right.state.tool_calls == 2
    assert right.rewards["reward"].score == _code_env_reward(ROW, STDIO_RIGHT) == 1.0
    assert wrong.rewards["reward"].score == _code_env_reward(ROW, STDIO_WRONG) < 1.0
    assert right.metrics[FAULT_KEY] == wrong.metrics[FAULT_KEY] == 0.0


@pytest.mark.slow
def test_a_killed_sandbox_is_a_task_error_or_the_stated_number_flagged() -> None:
    """The reward's run dies: ``skip`` (the default) leaves the rollout failed with a TaskError
    and unscored, never 0 or None; a number is given as the reward, flagged."""
    (skipped,) = code_taskset([ROW], preset="pass_rate", workers=1)
    (stated,) = code_taskset([ROW], preset="pass_rate", workers=1, fault=-1.0)
    with killing("runtime.worker"):
        (skip, _), (number, _) = _rollouts((skipped, [("submit", {"code": STDIO_RIGHT})]),
                                           (stated, [("submit", {"code": STDIO_RIGHT})]))
    assert not skip.ok and skip.last_error.type == "TaskError"
    assert "infrastructure fault" in skip.last_error.message
    assert skip.rewards["reward"] is None
    assert number.ok and number.rewards["reward"].score == -1.0 and number.metrics[FAULT_KEY] == 1.0


def test_rows_load_through_verifiers_taskset_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-line plugin module (verifiers' taskset ids name top-level modules) and rows in a
    JSON Lines file, loaded as ``--env.taskset.id rewardkit_code --env.taskset.rows ...`` loads them."""
    (tmp_path / "rewardkit_code.py").write_text(
        'from rewardkit.envs.verifiers import CodeTaskset\n__all__ = ["CodeTaskset"]\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    lcb = ROWS["rllm ground_truth functional"][0]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in (ROW, {**lcb, "prompt": "Double n."})) + "\n")
    config = CodeTasksetConfig(id="rewardkit_code", rows=str(path),
                               task={"options": {"preset": "binary"}, "fault": "raise"})
    taskset = vf.load_taskset(config)
    assert isinstance(taskset, CodeTaskset)
    first, second = list(taskset)
    assert (first.data.idx, second.data.idx) == (0, 1) and first.data.row == ROW
    assert first.data.prompt == CodeEnv().reset(**ROW) and second.data.prompt == "Double n."
    assert first.config.options == {"preset": "binary"} and first.config.fault == "raise"
    with pytest.raises(ValueError, match="unknown preset"):
        code_taskset([ROW], preset="nope")
