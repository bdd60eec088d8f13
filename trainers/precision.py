"""The precision a recipe trains in unless told: BF16 where CUDA supports it, FP32 elsewhere.

TRL's configs turn ``bf16`` on whenever ``fp16`` is off
(``trl/trainer/base_config.py``, ``_BaseConfig.__post_init__``), and
transformers' ``TrainingArguments`` then refuses to start on a machine
without a BF16-capable GPU ("Your setup doesn't support bf16/gpu") unless
``use_cpu`` is set.  The recipes ask for BF16 only where it runs natively.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..optional import requires

with requires("train"):
    import torch


def precision(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The ``bf16`` setting to use: none when ``overrides`` choose ``bf16`` or ``fp16`` themselves.

    Otherwise BF16 on a CUDA device that supports it (and not with
    ``use_cpu``), and FP32 everywhere else.
    """
    if "bf16" in overrides or "fp16" in overrides:
        return {}
    cuda = torch.cuda.is_available() and not overrides.get("use_cpu")
    return {"bf16": bool(cuda and torch.cuda.is_bf16_supported())}
