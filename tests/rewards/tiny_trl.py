"""A tiny tokenizer and causal LM built locally, for running real TRL trainers on CPU.

Nothing is downloaded: the tokenizer is trained with ``tokenizers`` on a small
corpus held here, and the model is a two-layer Llama initialised at random and
then fitted for a few seconds on the answers in :data:`ANSWERS`, so that
sampling from it gives a mix of correct, wrong, well-formatted and
ill-formatted completions (a purely random model gives only noise, which
would leave every reward component at its lowest value).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

PAD, EOS, BOS = "<pad>", "<eos>", "<bos>"
ROLE_TOKENS = ("<|user|>", "<|assistant|>")
TAGS = ("<thinking>", "</thinking>", "<solution>", "</solution>", "```python", "```")

# A role-tagged template; generation prompts end with the assistant marker.
CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>{{ message['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)

# Two problems: one whose baseline passes (slow but right), one whose baseline fails.
DOUBLE_TESTS = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{2 * n}\n"}
                                           for n in (3, 21, 500)]}
SQUARE_TESTS = {"mode": "stdio", "cases": [{"input": f"{n}\n", "output": f"{n * n}\n"}
                                           for n in (2, 7, 40)]}
PROBLEMS: list[dict[str, Any]] = [
    {"prompt": "Read n and print 2*n.", "tests": DOUBLE_TESTS,
     "baseline_code": "n = int(input())\nprint(sum(n for _ in range(2)))\n"},
    {"prompt": "Read n and print n*n.", "tests": SQUARE_TESTS,
     "baseline_code": "n = int(input())\nprint(n + n)\n"},
]


def answer(thinking: str, code: str) -> str:
    """A completion in Afterburner's format."""
    return f"<thinking>{thinking}</thinking>\n<solution>\n```python\n{code}\n```\n</solution>"


# What the tiny model is fitted to produce, for every prompt alike: a mixture,
# so sampled groups differ in format, correctness and code.
ANSWERS = [
    answer("double", "print(int(input())*2)"),
    answer("square", "n = int(input())\nprint(n*n)"),
    answer("add", "print(int(input())+2)"),
    "```python\nprint(int(input())*2)\n```",
    "print(int(input())**2)",
    "<thinking>loop</thinking>\n<solution>\nfor i in range(3):\n    pass\n</solution>",
]

PYTHON_WORDS = ("def return if else elif for while in range import from as with try except "
                "finally class lambda None True False and or not is pass break continue yield "
                "print input int str len sum min max sorted list dict set")


def corpus() -> list[str]:
    """Text the tokenizer learns its merges from."""
    lines = [p["prompt"] for p in PROBLEMS] + ANSWERS
    lines += [p["baseline_code"] for p in PROBLEMS]
    lines += [PYTHON_WORDS, "0 1 2 3 4 5 6 7 8 9 10 42 100", "( ) [ ] { } : , . = + - * / % < > \" '"]
    return lines * 4


def build_tokenizer(vocab_size: int = 400) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on :func:`corpus`, with pad/eos/bos and a chat template.

    The format tags are ordinary (not special) added tokens, so TRL's
    ``skip_special_tokens=True`` decoding keeps them in the completions.
    """
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[PAD, EOS, BOS, *ROLE_TOKENS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(corpus(), trainer=trainer)
    tok.add_tokens(list(TAGS))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, eos_token=EOS,
                                   bos_token=BOS, additional_special_tokens=list(ROLE_TOKENS))
    fast.chat_template = CHAT_TEMPLATE
    fast.padding_side = "left"
    return fast


def build_model(tokenizer: PreTrainedTokenizerFast, hidden: int = 64, seed: int = 0) -> LlamaForCausalLM:
    """A randomly initialised two-layer Llama sized to the tokenizer."""
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=256, pad_token_id=tokenizer.pad_token_id,
                         eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id,
                         tie_word_embeddings=True)
    model = LlamaForCausalLM(config)
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.bos_token_id = tokenizer.bos_token_id
    return model


def prompt_texts(tokenizer: PreTrainedTokenizerFast) -> list[str]:
    """Every prompt as the trainer will render it, plain and conversational."""
    plain = [p["prompt"] for p in PROBLEMS]
    chat = [tokenizer.apply_chat_template([{"role": "user", "content": p["prompt"]}],
                                          tokenize=False, add_generation_prompt=True)
            for p in PROBLEMS]
    return plain + chat  # type: ignore[operator]


def fit(model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, steps: int = 150,
        seed: int = 0) -> LlamaForCausalLM:
    """Teach the model to answer every prompt with one of :data:`ANSWERS` (a few seconds on CPU)."""
    rng = random.Random(seed)
    torch.manual_seed(seed)
    pairs = []
    for prompt in prompt_texts(tokenizer):
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        for text in ANSWERS:
            answer_ids = tokenizer(text, add_special_tokens=False)["input_ids"]
            ids = prompt_ids + answer_ids + [tokenizer.eos_token_id]
            labels = [-100] * len(prompt_ids) + answer_ids + [tokenizer.eos_token_id]
            pairs.append((ids, labels))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for _ in range(steps):
        batch = rng.sample(pairs, 16)
        width = max(len(ids) for ids, _ in batch)
        input_ids = torch.tensor([ids + [tokenizer.pad_token_id] * (width - len(ids)) for ids, _ in batch])
        labels = torch.tensor([lab + [-100] * (width - len(lab)) for _, lab in batch])
        mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in batch])
        loss = model(input_ids=input_ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    return model


@dataclass
class TinyLM:
    """A fitted tiny model and its tokenizer, saved under ``path`` as well."""

    tokenizer: PreTrainedTokenizerFast
    model: LlamaForCausalLM
    path: Path


def build(path: Path, steps: int = 150, seed: int = 0) -> TinyLM:
    """Tokenizer plus fitted model, saved to ``path`` (for trainers that want a name)."""
    tokenizer = build_tokenizer()
    model = fit(build_model(tokenizer, seed=seed), tokenizer, steps=steps, seed=seed)
    path.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(path)
    model.save_pretrained(path)
    return TinyLM(tokenizer, model, path)


def longest_answer_tokens(tokenizer: PreTrainedTokenizerFast) -> int:
    """Tokens in the longest of :data:`ANSWERS`, plus the eos."""
    return 1 + max(len(tokenizer(a, add_special_tokens=False)["input_ids"]) for a in ANSWERS)


def dataset_rows(conversational: bool = False, copies: int = 4) -> list[dict[str, Any]]:
    """Rows with ``prompt``, ``tests`` (as JSON) and ``baseline_code``, each problem ``copies`` times."""
    rows = []
    for _ in range(copies):
        for problem in PROBLEMS:
            prompt: Any = problem["prompt"]
            if conversational:
                prompt = [{"role": "user", "content": prompt}]
            rows.append({"prompt": prompt, "tests": json.dumps(problem["tests"]),
                         "baseline_code": problem["baseline_code"]})
    return rows
