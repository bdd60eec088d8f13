"""Length and repetition shaping (:mod:`rewardkit.rewards.shaping`) against hand-computed values,
TRL's documented examples, bad input, presets, and a real GRPOTrainer.

The references followed: TRL ``trl/rewards/other_rewards.py`` (``get_soft_overlong_punishment``,
``get_repetition_penalty_reward``), ``trl/rewards/accuracy_rewards.py``
(``get_cosine_scaled_reward``) and open-r1 ``src/open_r1/rewards.py`` (word n-grams).
"""

from __future__ import annotations

import os

# Never reach a hub: set before any Hugging Face module reads these at import (the trainer test).
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")

import doctest
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from killer import killing

from rewardkit import rewards
from rewardkit.rewards import ConfigError, Engine, composite, shaping
from rewardkit.rewards.extract import MAX_COMPLETION_CHARS
from rewardkit.sandbox import Limits, Sandbox

if TYPE_CHECKING:
    from tiny_lm import TinyLM

TESTS = {"mode": "stdio", "cases": [{"input": "2 3\n", "output": "5\n"}]}
RIGHT = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
WRONG = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"


def test_docstring_examples_hold() -> None:
    for module in (shaping, composite):
        failures, _ = doctest.testmod(module)
        assert failures == 0


# -- the formulas at their boundaries --------------------------------------------------------------
@pytest.mark.parametrize(
    ("length", "max_len", "cache", "expected"),
    [
        (0, 100, 20, 0.0),
        (80, 100, 20, 0.0),      # the last length before the cache window
        (81, 100, 20, -0.05),    # the window's first length: (80 - 81) / 20
        (90, 100, 20, -0.5),     # TRL's documented example
        (100, 100, 20, -1.0),    # exactly at the maximum: the end of the linear fall
        (101, 100, 20, -1.0),    # past it
        (100, 100, 0, 0.0),      # no cache: no punishment up to the maximum
        (101, 100, 0, -1.0),
        (0, 100, 100, 0.0),      # a window as long as the maximum
        (25, 100, 100, -0.25),
    ],
)
def test_soft_overlong(length: int, max_len: int, cache: int, expected: float) -> None:
    assert shaping.soft_overlong(length, max_len, cache) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("tokens", "n", "penalty", "expected"),
    [
        ([1, 2, 3, 4], 2, -1.0, 0.0),                  # TRL's documented example
        ([5, 5, 5, 5, 5], 2, -1.0, -0.75),             # 4 bigrams, 1 distinct
        ([1, 2, 1, 2, 1, 2], 2, -1.0, -0.6),           # 5 bigrams, 2 distinct
        ([1, 2, 1, 2, 1, 2], 2, -0.5, -0.3),
        ([1, 2, 3, 1, 2, 3], 3, -1.0, -0.25),          # 4 trigrams, 3 distinct
        ([7, 7, 7], 3, -1.0, 0.0),                     # one n-gram: nothing repeats
        ([7, 7], 3, -1.0, 0.0),                        # fewer tokens than n
        ([], 3, -1.0, 0.0),
        ([9, 9], 1, -1.0, -0.5),                       # unigrams
    ],
)
def test_repetition(tokens: list[int], n: int, penalty: float, expected: float) -> None:
    assert shaping.repetition(tokens, n, penalty) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("length", "correct", "expected"),
    [
        (0, True, 1.0), (50, True, 0.75), (100, True, 0.5), (1000, True, 0.5),     # clamped past max_len
        (0, False, -1.0), (50, False, -0.75), (100, False, -0.5), (1000, False, -0.5),
        (25, True, 0.5 + 0.25 * (1 + math.sqrt(0.5))),                            # cos(π/4)
        (25, False, -0.5 - 0.25 * (1 + math.sqrt(0.5))),
    ],
)
def test_cosine_with_trl_defaults(length: int, correct: bool, expected: float) -> None:
    assert shaping.cosine(length, correct, 100) == pytest.approx(expected)


def test_cosine_with_open_r1_training_defaults() -> None:
    """open-r1's GRPO config: wrong from 0.0 (short) to -0.5 (long), correct 1.0 to 0.5, 1000 long."""
    values = dict(min_value_wrong=0.0, max_value_wrong=-0.5, min_value_correct=0.5,
                  max_value_correct=1.0)
    assert shaping.cosine(0, False, 1000, **values) == 0.0
    assert shaping.cosine(500, False, 1000, **values) == pytest.approx(-0.25)
    assert shaping.cosine(1000, False, 1000, **values) == pytest.approx(-0.5)
    assert shaping.cosine(500, True, 1000, **values) == pytest.approx(0.75)


# -- as rewards, the way TRL calls them ------------------------------------------------------------
def test_trl_documented_examples_with_completion_ids() -> None:
    """TRL's docstring examples, through our rewards, lengths and n-grams from ``completion_ids``."""
    overlong = rewards.soft_overlong_punishment(max_completion_len=100, soft_punish_cache=20)
    assert overlong(["x"], completion_ids=[[1] * 90]) == [-0.5]
    repeated = rewards.repetition_penalty(ngram_size=2, max_penalty=-1.0)
    assert repeated(["a", "b"], completion_ids=[[1, 2, 3, 4], [5, 5, 5, 5, 5]]) == [0.0, -0.75]


def test_cosine_reads_correctness_from_the_shared_run(sandbox: Sandbox) -> None:
    """TRL's example (max_len 100, 50 tokens: 0.75 right, -0.75 wrong), correctness from our tests."""
    engine = Engine(sandbox=sandbox)
    reward = rewards.cisq_grpo(engine=engine, shaping={"cosine_scaled": {"max_len": 100}})
    results = reward.evaluate([RIGHT, WRONG, "no code at all"],
                              {"tests": [TESTS] * 3, "completion_ids": [[1] * 50] * 3})
    assert [r.components["cosine_scaled"] for r in results] == pytest.approx([0.75, -0.75, -0.75])
    assert [r.components["pass_rate"] for r in results] == [1.0, 0.0, 0.0]
    assert engine.executions == 3  # one run per completion (bare text is run as code), shared


def test_lengths_without_completion_ids() -> None:
    """No token ids: characters (over ``chars_per_token``), or ``tokenize``; words for n-grams."""
    text = "ab " * 30  # 90 characters, 30 words
    chars = rewards.soft_overlong_punishment(100, 20)
    assert chars([text]) == [-0.5]
    assert rewards.soft_overlong_punishment(100, 20, chars_per_token=4)([text]) == [0.0]
    by_words = rewards.soft_overlong_punishment(30, 20, tokenize=str.split)
    assert by_words([text]) == [-1.0]
    assert by_words([text], completion_ids=[[1] * 20]) == [-0.5]  # the trainer's tokens come first

    words = rewards.repetition_penalty(ngram_size=2)
    assert words(["A b a B"]) == pytest.approx([-1 / 3])  # open-r1: lower-cased words, 3 bigrams
    assert words(["x y z x y z"]) == pytest.approx([-0.4])  # 5 bigrams, 3 distinct
    assert rewards.repetition_penalty()(["x y z x y z"]) == pytest.approx([-0.25])
    assert rewards.repetition_penalty(tokenize=list)(["abcabc"]) == pytest.approx([-0.25])
    [result] = words.score([{"completion": "a a a"}])
    assert result.info["repetition_penalty"] == {"tokens": 3, "unit": "words"}


BAD = [None, 42, b"\xff", [], [{"role": "assistant"}], "", "  \n ", "x" * (MAX_COMPLETION_CHARS + 1)]


def test_bad_completions_get_the_lowest_value_without_a_sandbox() -> None:
    """Not text, empty, blank or huge: the lowest value, no exception, and no tests column needed."""
    reward = rewards.Reward([(shaping.soft_overlong_punishment(100, 20), 1.0),
                             (shaping.repetition_penalty(max_penalty=-0.5), 1.0)])
    results = reward.evaluate(BAD, {})
    assert [r.components for r in results] == [
        {"soft_overlong_punishment": -1.0, "repetition_penalty": -0.5}] * len(BAD)
    assert reward.engine.executions == 0
    ids = reward(BAD, completion_ids=[[1]] * len(BAD))  # even with short token ids
    assert ids == [-1.5] * len(BAD)


def test_bad_completions_get_the_lowest_cosine(engine: Engine) -> None:
    reward = rewards.cosine_scaled(100, min_value_wrong=-0.8, max_value_wrong=-0.9, engine=engine)
    assert reward(BAD, tests=[TESTS] * len(BAD)) == [-0.9] * len(BAD)


def test_a_sandbox_fault_leaves_the_cosine_out() -> None:
    with killing("runtime.worker"), Sandbox(workers=1, limits=Limits(time_s=2)) as doomed:
        reward = rewards.cisq_grpo(engine=Engine(sandbox=doomed),
                                   shaping={"cosine_scaled": {"max_len": 100},
                                            "soft_overlong_punishment": {"max_completion_len": 10,
                                                                         "soft_punish_cache": 5}})
        per_function = {f.__name__: f([RIGHT], tests=[TESTS]) for f in reward.functions()}
    assert per_function["cosine_scaled"] == [None]
    assert per_function["soft_overlong_punishment"] == [None]  # the sample is left out whole


# -- composing with presets ------------------------------------------------------------------------
def test_presets_take_shaping_with_explicit_weights() -> None:
    reward = rewards.cisq_grpo(shaping={
        "soft_overlong_punishment": {"max_completion_len": 512, "soft_punish_cache": 128},
        "repetition_penalty": {"weight": 0.5, "ngram_size": 4},
    })
    assert [(c.name, w) for c, w in reward.components] == [
        ("code_block_format", 0.2), ("pass_rate", 0.3), ("quality", 0.5),
        ("soft_overlong_punishment", rewards.SHAPING_WEIGHTS["soft_overlong_punishment"]),
        ("repetition_penalty", 0.5)]
    assert [f.__name__ for f in reward.functions()] == [c.name for c, _ in reward.components]
    assert reward.weights == [0.2, 0.3, 0.5, 1.0, 0.5]

    added = rewards.afterburner().with_components((shaping.cosine_scaled(256), 0.25))
    assert added.weights == [0.2, 0.5, 0.3, 0.25] and added.__name__ == "afterburner"


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"overlong": {}}, "unknown shaping component 'overlong'"),
        ({"soft_overlong_punishment": {"max_completion_len": 512}}, "soft_punish_cache"),
        ({"soft_overlong_punishment": {"max_completion_len": 10, "soft_punish_cache": 20}},
         "soft_punish_cache must be in [0, max_completion_len=10]"),
        ({"repetition_penalty": {"max_penalty": 1.0}}, "max_penalty must not be positive"),
        ({"repetition_penalty": {"ngram": 3}}, "unexpected keyword argument 'ngram'"),
        ({"repetition_penalty": {"weight": "heavy"}}, "could not convert"),
        ({"cosine_scaled": {"max_len": 0}}, "max_len must be positive"),
    ],
)
def test_configuration_errors_say_what_to_fix(config: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="shaping") as error:
        rewards.quality_efficiency(shaping=config)
    assert message in str(error.value)


# -- in a real GRPOTrainer -------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.usefixtures("one_torch_thread")
def test_grpo_trainer_logs_the_shaping_components(sandbox: Sandbox, tiny_lm: TinyLM, tmp_path: Path) -> None:
    """A preset plus the three shaping components, handed to GRPOTrainer as ``reward.functions()``:
    each shaping component's logged mean is what the formulas give on the trainer's token ids."""
    from datasets import Dataset
    from test_trl import Spy, assert_logged, nanmean, per_step
    from tiny_lm import dataset_rows, longest_answer_tokens
    from trl import GRPOConfig, GRPOTrainer

    lm = tiny_lm
    longest = longest_answer_tokens(lm.tokenizer)
    overlong = {"max_completion_len": longest - 4, "soft_punish_cache": longest // 2}
    reward = rewards.afterburner(engine=Engine(sandbox=sandbox), shaping={
        "soft_overlong_punishment": overlong, "repetition_penalty": {"ngram_size": 2},
        "cosine_scaled": {"max_len": longest, "weight": 0.5}})
    spy = Spy()
    config = GRPOConfig(output_dir=str(tmp_path / "grpo"), max_steps=2, per_device_train_batch_size=8,
                        num_generations=4, max_completion_length=longest, reward_weights=reward.weights,
                        logging_steps=1, report_to="none", save_strategy="no", use_cpu=True, bf16=False,
                        seed=0)
    trainer = GRPOTrainer(model=str(lm.path), reward_funcs=[spy.wrap(f) for f in reward.functions()],
                          args=config, train_dataset=Dataset.from_list(dataset_rows()))
    trainer.train()

    calls = spy.calls["cosine_scaled"]
    expected: dict[str, list[list[float]]] = {"soft_overlong_punishment": [], "repetition_penalty": [],
                                              "cosine_scaled": []}
    for call in calls:
        ids = call.kwargs["completion_ids"]
        results = reward.evaluate(call.completions, {key: call.kwargs[key]
                                                    for key in ("tests", "baseline_code")})
        passed = [r.info["transition"]["status"] == "passed" for r in results]
        expected["soft_overlong_punishment"].append([shaping.soft_overlong(len(i), **overlong) for i in ids])
        expected["repetition_penalty"].append([shaping.repetition(i, 2, -1.0) for i in ids])
        expected["cosine_scaled"].append([shaping.cosine(len(i), p, longest) for i, p in zip(ids, passed,
                                                                                            strict=True)])
    assert len(set(v for batch in expected["soft_overlong_punishment"] for v in batch)) > 1
    assert len(set(v for batch in expected["cosine_scaled"] for v in batch)) > 1
    for name, batches in expected.items():
        for call, batch in zip(spy.calls[name], batches, strict=True):
            assert call.values == pytest.approx(batch), name
        assert_logged(trainer, f"rewards/{name}/mean", per_step(calls, [nanmean(b) for b in batches]))
