"""The OpenEnv adapter driven through OpenEnv's own classes: the environment in process, and its
FastAPI app on loopback with OpenEnv's WebSocket client; rewards compared with CodeEnv's."""

from __future__ import annotations

import pickle
import sys
import threading
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest

pytest.importorskip("openenv.core")
uvicorn = pytest.importorskip("uvicorn")

from rewardkit.envs import CodeEnv  # noqa: E402
from rewardkit.envs.openenv import (  # noqa: E402
    CodeAction,
    CodeEnvClient,
    CodeEnvironment,
    CodeObservation,
    create_code_app,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "formats"))
from competitive_rows import ROWS  # noqa: E402

ROW = {"prompt": "Read n and print twice n.", "tests": {"mode": "stdio", "cases": [
    {"input": "2\n", "output": "4\n"}, {"input": "5\n", "output": "10\n"}]}}
RIGHT = "n = int(input())\nprint(n * 2)\n"
WRONG = "n = int(input())\nprint(n * 3)\n"


def _code_env_reward(row: dict[str, object], code: str) -> float:
    env = CodeEnv(preset="pass_rate")
    env.reset(**row)
    env.submit(code)
    return env.get_reward()


def test_episode_through_openenv_classes_and_pickle() -> None:
    factory = partial(CodeEnvironment, preset="pass_rate", max_turns=3)
    env = pickle.loads(pickle.dumps(factory))()
    first = env.reset(episode_id="e1", **ROW)
    assert isinstance(first, CodeObservation) and first.done is False and "submit" in first.tools
    tried = env.step(CodeAction(tool_name="run_tests", arguments={"code": WRONG}))
    assert (tried.done, tried.reward, tried.turns) == (False, 0.0, 1) and tried.output
    assert env.step(CodeAction(tool_name="nope")).done is False  # an unknown tool is told, not raised
    copy = pickle.loads(pickle.dumps(env))
    last = copy.step(CodeAction(tool_name="submit", arguments={"code": RIGHT}))
    assert last.done is True and last.reward == _code_env_reward(ROW, RIGHT) == 1.0
    assert copy.state.episode_id == "e1" and copy.state.done and copy.state.reward == 1.0
    assert env.state.step_count == 2 and not env.state.done


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    """OpenEnv's app for CodeEnvironment, served by uvicorn on a free loopback port."""
    server = uvicorn.Server(uvicorn.Config(create_code_app(max_concurrent_envs=2, preset="pass_rate"),
                                           host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    server.should_exit = True
    thread.join(timeout=30)


def test_right_and_wrong_episodes_over_websocket(server_url: str) -> None:
    lcb, _ = ROWS["livecodebench stdin"]  # a public format: LiveCodeBench's columns
    with CodeEnvClient(base_url=server_url).sync() as client:
        client.reset(**ROW)
        tried = client.step(CodeAction(tool_name="run_input", arguments={"code": RIGHT, "stdin": "21\n"}))
        assert tried.done is False and "42" in tried.observation.output
        right = client.step(CodeAction(tool_name="submit", arguments={"code": RIGHT}))
        assert right.done is True and right.reward == 1.0 and client.state().reward == 1.0
        client.reset(**lcb)
        wrong = client.step(CodeAction(tool_name="submit", arguments={"code": WRONG}))
        assert wrong.done is True and wrong.reward == _code_env_reward(lcb, WRONG) < 1.0
