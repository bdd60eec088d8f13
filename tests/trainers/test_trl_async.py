"""rewardkit's reward functions in TRL's async GRPO path, as far as it runs without vLLM.

TRL's ``AsyncGRPOTrainer`` hands ``reward_funcs`` to ``AsyncRolloutWorker``, which pickles
them with the rest of its loop's arguments and spawns a child process that builds
``_AsyncRolloutLoop`` from them; the child scores each group with ``_score_group`` (the
reward functions' values summed unweighted: ``AsyncGRPOConfig`` has no ``reward_weights``)
and logs one ``rewards/<name>`` column per function.  ``AsyncRolloutWorker`` refuses to be
built without vLLM, which cannot be installed here, so generation is not run: this test
does what the worker does with the functions (pickle, spawn, build TRL's loop) and scores a
group with TRL's own ``_score_group`` in the spawned child.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import pickle  # nosec B403 - our own objects, as TRL's worker pickles them
from typing import Any

import pytest
from datasets import Dataset

from rewardkit.rewards import cisq_grpo
from rewardkit.trainers import tiny

TESTS = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{2 * n}\n"} for n in (1, 4)]}
COMPLETIONS = ["```python\nprint(int(input()) * 2)\n```",      # right
               "```python\nprint(int(input()) + 2)\n```",      # wrong
               "no code at all"]


def _score_in_child(payload: bytes, group: dict[str, Any], out: Any) -> None:
    """The spawned child: TRL's loop built from the pickled arguments, one group scored."""
    from accelerate.state import PartialState
    from trl.experimental.async_grpo import async_rollout_worker as worker

    PartialState()
    kwargs = pickle.loads(payload)  # nosec B301 - written by the parent test
    context = multiprocessing.get_context("spawn")
    loop = worker._AsyncRolloutLoop(
        **kwargs, rollout_buffer=context.Queue(), model_version_value=context.Value("i", 0),
        heartbeat_value=context.Value("d", 0.0), failed_event=context.Event(),
        exception_info_queue=context.Queue(), metrics_queue=context.Queue())
    n = len(group["completions"])
    sequences = [[worker.TrainingSequence([1, 2], [0, 1], [0.0, -1.0], f"r{i}")] for i in range(n)]
    rollout = worker.RolloutGroup(
        prompts=[[{"role": "user", "content": "double n"}]] * n, reward_kwargs=group["columns"],
        completions=[[{"role": "assistant", "content": c}] for c in group["completions"]],
        completions_ids=[[2]] * n, completions_sequences=sequences, tool_call_counts=[0] * n,
        tool_failure_counts=[0] * n, model_version=0, group_id=0, env_rewards=[None] * n,
        rollout_rewards=[None] * n)
    samples = asyncio.run(loop._score_group(rollout))
    out.put([s.metrics for s in samples])


def test_weighted_functions_score_in_trls_spawned_rollout_loop() -> None:
    reward = cisq_grpo()
    tokenizer = tiny.build_tokenizer(["print(int(input()) * 2)", "double n"], vocab_size=300)
    dataset = Dataset.from_list([{"prompt": "double n", "tests": TESTS}])
    loop_kwargs = {"model_name": "tiny", "dataset": dataset,
                   "reward_funcs": reward.functions(weighted=True), "processing_class": tokenizer,
                   "eos_token_ids": [0], "num_generations": len(COMPLETIONS), "queue_maxsize": 0,
                   "dataset_start_index": 0}
    payload = pickle.dumps(loop_kwargs)  # what AsyncRolloutWorker.start checks before it spawns
    columns = {"tests": [TESTS] * len(COMPLETIONS)}
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    child = context.Process(target=_score_in_child,
                            args=(payload, {"completions": COMPLETIONS, "columns": columns}, out))
    child.start()
    try:
        metrics = out.get(timeout=240)
    finally:
        child.join(timeout=60)
    expected = reward.score([{"completion": c, **{k: v[i] for k, v in columns.items()}}
                             for i, c in enumerate(COMPLETIONS)])
    assert child.exitcode == 0
    for logged, result in zip(metrics, expected, strict=True):
        assert logged["reward"] == pytest.approx(result.value)  # the unweighted sum is the total
        for (name, value), weight in zip(result.components.items(), reward.weights, strict=True):
            assert logged[f"rewards/{name}"] == pytest.approx(weight * value)
    assert metrics[0]["reward"] > metrics[1]["reward"] > metrics[2]["reward"]
