"""``RemoteReward`` in a real TRL ``GRPOTrainer``: what the trainer logs is what rewardkit computes.

The tiny model of :mod:`tiny_lm` samples completions for two steps; the
reward is the service's ``cisq_grpo``.  The completions the trainer passed are
recorded and scored again in this process: the values the service returned,
and the means TRL logged under ``rewards/cisq_grpo/mean`` and
``rewardkit/<component>``, are the in-process ones.
"""

from __future__ import annotations

import os

os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")

import math
import statistics
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset
from serve_helpers import Service
from tiny_lm import TinyLM, dataset_rows, longest_answer_tokens
from trl import GRPOConfig, GRPOTrainer

from rewardkit.client import RemoteReward
from rewardkit.rewards import Engine, cisq_grpo

pytestmark = pytest.mark.slow

STEPS = 2


def nanmean(values: list[float | None]) -> float:
    kept = [v for v in values if v is not None and not math.isnan(v)]
    return statistics.fmean(kept) if kept else math.nan


@pytest.mark.usefixtures("one_torch_thread")
def test_remote_reward_in_grpo_trainer(service: Service, engine: Engine, tiny_lm: TinyLM,
                                       tmp_path: Path) -> None:
    lm = tiny_lm
    remote = RemoteReward(service.url, "cisq_grpo", token=service.token)
    calls: list[tuple[list[Any], dict[str, Any], list[float | None]]] = []

    def recording(completions: list[Any], **kwargs: Any) -> list[float | None]:
        values = remote(completions, **kwargs)
        calls.append((completions, kwargs, values))
        return values

    recording.__name__ = remote.__name__
    config = GRPOConfig(output_dir=str(tmp_path / "grpo"), max_steps=STEPS, per_device_train_batch_size=8,
                        num_generations=4, max_completion_length=longest_answer_tokens(lm.tokenizer),
                        logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, bf16=False,
                        seed=0)
    trainer = GRPOTrainer(model=str(lm.path), reward_funcs=[recording], args=config,
                          train_dataset=Dataset.from_list(dataset_rows()))
    trainer.train()
    remote.close()

    assert len(calls) == STEPS
    local = cisq_grpo(engine=engine)
    logs = {entry["step"]: entry for entry in trainer.state.log_history if "rewards/cisq_grpo/mean" in entry}
    assert sorted(logs) == list(range(1, STEPS + 1))
    values_seen = set()
    for step, (completions, kwargs, values) in enumerate(calls, 1):
        results = local.evaluate(completions, {key: kwargs[key] for key in ("tests", "baseline_code")})
        assert values == [r.value for r in results]
        values_seen |= set(values)
        assert logs[step]["rewards/cisq_grpo/mean"] == pytest.approx(nanmean(values), rel=1e-6)
        for name in ("code_block_format", "pass_rate", "quality"):
            component = [r.components[name] for r in results]
            assert logs[step][f"rewardkit/{name}"] == pytest.approx(nanmean(component), rel=1e-6)
    assert len(values_seen) > 1  # the sampled completions differ, so the comparison can fail
