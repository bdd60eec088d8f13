"""GRPO with rewardkit rewards (SPEC §5), on TRL's ``GRPOTrainer``.

Each component of the preset is its own reward function with the preset's
weights as ``reward_weights``, so TRL logs ``rewards/<component>/mean`` for
every one, and the components log sandbox statuses (``rewardkit/status/...``)
through TRL's ``log_metric``.  They share one :class:`~rewardkit.rewards.Engine`:
a completion runs once for all of them.

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

from pathlib import Path
from typing import Any

from ..optional import requires
from ..rewards import PRESETS, Engine
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
                  objective: str = "time", output_dir: str | Path = "out/grpo", engine: Engine | None = None,
                  *, processing_class: PreTrainedTokenizerBase | None = None,
                  **config_overrides: Any) -> GRPOTrainer:
    """A ``GRPOTrainer`` rewarding with ``preset``'s components on prompt rows.

    ``dataset`` holds :func:`~rewardkit.trainers.datasets.grpo_rows` (or rows
    with the columns the preset reads); its ``objective`` column, if any, must
    match ``objective``.  ``engine`` runs the completions (default: the
    preset's own).  The settings are the preset's row of :data:`SETTINGS`
    (its paper's GRPO); ``config_overrides`` are ``GRPOConfig`` fields that
    replace them (but ``reward_weights``, which are the preset's).
    """
    has_objective = preset in PRESETS and takes_objective(preset)  # cisq_grpo has none
    reward = make_reward(preset, objective if has_objective else None, engine=engine)
    rows = as_dataset(dataset)
    if "objective" in rows.column_names and has_objective:
        other = set(rows["objective"]) - {objective}
        if other:
            raise ValueError(f"the dataset has rows for objective(s) {sorted(other)}, the reward is "
                             f"for {objective!r}: build one trainer per objective")
    settings = {**SETTINGS.get(preset, AFTERBURNER), **precision(config_overrides), **config_overrides,
                "reward_weights": reward.weights}
    config = GRPOConfig(output_dir=str(output_dir), **settings)
    return GRPOTrainer(model=model, reward_funcs=list(reward.functions()), args=config,
                       train_dataset=rows, processing_class=processing_class)
