"""GRPO with rewardkit rewards, on TRL's ``GRPOTrainer``.

Each component of the preset is its own reward function with the preset's
weights as ``reward_weights``, so TRL logs ``rewards/<component>/mean`` for
every one, and the components log sandbox statuses (``rewardkit/status/...``)
through TRL's ``log_metric``.  They share one :class:`~rewardkit.rewards.Engine`:
a completion runs once for all of them.

One run trains on a mix of objectives, as the Afterburner seed's DS_GRPO
mixes its time, memory and integral instructions: each row's efficiency is
measured on its own ``objective`` column (the ``efficiency_row`` component;
one timed run gives all three measures), and besides TRL's
``rewards/efficiency_row/mean`` the mean of each objective is logged as
``rewardkit/efficiency_<objective>``.  Instruction counts need another meter
and train on their own.

Each preset trains with the GRPO settings of its own paper, kept in one
table, :data:`SETTINGS` (a keyword overrides any of them, as a ``GRPOConfig``
field).  ``afterburner`` and ``quality_efficiency`` follow the Afterburner
seed's GRPO (appendix E.5, trained on Verl):

| field | value | seed |
| --- | --- | --- |
| ``learning_rate`` | 1e-6 | actor learning rate |
| ``num_generations`` | 16 | responses per prompt |
| ``temperature`` | 1.0 | roll-out temperature |
| ``beta`` | 0.0 | KL loss disabled |
| ``entropy_coef`` | 0.0 | entropy coefficient 0 |
| ``epsilon`` | 0.2 | not in the seed: Verl's default clip ratio (symmetric), which the seed trained with |
| ``per_device_train_batch_size`` | 4 | micro-batch of 4 per GPU |
| ``gradient_accumulation_steps`` | 128 | mini-batch of 32 prompts x 16 responses per update, on one |
| | | device (divide by the number of devices) |
| ``num_train_epochs`` | 20 | 20 epochs on DS_GRPO |
| ``lr_scheduler_type`` | constant | not in the seed: Verl's default, which the seed trained with |

``cisq_grpo`` follows the CISQ code-quality GRPO paper (section 3.2,
equation 1):

| field | value | paper |
| --- | --- | --- |
| ``epsilon`` | 0.2 | clip epsilon_low = 0.2 |
| ``epsilon_high`` | 0.28 | clip epsilon_high = 0.28 (after DAPO) |
| ``beta`` | 0.001 | KL penalty strength beta = 0.001 (TRL's k3 estimator, as the paper's D_KL) |
| ``loss_type`` | grpo | the loss averages each response's tokens (1/abs(o_i)), then the group (1/G) |

The paper gives no learning rate, group size, temperature, batch or
schedule; for those ``cisq_grpo`` uses the Afterburner values above.

Precision: BF16 where CUDA supports it, FP32 elsewhere
(:mod:`rewardkit.trainers.precision`; TRL alone would ask for BF16 on any
machine).  A smoke run passes ``max_steps``, ``num_generations``,
``per_device_train_batch_size``, ``gradient_accumulation_steps`` and
``max_completion_length`` like any other field.  Checkpoints follow
``save_strategy`` / ``save_steps``.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..optional import requires
from ..rewards import PRESETS, ConfigError, Engine
from ..rewards.components import OBJECTIVE_CHOICES, ROW
from ..rewards.composite import RewardFunction
from ..scoring import make_reward, takes_objective
from .precision import precision
from .sft import Rows, as_dataset

with requires("train"):
    from transformers import PreTrainedModel, PreTrainedTokenizerBase
    from trl import GRPOConfig, GRPOTrainer

AFTERBURNER: dict[str, Any] = {  # the Afterburner seed, appendix E.5
    "learning_rate": 1e-6, "num_generations": 16, "temperature": 1.0, "beta": 0.0, "entropy_coef": 0.0,
    "epsilon": 0.2, "per_device_train_batch_size": 4, "gradient_accumulation_steps": 128,
    "num_train_epochs": 20, "lr_scheduler_type": "constant",
}
# The GRPO settings of each preset's paper (module docstring); a preset not listed trains with AFTERBURNER.
SETTINGS: dict[str, dict[str, Any]] = {
    "afterburner": AFTERBURNER,
    "quality_efficiency": AFTERBURNER,
    "cisq_grpo": {**AFTERBURNER, "epsilon": 0.2, "epsilon_high": 0.28, "beta": 0.001, "loss_type": "grpo"},
}
DEFAULTS = AFTERBURNER  # the name of the Afterburner settings before presets had their own


def build_trainer(model: str | PreTrainedModel, dataset: Rows, preset: str = "quality_efficiency",
                  objective: str | None = None, output_dir: str | Path = "out/grpo",
                  engine: Engine | None = None, *, processing_class: PreTrainedTokenizerBase | None = None,
                  **config_overrides: Any) -> GRPOTrainer:
    """A ``GRPOTrainer`` rewarding with ``preset``'s components on prompt rows.

    ``dataset`` holds :func:`~rewardkit.trainers.datasets.grpo_rows` (or rows
    with the columns the preset reads).  ``objective`` ``None`` takes it from
    the dataset's ``objective`` column: one value is that objective, several
    (the seed's mix of time, memory and integral rows) reward each row on its
    own (``"row"``), none is ``"time"``; an explicit objective must be the
    only one the column holds.  ``engine`` runs the completions (default: the
    preset's own).  The settings are the preset's row of :data:`SETTINGS`
    (its paper's GRPO); ``config_overrides`` are ``GRPOConfig`` fields that
    replace them (but ``reward_weights``, which are the preset's).
    """
    rows = as_dataset(dataset)
    has_objective = preset in PRESETS and takes_objective(preset)  # cisq_grpo has none
    column = rows["objective"] if "objective" in rows.column_names and has_objective else None
    chosen = dataset_objective(column, objective) if has_objective else None
    reward = make_reward(preset, chosen, engine=engine)
    settings = {**SETTINGS.get(preset, AFTERBURNER), **precision(config_overrides), **config_overrides,
                "reward_weights": reward.weights}
    config = GRPOConfig(output_dir=str(output_dir), **settings)
    return GRPOTrainer(model=model, args=config, train_dataset=rows, processing_class=processing_class,
                       reward_funcs=[_with_objective_means(f) if f.__name__ == f"efficiency_{ROW}" else f
                                     for f in reward.functions()])


def dataset_objective(column: list[Any] | None, objective: str | None) -> str:
    """The reward's objective for rows whose ``objective`` column is ``column`` (None: no column).

    Every value is checked first, so a bad row fails here rather than mid-training.
    """
    found = _checked_values(column, objective)
    if objective is None:
        return found[0] if len(found) == 1 else ROW if found else "time"
    other = [value for value in found if value != objective]
    if objective != ROW and other:
        hint = " (pass objective=None to reward each row on its own)" if len(found) > 1 else ""
        raise ConfigError(f"the dataset has rows for objective(s) {other}, the reward is for "
                          f"{objective!r}{hint}")
    return objective


def _checked_values(column: list[Any] | None, objective: str | None) -> list[Any]:
    """The column's distinct objectives, each known, and none that cannot be rewarded as asked."""
    found = sorted(set(column or ()), key=str)
    unknown = [value for value in found if value not in OBJECTIVE_CHOICES]
    if unknown:
        raise ConfigError(f"unknown objective {unknown[0]!r} in the dataset's 'objective' column; use one "
                          f"of {', '.join(OBJECTIVE_CHOICES)}")
    if "instructions" in found and (len(found) > 1 or objective == ROW):
        raise ConfigError("'instructions' rows cannot join a mix: a mix is measured by one timed run "
                          "(time, memory, integral), instruction counts by the instruction meter; train "
                          "them on their own (objective='instructions')")
    if objective == ROW and not found:
        raise ConfigError(f"objective={ROW!r} reads the dataset's 'objective' column, and it has none")
    return found


def _with_objective_means(function: RewardFunction) -> RewardFunction:
    """The ``efficiency_row`` function, also logging its mean per objective through TRL's ``log_metric``
    (``rewardkit/efficiency_<objective>``, beside TRL's ``rewards/efficiency_row/mean``)."""
    def logged(completions: list[Any], **kwargs: Any) -> list[float | None]:
        values = function(completions, **kwargs)
        log_metric = kwargs.get("log_metric")
        if callable(log_metric):
            by_objective: dict[str, list[float]] = defaultdict(list)
            for objective, value in zip(kwargs["objective"], values, strict=True):
                if value is not None:
                    by_objective[objective].append(value)
            for objective, scored in sorted(by_objective.items()):
                log_metric(f"rewardkit/efficiency_{objective}", statistics.fmean(scored))
        return values

    logged.__name__ = logged.__qualname__ = function.__name__
    logged.__doc__ = function.__doc__
    return logged
