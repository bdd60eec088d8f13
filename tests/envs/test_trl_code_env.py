"""CodeEnv run by TRL for real: ``GRPOTrainer(environment_factory=partial(CodeEnv, ...))``, tiny model.

The tiny tokenizer's own chat template (:mod:`rewardkit.trainers.tiny`) renders
the tools and parses the tool calls; the model is fitted for a few seconds to
answer with a call testing right code, one submitting right code, one
submitting wrong code, or no call, each whole call one token.
"""

from __future__ import annotations

import os

# Never reach a hub: set before any Hugging Face module reads these at import.
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1",
                  TRL_EXPERIMENTAL_SILENCE="1")

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from rewardkit.envs import CodeEnv
from rewardkit.sandbox import Sandbox

RIGHT, WRONG = "print(int(input())*2)", "print(int(input())+1)"


def call(name: str, code: str) -> str:
    return f'<tool_call>{{"name": "{name}", "arguments": {json.dumps({"code": code})}}}</tool_call>'


@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_grpo_trainer_runs_code_env(sandbox: Sandbox, tmp_path: Path) -> None:
    from datasets import Dataset
    from tiny_lm import PROBLEMS, tool_caller, tool_grpo_config
    from trl import GRPOTrainer

    factory = partial(CodeEnv, preset="binary", tools=["run_tests", "submit"], max_turns=3, sandbox=sandbox)
    rows = [{"prompt": [{"role": "user", "content": PROBLEMS[0]["prompt"]}],
             "tests": json.dumps(PROBLEMS[0]["tests"])}] * 4
    probe = factory()
    assert probe.reset(**rows[0]) is None  # the row's prompt is what the model sees
    calls = [call("run_tests", RIGHT), call("submit", RIGHT), call("submit", WRONG)]
    rendered, tokenizer, model = tool_caller(rows[0]["prompt"], [probe.run_tests, probe.submit], calls)
    assert '"name": "run_tests"' in rendered and '"name": "submit"' in rendered

    steps: list[list[tuple[list[str], int, float]]] = []  # per step and rollout: results read, turns, reward

    def record(completions: list[Any], environments: list[Any], **_: Any) -> list[float]:
        """Looks at each rollout's environment before the pool reuses it for the next step."""
        assert all(type(env) is type(probe) for env in environments)
        steps.append([([m["content"] for m in completion if m["role"] == "tool"], env.turns, env.get_reward())
                      for completion, env in zip(completions, environments, strict=True)])
        return [0.0] * len(completions)

    config = tool_grpo_config(tmp_path, max_steps=2, max_completion_length=256)
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=config, reward_funcs=[record],
                          train_dataset=Dataset.from_list(rows), environment_factory=factory)
    trainer.train()

    assert len(steps) == 2
    for step, rollouts in enumerate(steps):
        for read, turns, _ in rollouts:  # the env ran the calls it counted, then said the episode was over
            assert turns <= 3 and all(text.startswith("The episode is over") for text in read[turns:])
            assert all(text.endswith("visible tests passed.") or text.startswith("Submitted.") or
                       "\nWrong answer" in text for text in read[:turns])
        rewards = [reward for _, _, reward in rollouts]
        assert set(rewards) <= {0.0, 1.0}
        assert trainer.state.log_history[step]["rewards/CodeEnv/mean"] == pytest.approx(sum(rewards) / 4)
    assert sum(turns for rollouts in steps for _, turns, _ in rollouts) > 0  # the tools were called
    assert trainer.state.log_history[0]["tools/call_frequency"] > 0
