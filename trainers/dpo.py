"""Direct preference optimisation of the Afterburner seed (E.3), on TRL's ``DPOTrainer``.

Defaults (any can be overridden by keyword, as a ``DPOConfig`` field): lr
4e-5, cosine schedule with 300 warm-up steps, batch 2 x 8 accumulation,
adamw_torch, 1 epoch, beta 0.1, sigmoid loss and no SFT term (the seed's
``pref_ftx=0``), gradient norm 1.0, BF16 where CUDA supports it (FP32
elsewhere, :mod:`rewardkit.trainers.precision`).  The seed starts from the
SFT checkpoint, which is then also the reference model: pass that
checkpoint as ``model`` and TRL uses it as the reference (a frozen copy, or
the model without its adapter under LoRA).
LoRA is off unless ``lora_r`` is given (the seed: rank 16, alpha 16,
dropout 0.05, the defaults of the other two).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..optional import requires
from .precision import precision
from .sft import Rows, as_dataset, lora_config

with requires("train"):
    from transformers import PreTrainedModel, PreTrainedTokenizerBase
    from trl import DPOConfig, DPOTrainer

DEFAULTS: dict[str, Any] = {
    "learning_rate": 4e-5, "lr_scheduler_type": "cosine", "warmup_steps": 300,
    "per_device_train_batch_size": 2, "gradient_accumulation_steps": 8, "optim": "adamw_torch",
    "num_train_epochs": 1, "beta": 0.1, "loss_type": "sigmoid", "max_grad_norm": 1.0,
}


def build_trainer(model: str | PreTrainedModel, dataset: Rows, output_dir: str | Path = "out/dpo", *,
                  lora_r: int | None = None, lora_alpha: int = 16, lora_dropout: float = 0.05,
                  processing_class: PreTrainedTokenizerBase | None = None,
                  **config_overrides: Any) -> DPOTrainer:
    """A ``DPOTrainer`` on prompt/chosen/rejected rows (:func:`~rewardkit.trainers.datasets.dpo_rows`).

    ``model`` is a path or Hub name, or a loaded model; ``config_overrides``
    are ``DPOConfig`` fields replacing the defaults.
    """
    settings = {**DEFAULTS, **precision(config_overrides), **config_overrides}
    config = DPOConfig(output_dir=str(output_dir), **settings)
    return DPOTrainer(model=model, args=config, train_dataset=as_dataset(dataset),
                      processing_class=processing_class,
                      peft_config=lora_config(lora_r, lora_alpha, lora_dropout))
