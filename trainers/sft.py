"""Supervised fine-tuning recipes of the Afterburner seed, on TRL's ``SFTTrainer``.

Two recipes with the seed's hyperparameters as defaults (any can be
overridden by keyword, as an ``SFTConfig`` field):

| recipe | seed | defaults |
| --- | --- | --- |
| ``sft`` (DS_SFT, C⁻ → C⁺) | E.2 | lr 3e-5, cosine, 200 warm-up steps, batch 4 x 16 accumulation, |
| | | adamw_torch, 1 epoch, gradient norm 1.0; LoRA rank 8, alpha 16 |
| ``cold_start`` (DS_COLD) | E.4 | full fine-tuning, lr 5e-5, cosine, 50 warm-up steps, effective |
| | | batch 4 (1 x 4), 1 epoch, sequences up to 32,768 tokens |

The seed trains in BF16: the default where CUDA supports it, FP32 elsewhere
(:mod:`rewardkit.trainers.precision`).  Its
cold start uses the 8-bit ``adamw_bnb_8bit`` optimizer to save memory; the
default here is ``adamw_torch``, which needs no bitsandbytes.  LoRA is off
unless ``lora_r`` is given (the seed's SFT uses ``lora_r=8``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeAlias

from ..optional import requires
from .precision import precision

with requires("train"):
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import PreTrainedModel, PreTrainedTokenizerBase
    from trl import SFTConfig, SFTTrainer

Rows: TypeAlias = "Dataset | list[dict[str, Any]]"

RECIPES: dict[str, dict[str, Any]] = {
    "sft": {"learning_rate": 3e-5, "lr_scheduler_type": "cosine", "warmup_steps": 200,
            "per_device_train_batch_size": 4, "gradient_accumulation_steps": 16, "optim": "adamw_torch",
            "num_train_epochs": 1, "max_grad_norm": 1.0},
    "cold_start": {"learning_rate": 5e-5, "lr_scheduler_type": "cosine", "warmup_steps": 50,
                   "per_device_train_batch_size": 1, "gradient_accumulation_steps": 4,
                   "optim": "adamw_torch", "num_train_epochs": 1, "max_length": 32768},
}
LORA_ALPHA = 16  # E.2


def build_trainer(model: str | PreTrainedModel, dataset: Rows, output_dir: str | Path = "out/sft", *,
                  recipe: str = "sft", lora_r: int | None = None, lora_alpha: int = LORA_ALPHA,
                  lora_dropout: float = 0.0, processing_class: PreTrainedTokenizerBase | None = None,
                  **config_overrides: Any) -> SFTTrainer:
    """An ``SFTTrainer`` on prompt/completion rows (:func:`~rewardkit.trainers.datasets.sft_rows`).

    ``model`` is a path or Hub name, or a loaded model; ``config_overrides``
    are ``SFTConfig`` fields replacing the recipe's defaults.
    """
    if recipe not in RECIPES:
        raise ValueError(f"unknown SFT recipe {recipe!r}; use one of {', '.join(RECIPES)}")
    config = SFTConfig(output_dir=str(output_dir),
                       **{**RECIPES[recipe], **precision(config_overrides), **config_overrides})
    return SFTTrainer(model=model, args=config, train_dataset=as_dataset(dataset),
                      processing_class=processing_class,
                      peft_config=lora_config(lora_r, lora_alpha, lora_dropout))


def lora_config(r: int | None, alpha: int, dropout: float) -> LoraConfig | None:
    """A causal-LM LoRA config of rank ``r`` on every linear layer, or None when ``r`` is None."""
    if r is None:
        return None
    if r < 1:
        raise ValueError(f"lora_r must be at least 1, got {r}")
    return LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, target_modules="all-linear",
                      task_type="CAUSAL_LM")


def as_dataset(rows: Rows) -> Dataset:
    """``rows`` as a ``datasets.Dataset`` (a list of dicts is converted)."""
    if isinstance(rows, Dataset):
        return rows
    if not rows:
        raise ValueError("the training set is empty")
    return Dataset.from_list(rows)
