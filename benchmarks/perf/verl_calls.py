"""Calling a custom reward function the way verl's current source does (read 2026-01), for
``bench_verl.py`` and the verl tests.

verl wraps the function with the config's ``reward_kwargs`` (``verl/trainer/ppo/reward.py``,
``get_custom_reward_fn``: a ``functools.partial`` whose keywords win over the call's), then its
reward loop calls it once per sample, every sample of a chunk at once
(``verl/experimental/reward_loop/reward_loop.py``, ``RewardLoopWorker.compute_score_batch``;
``reward_manager/naive.py``, ``NaiveRewardManager.run_single``): awaited when it is a
coroutine function, else in the event loop's default thread pool.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def verl_wrap(raw: Callable[..., Any], **reward_kwargs: Any) -> Callable[..., Any]:
    """verl's ``get_custom_reward_fn``: the config's reward_kwargs merged in, winning."""
    if inspect.iscoroutinefunction(raw):
        async def call_async(raw_fn: Any, extra: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
            return await raw_fn(*args, **{**kwargs, **extra})
        return functools.partial(call_async, raw, reward_kwargs)

    def call(raw_fn: Any, extra: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        return raw_fn(*args, **{**kwargs, **extra})
    return functools.partial(call, raw, reward_kwargs)


def verl_manager(function: Callable[..., Any], samples: list[tuple[str, Any, dict[str, Any]]],
                 threads: int = 32) -> list[Any]:
    """verl's reward loop over a chunk: one task per sample, gathered; a coroutine function is
    awaited, a plain one runs in the loop's default executor (verl's has min(32, CPUs + 4) threads)."""
    is_async = inspect.iscoroutinefunction(function)

    async def run_single(solution: str, truth: Any, info: dict[str, Any]) -> Any:
        info = {**info, "num_turns": None, "rollout_reward_scores": {}}  # run_single adds these
        call = functools.partial(function, data_source="mini", solution_str=solution, ground_truth=truth,
                                 extra_info=info)
        if is_async:
            return await call()
        return await asyncio.get_running_loop().run_in_executor(None, call)

    async def chunk() -> list[Any]:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(threads))
        tasks = [asyncio.create_task(run_single(*sample)) for sample in samples]
        return list(await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 300))

    return asyncio.run(chunk())
