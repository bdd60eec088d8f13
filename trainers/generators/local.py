"""A generator that samples from a local transformers model, in left-padded batches.

Needs the ``train`` extra (torch, transformers), which is why
:mod:`rewardkit.trainers.generators` imports this module only when asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from ...optional import requires
from .base import Prompt, Sampling

with requires("train"):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase


class TransformersGenerator:
    """Completions from a causal LM held in this process.

    ``model`` and ``tokenizer`` are objects or what ``from_pretrained`` takes:
    a local directory (read without touching the hub) or a hub id (found in
    the local cache, or downloaded when the environment allows it).  Without
    ``tokenizer`` the model's own directory supplies it.  Chat prompts go
    through the tokenizer's chat template, with ``system_prompt`` first when
    the chat has no system message; plain-text prompts are used as they are.
    As in TRL, the rendered text is tokenized without added special tokens.
    A tokenizer without a pad token is given its eos token as one.
    """

    name = "local"

    def __init__(self, model: str | PreTrainedModel, tokenizer: str | PreTrainedTokenizerBase | None = None,
                 batch_size: int = 8, device: str | None = None, system_prompt: str | None = None) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        # Any: transformers' own annotations of to() and generate() do not type-check as called here
        self.model = cast(Any, _load_model(model) if isinstance(model, str) else model)
        if device is not None or isinstance(model, str):
            self.model.to(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.tokenizer = _load_tokenizer(_tokenizer_source(model) if tokenizer is None else tokenizer)
        if self.tokenizer.pad_token is None:
            if self.tokenizer.eos_token is None:
                raise ValueError("the tokenizer has neither a pad nor an eos token; set tokenizer.pad_token")
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.batch_size = batch_size
        self.system_prompt = system_prompt
        self.last_errors: list[str | None] = []

    def render(self, prompt: Prompt) -> str:
        """The text the model continues: a chat through the chat template, plain text as it is."""
        if isinstance(prompt, str):
            return prompt
        if self.system_prompt and not any(m.get("role") == "system" for m in prompt):
            prompt = [{"role": "system", "content": self.system_prompt}, *prompt]
        text = self.tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
        return str(text)

    def generate(self, prompts: list[Prompt], sampling: Sampling | None = None, **options: Any) -> list[str]:
        """One completion per prompt, in order; ``options`` go to ``model.generate``.

        A batch that fails gives ``""`` for each of its prompts, with the
        error in :attr:`last_errors`.
        """
        sampling = sampling or Sampling()
        if sampling.seed is not None:
            torch.manual_seed(sampling.seed)
        kwargs = {**_generate_kwargs(sampling), "pad_token_id": self.tokenizer.pad_token_id, **options}
        texts: list[str] = []
        errors: list[str | None] = []
        for start in range(0, len(prompts), self.batch_size):
            batch = prompts[start:start + self.batch_size]
            try:
                texts += self._generate_batch(batch, kwargs)
                errors += [None] * len(batch)
            except Exception as error:  # a failed batch must not lose the others
                texts += [""] * len(batch)
                errors += [f"{type(error).__name__}: {error}"] * len(batch)
        self.last_errors = errors
        return texts

    def _generate_batch(self, batch: list[Prompt], kwargs: dict[str, Any]) -> list[str]:
        inputs = self.tokenizer([self.render(p) for p in batch], return_tensors="pt", padding=True,
                                padding_side="left", add_special_tokens=False).to(self.model.device)
        with torch.inference_mode():
            output = self.model.generate(**inputs, **kwargs)
        new_tokens = output[:, inputs["input_ids"].shape[1]:]
        return list(self.tokenizer.batch_decode(new_tokens, skip_special_tokens=True))


def _generate_kwargs(sampling: Sampling) -> dict[str, Any]:
    """``Sampling`` in ``generate``'s names: temperature 0 is greedy; no top-k cut, as in TRL and OpenAI."""
    if sampling.temperature <= 0:
        return {"max_new_tokens": sampling.max_new_tokens, "do_sample": False}
    return {"max_new_tokens": sampling.max_new_tokens, "do_sample": True, "temperature": sampling.temperature,
            "top_p": sampling.top_p, "top_k": 0}


def _source(name: str) -> tuple[str, bool]:
    """``name`` as ``from_pretrained`` should get it, and whether it is a local directory."""
    path = Path(name).expanduser()
    if path.is_dir():
        return str(path), True
    if path.is_absolute() or name.startswith((".", "~")) or path.exists():
        raise FileNotFoundError(f"no model directory at {name!r}: give a directory written by "
                                "save_pretrained (config.json, weights, tokenizer files) or a hub model id")
    return name, False


def _load_model(name: str) -> PreTrainedModel:
    source, local = _source(name)
    try:
        model = AutoModelForCausalLM.from_pretrained(source, local_files_only=local)  # nosec B615 - the user's model
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot load a causal LM from {name!r}: {error}") from error
    model.eval()
    return model


def _load_tokenizer(tokenizer: str | PreTrainedTokenizerBase) -> PreTrainedTokenizerBase:
    if not isinstance(tokenizer, str):
        return tokenizer
    source, local = _source(tokenizer)
    try:
        return AutoTokenizer.from_pretrained(source, local_files_only=local)  # nosec B615 - the user's model
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot load a tokenizer from {tokenizer!r}: {error}; pass tokenizer=") from error


def _tokenizer_source(model: str | PreTrainedModel) -> str:
    """Where the model came from, to find its tokenizer when none is given."""
    if isinstance(model, str):
        return model
    if model.name_or_path:
        return str(model.name_or_path)
    raise ValueError("this model object does not say where it was loaded from; pass tokenizer=")
