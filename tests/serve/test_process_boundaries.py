"""Rewards cross process boundaries: every reward object pickles with plain ``pickle``, and the copy,
used in a freshly spawned process, scores what the original scores.

TRL's async GRPO trainer pickles ``reward_funcs`` before it spawns its rollout worker; Ray and
``multiprocessing`` ship callables the same way.  The copy rebuilds what cannot cross (the
engine's sandbox workers and caches, the HTTP client) where it lands.
"""

from __future__ import annotations

import asyncio
import inspect
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from serve_helpers import Service
from trl.trainer.utils import get_callable_name, is_async_callable

from rewardkit import rewards
from rewardkit.client import RemoteReward
from rewardkit.rewards import Reward, components, shaping

TESTS = {"mode": "stdio", "cases": [{"input": "2 3\n", "output": "5\n"}, {"input": "0 0\n", "output": "0\n"}]}
COMPLETIONS = ["```python\na, b = map(int, input().split())\nprint(a + b)\n```",
               "```python\na, b = map(int, input().split())\nprint(a * b)\n```",
               "no code at all"]
COLUMNS = {"tests": [TESTS] * 3}


def light() -> Reward:
    """A reward built from components by hand."""
    return Reward([(components.code_block_format(penalty=-0.5), 0.2), (components.pass_rate(), 0.5),
                   (components.binary(), 0.3)], name="light")


def made_by_factories() -> list[Any]:
    """A reward object of every kind a user hands a trainer."""
    composed = light()
    return [rewards.cisq_grpo(), rewards.afterburner("time"), rewards.quality_efficiency("memory"),
            rewards.pass_rate(), rewards.binary(), rewards.rlef(), rewards.quality(gate=None),
            rewards.efficiency("integral", noise_floor=0.0),
            rewards.cisq_grpo().with_components((shaping.soft_overlong_punishment(512, 128), 1.0)),
            composed, *composed.functions(), composed.as_async()]


def _scored(payload: bytes) -> list[Any]:
    """In the spawned process: unpickle ``(function, completions, columns)`` and call it."""
    function, completions, columns = pickle.loads(payload)
    if is_async_callable(function):
        return list(asyncio.run(function(completions, **columns)))
    return list(function(completions, **columns))


def in_spawned_process(functions: list[Any], completions: list[Any], columns: dict[str, Any]) -> list[Any]:
    """Each function's values, each called in turn in one freshly spawned process."""
    payloads = [pickle.dumps((function, completions, columns)) for function in functions]
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(_scored, payloads, timeout=300))


def test_every_reward_object_pickles_with_plain_pickle() -> None:
    """...and TRL names each copy, and tells whether to await it, as it does the original."""
    for reward in made_by_factories():
        copy = pickle.loads(pickle.dumps(reward))
        assert get_callable_name(copy) == get_callable_name(reward) == reward.__name__
        assert is_async_callable(copy) == is_async_callable(reward)
        if isinstance(reward, Reward):
            assert [c.name for c, _ in copy.components] == [c.name for c, _ in reward.components]
            assert copy.weights == reward.weights and copy.format == reward.format


def test_a_reward_used_before_pickling_leaves_its_workers_behind(sandbox: Any) -> None:
    reward = Reward([(components.pass_rate(), 1.0)], rewards.Engine(sandbox=sandbox))
    assert reward(COMPLETIONS[:1], tests=[TESTS]) == [1.0]
    copy = pickle.loads(pickle.dumps(reward))
    assert copy.engine._sandbox is not sandbox and copy.engine._runs == {}
    assert copy(COMPLETIONS[:1], tests=[TESTS]) == [1.0]
    copy.engine.close()
    assert reward(COMPLETIONS[1:2], tests=[TESTS]) == [0.5]  # the original's sandbox still serves


def test_copies_in_a_spawned_process_score_what_the_originals_score() -> None:
    composed = light()
    everything = [composed, *composed.functions(), composed.as_async()]
    there = in_spawned_process(everything, COMPLETIONS, COLUMNS)
    for function, values in zip(everything, there, strict=True):
        here = function(COMPLETIONS, **COLUMNS)
        if inspect.isawaitable(here):
            here = asyncio.run(here)
        assert values == list(here), function.__name__


def test_a_remote_reward_copy_scores_through_the_service(service: Service) -> None:
    with RemoteReward(service.url, "cisq_grpo", token=service.token) as remote:
        here = remote(COMPLETIONS, **COLUMNS)
        functions = remote.functions()
        whole, component = in_spawned_process([remote, functions[1]], COMPLETIONS, COLUMNS)
        assert whole == here
        assert component == [r.components["pass_rate"] for r in remote.results(COMPLETIONS, **COLUMNS)]


def test_an_environment_factory_pickles_and_its_copy_judges() -> None:
    from rewardkit.sandbox import Sandbox
    from rewardkit.trainers.rlef import environment_factory

    with Sandbox(workers=1) as sandbox:
        factory = environment_factory(sandbox, turns=2)
        copy = pickle.loads(pickle.dumps(factory))
    env = copy()  # the original sandbox is closed: the copy has its own
    env.reset(tests=TESTS)
    assert "passed" in env.run_public_tests(COMPLETIONS[0]).lower()
    assert env.get_reward() == 1.0
    env.sandbox.close()
