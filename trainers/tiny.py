"""A tiny causal LM and tokenizer built on this machine, for smoke runs, tests and CPU benchmarks.

Nothing is downloaded: :func:`build_tokenizer` trains a byte-level BPE
tokenizer with ``tokenizers`` on the text you give it, and :func:`build_model`
makes a randomly initialised two-layer Llama sized to it; :func:`fit` teaches
it a handful of answers in a few seconds so that sampling gives varied,
sometimes-right completions.  Real training wants a real model; this is for
checking that a recipe runs end to end.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

from ..optional import requires

with requires("train"):
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

PAD, EOS, BOS = "<pad>", "<eos>", "<bos>"
ROLE_TOKENS = ("<|system|>", "<|user|>", "<|assistant|>")
TAGS = ("<thinking>", "</thinking>", "<solution>", "</solution>", "```python", "```")
PYTHON_WORDS = ("def return if else elif for while in range import from as with try except finally class "
                "lambda None True False and or not is pass break continue yield print input int str len "
                "sum min max sorted list dict set self Solution 0 1 2 3 4 5 6 7 8 9 10 42 100 "
                "( ) [ ] { } : , . = + - * / % < > \" '")

# A role-tagged template; generation prompts end with the assistant marker.  It renders tool
# calling as TRL's environment_factory path needs it: the tools' JSON schemas in a system turn,
# an assistant turn's tool calls as ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
# (Hermes/Qwen style), and tool results as ``<|tool|>`` turns.  Without tools it renders as
# ``<|role|>content`` lines, so chats without tools look as they always did.
CHAT_TEMPLATE = (
    "{%- if tools %}<|system|>You may call these tools, each call written as "
    "<tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>:\n"
    "{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}{% endif %}"
    "{% for message in messages %}<|{{ message['role'] }}|>"
    "{% if message['tool_calls'] %}{{ message['content'] or '' }}"
    "{% for call in message['tool_calls'] %}"
    "{% set function = call['function'] if call['function'] is defined else call %}"
    "<tool_call>{\"name\": {{ function['name'] | tojson }}, \"arguments\": "
    "{{ function['arguments'] if function['arguments'] is string else function['arguments'] | tojson }}}"
    "</tool_call>{% endfor %}"
    "{% else %}{{ message['content'] }}{% endif %}{{ '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
# How transformers' ``parse_response`` (which TRL calls on every completion when tools are offered)
# reads an answer: text, then any ``<tool_call>`` JSON objects, up to the end of sequence.
RESPONSE_TEMPLATE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|assistant|>",
    "fields": {
        "tool_calls": {"open": "<tool_call>", "close_pattern": r"</tool_call>\s*", "repeats": True,
                       "content": "json", "transform": {"type": "function", "function": "{content}"}},
        "content": {"close_pattern": EOS + r"\s*", "content": "text"},
    },
}


def build_tokenizer(corpus: Sequence[str], vocab_size: int = 400) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on ``corpus`` (plus Python words), with a chat template
    that supports tool calling and the response template that parses tool calls.

    The format tags are ordinary added tokens, not special ones, so decoding
    with ``skip_special_tokens=True`` (as TRL does) keeps them.
    """
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[PAD, EOS, BOS, *ROLE_TOKENS],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator([*corpus, PYTHON_WORDS] * 4, trainer=trainer)
    tok.add_tokens(list(TAGS))
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token=PAD, eos_token=EOS, bos_token=BOS,
                                   additional_special_tokens=list(ROLE_TOKENS))
    fast.chat_template = CHAT_TEMPLATE
    fast.response_template = RESPONSE_TEMPLATE
    fast.padding_side = "left"
    return fast


def build_model(tokenizer: PreTrainedTokenizerFast, hidden: int = 64, layers: int = 2,
                seed: int = 0, context: int = 512) -> LlamaForCausalLM:
    """A randomly initialised Llama sized to the tokenizer."""
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                         num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=context, pad_token_id=tokenizer.pad_token_id,
                         eos_token_id=tokenizer.eos_token_id, bos_token_id=tokenizer.bos_token_id,
                         tie_word_embeddings=True)
    model = LlamaForCausalLM(config)
    for key in ("pad_token_id", "eos_token_id", "bos_token_id"):
        setattr(model.generation_config, key, getattr(tokenizer, key))
    return model


def fit(model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, prompts: Sequence[str],
        answers: Sequence[str], steps: int = 150, lr: float = 3e-3, seed: int = 0) -> LlamaForCausalLM:
    """Teach the model to answer every prompt (already rendered) with one of ``answers``."""
    rng = random.Random(seed)
    torch.manual_seed(seed)
    pairs = []
    for prompt in prompts:
        prompt_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        for text in answers:
            answer_ids = [*tokenizer(text, add_special_tokens=False)["input_ids"], tokenizer.eos_token_id]
            pairs.append((prompt_ids + answer_ids, [-100] * len(prompt_ids) + answer_ids))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        batch = rng.sample(pairs, min(16, len(pairs)))
        width = max(len(ids) for ids, _ in batch)
        pad = tokenizer.pad_token_id
        input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in batch])
        labels = torch.tensor([lab + [-100] * (width - len(lab)) for _, lab in batch])
        mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in batch])
        model(input_ids=input_ids, attention_mask=mask, labels=labels).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    return model


def save(model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, path: Path) -> Path:
    """Save both where trainers and generators can load them by path."""
    path.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(path)
    model.save_pretrained(path)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m rewardkit.trainers.tiny DIR``: save an untrained tiny model for smoke runs."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m rewardkit.trainers.tiny DIR", file=sys.stderr)
        return 2
    from ..benchmarks.embedded import load_mini

    corpus = [p.statement + "\n" + p.starter_code for p in load_mini()]
    tokenizer = build_tokenizer(corpus, vocab_size=1000)
    print(save(build_model(tokenizer, context=4096), tokenizer, Path(args[0])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
