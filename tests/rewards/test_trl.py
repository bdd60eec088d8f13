"""A real TRL ``GRPOTrainer``, run for a few steps on CPU, logs what rewardkit computes.

The tiny Llama of :mod:`tiny_lm` (the session's ``tiny_lm`` fixture) samples completions for two
problems; spies around the reward functions record what the trainer passed
them; rewardkit then scores the recorded completions again, and the tests
compare with what the trainer logged in ``trainer.state.log_history``.

TRL logs, per generation batch, the NaN-ignoring mean of each reward
function's values (``rewards/<name>/mean``), of their weighted sum
(``reward``) and of what the functions passed to ``log_metric``; a log entry
averages the batches of its logging step.  Spied calls are grouped by the
step they train, so the expected values follow the same arithmetic.
"""

from __future__ import annotations

import os

# Never reach a hub: set before any Hugging Face module reads these at import.
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")

import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset
from tiny_lm import TinyLM, dataset_rows, longest_answer_tokens
from trl import GRPOConfig, GRPOTrainer
from trl.trainer.utils import get_callable_name, is_async_callable

from rewardkit.rewards import Engine, Reward, RewardResult
from rewardkit.rewards.composite import TRAINER_KEYS
from rewardkit.rewards.presets import afterburner, cisq_grpo, quality_efficiency
from rewardkit.sandbox import Sandbox

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_torch_thread")]  # far faster on one thread

MAX_STEPS = 3
STEPS = list(range(1, MAX_STEPS + 1))
COLUMNS = ("tests", "baseline_code")  # the dataset columns the rewards read
TOLERANCE = {"rel": 1e-6, "abs": 1e-6}  # TRL averages in float32


# -- recording what the trainer passes ------------------------------------------------------------
@dataclass
class Call:
    """One call of a reward function by the trainer."""

    step: int  # the optimizer step that trains on these completions
    completions: list[Any]
    kwargs: dict[str, Any]
    values: list[float | None]

    @property
    def columns(self) -> dict[str, list[Any]]:
        return {key: self.kwargs[key] for key in COLUMNS}


class Spy:
    """Wraps reward functions (sync or async) so that every call is recorded, by function name."""

    def __init__(self) -> None:
        self.calls: dict[str, list[Call]] = {}

    def wrap(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function`` as the trainer should see it: the name and the sync or async kind that TRL's
        own helpers read from it (``get_callable_name``, ``is_async_callable``)."""
        name = get_callable_name(function)
        calls = self.calls.setdefault(name, [])

        def record(completions: list[Any], kwargs: dict[str, Any],
                   values: list[float | None]) -> list[float | None]:
            calls.append(Call(kwargs["trainer_state"].global_step + 1, completions, kwargs, values))
            return values

        async def recording_async(completions: list[Any], **kwargs: Any) -> list[float | None]:
            return record(completions, kwargs, await function(completions, **kwargs))

        def recording(completions: list[Any], **kwargs: Any) -> list[float | None]:
            return record(completions, kwargs, function(completions, **kwargs))

        wrapper = recording_async if is_async_callable(function) else recording
        wrapper.__name__ = name
        return wrapper


# -- running the trainer ------------------------------------------------------------------------------
def train(lm: TinyLM, functions: Sequence[Callable[..., Any]], output_dir: Path, *,
          weights: list[float] | None = None, conversational: bool = False) -> GRPOTrainer:
    """Run GRPO for :data:`MAX_STEPS` steps, each on one generation batch of 2 prompts x 4 completions."""
    config = GRPOConfig(
        output_dir=str(output_dir), max_steps=MAX_STEPS, per_device_train_batch_size=8,
        num_generations=4, max_completion_length=longest_answer_tokens(lm.tokenizer),
        reward_weights=weights, logging_steps=1, report_to="none", save_strategy="no",
        use_cpu=True, bf16=False, seed=0,
    )
    dataset = Dataset.from_list(dataset_rows(conversational=conversational))
    trainer = GRPOTrainer(model=str(lm.path), reward_funcs=list(functions), args=config,
                          train_dataset=dataset)
    trainer.train()
    return trainer


@dataclass
class Run:
    """A finished training run with ``reward.functions()``, and what the functions were called with."""

    trainer: GRPOTrainer
    engine: Engine
    reward: Reward
    spy: Spy


@pytest.fixture(scope="module")
def functions_run(one_torch_thread: None, tiny_lm: TinyLM, sandbox: Sandbox,
                  tmp_path_factory: pytest.TempPathFactory) -> Run:
    """``quality_efficiency`` handed to the trainer component by component, with its weights."""
    engine = Engine(sandbox=sandbox)
    reward = quality_efficiency(engine=engine)
    spy = Spy()
    trainer = train(tiny_lm, [spy.wrap(f) for f in reward.functions()], tmp_path_factory.mktemp("grpo"),
                    weights=reward.weights)
    return Run(trainer, engine, reward, spy)


# -- expected values ----------------------------------------------------------------------------------
def rescore(reward: Reward, calls: list[Call]) -> list[list[RewardResult]]:
    """rewardkit's own results for the completions and columns of every call."""
    return [reward.evaluate(call.completions, call.columns) for call in calls]


def nanmean(values: Iterable[float | None]) -> float:
    """Mean of the values that are neither None nor NaN; NaN if none is (``torch.nanmean``)."""
    kept = [v for v in values if v is not None and not math.isnan(v)]
    return statistics.fmean(kept) if kept else math.nan


def per_step(calls: list[Call], batch_values: Iterable[float | None]) -> dict[int, float]:
    """Per step, the NaN-ignoring mean over its calls of one value per call, as TRL averages a log entry.

    ``None`` stands for a batch that logged nothing under the key; a step where no batch did is left out.
    """
    by_step: dict[int, list[float]] = {}
    for call, value in zip(calls, batch_values, strict=True):
        if value is not None:
            by_step.setdefault(call.step, []).append(value)
    return {step: nanmean(values) for step, values in by_step.items()}


def batch_means(results: list[list[RewardResult]], component: str | None = None) -> list[float]:
    """Per batch, the NaN-ignoring mean of the results' values, or of one ``component``'s."""
    return [nanmean(r.value if component is None else r.components[component] for r in batch)
            for batch in results]


def sandbox_status(result: RewardResult) -> str:
    """How an afterburner/quality_efficiency result's code ran ("invalid": no code to run)."""
    return result.info["transition"]["status"] or "invalid"


def status_shares(calls: list[Call], results: list[list[RewardResult]]) -> dict[str, dict[int, float]]:
    """Per status, per step: the share of completions with it, as ``rewardkit/status/<status>``.

    A batch without the status logs nothing for it.
    """
    statuses = {sandbox_status(r) for batch in results for r in batch}
    return {status: per_step(calls, (sum(sandbox_status(r) == status for r in batch) / len(batch) or None
                                     for batch in results))
            for status in statuses}


# -- reading and checking the log ---------------------------------------------------------------------
def logged(trainer: GRPOTrainer, key: str) -> dict[int, float]:
    """``key`` in every log entry that has it, by step; a ``None`` (no valid value) reads as NaN."""
    return {entry["step"]: math.nan if entry[key] is None else entry[key]
            for entry in trainer.state.log_history if key in entry}


def assert_logged(trainer: GRPOTrainer, key: str, expected: dict[int, float]) -> None:
    """The trainer logged ``expected`` under ``key`` at every step, and at no other."""
    assert logged(trainer, key) == pytest.approx(expected, nan_ok=True, **TOLERANCE), key


def assert_varied(results: Iterable[list[RewardResult]]) -> None:
    """The sampled completions did not all earn the same reward, so the comparisons can fail."""
    values = {result.value for batch in results for result in batch}
    assert len(values) > 1, values


# -- the tests ----------------------------------------------------------------------------------------
def test_component_functions_are_logged_per_component(functions_run: Run) -> None:
    """``reward.functions()`` with ``reward.weights``: each component's mean and the weighted sum."""
    run = functions_run
    names = [component.name for component, _ in run.reward.components]
    assert list(run.spy.calls) == names
    calls = run.spy.calls[names[0]]
    assert [call.step for call in calls] == STEPS
    for name in names[1:]:  # every function scored the same completions
        assert [call.completions for call in run.spy.calls[name]] == [call.completions for call in calls]
    assert all(isinstance(completion, str) for call in calls for completion in call.completions)
    assert set(calls[0].kwargs) - TRAINER_KEYS == set(COLUMNS)  # rewardkit knows every trainer key

    # A new reward on the same engine: every run comes from its cache, timings included.
    executions = run.engine.executions
    results = rescore(quality_efficiency(engine=run.engine), calls)
    assert run.engine.executions == executions
    assert_varied(results)
    for name in names:
        assert_logged(run.trainer, f"rewards/{name}/mean", per_step(calls, batch_means(results, name)))
    assert_logged(run.trainer, "reward", per_step(calls, batch_means(results)))


def test_component_functions_log_sandbox_statuses(functions_run: Run) -> None:
    """With ``reward.functions()``, ``rewardkit/status/<status>`` tells how the completions ran."""
    calls = functions_run.spy.calls["transition"]
    results = rescore(functions_run.reward, calls)
    for status, shares in status_shares(calls, results).items():
        assert_logged(functions_run.trainer, f"rewardkit/status/{status}", shares)
    assert not logged(functions_run.trainer, "rewardkit/status/not_run")


def test_composite_with_conversational_prompts(tiny_lm: TinyLM, sandbox: Sandbox, tmp_path: Path) -> None:
    """The whole preset as one function, on chat prompts: completions arrive as assistant messages."""
    reward = cisq_grpo(engine=Engine(sandbox=sandbox))
    spy = Spy()
    trainer = train(tiny_lm, [spy.wrap(reward)], tmp_path, conversational=True)

    calls = spy.calls["cisq_grpo"]
    assert [call.step for call in calls] == STEPS
    for call in calls:
        assert all([message["role"] for message in completion] == ["assistant"]
                   for completion in call.completions)

    # cisq_grpo times nothing: a new engine, running every completion again, agrees with the trainer's.
    results = rescore(cisq_grpo(engine=Engine(sandbox=sandbox)), calls)
    assert_varied(results)
    assert [[r.value for r in batch] for batch in results] == [call.values for call in calls]
    assert_logged(trainer, "rewards/cisq_grpo/mean", per_step(calls, batch_means(results)))


def test_async_composite_and_its_metrics(tiny_lm: TinyLM, sandbox: Sandbox, tmp_path: Path) -> None:
    """``reward.as_async()`` runs on TRL's async path; what it passes to ``log_metric`` is logged."""
    engine = Engine(sandbox=sandbox)
    reward = afterburner(engine=engine)
    spy = Spy()
    trainer = train(tiny_lm, [spy.wrap(reward.as_async())], tmp_path)

    calls = spy.calls["afterburner"]  # recorded only once TRL has awaited the coroutine
    assert [call.step for call in calls] == STEPS

    results = rescore(afterburner(engine=engine), calls)
    assert_varied(results)
    assert_logged(trainer, "rewards/afterburner/mean", per_step(calls, batch_means(results)))
    for component, _ in reward.components:  # logged for the batches where the component has a value
        means = batch_means(results, component.name)
        assert_logged(trainer, f"rewardkit/{component.name}",
                      per_step(calls, [None if math.isnan(m) else m for m in means]))
    shares = status_shares(calls, results)
    assert "passed" in shares and len(shares) > 1
    for status, expected in shares.items():
        assert_logged(trainer, f"rewardkit/status/{status}", expected)
    assert {key for entry in trainer.state.log_history for key in entry if key.startswith("rewardkit/")} == {
        *(f"rewardkit/{component.name}" for component, _ in reward.components),
        *(f"rewardkit/status/{status}" for status in shares),
    }
