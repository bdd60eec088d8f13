"""The tests' tiny model: :mod:`rewardkit.trainers.tiny` fitted on two toy problems.

Nothing is downloaded: the tokenizer is trained on the corpus held here, and
the two-layer Llama is fitted for a few seconds on the answers in
:data:`ANSWERS`, so that sampling from it gives a mix of correct, wrong,
well-formatted and ill-formatted completions (a purely random model gives
only noise, which would leave every reward component at its lowest value).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transformers import LlamaForCausalLM, PreTrainedTokenizerFast

from rewardkit.trainers import tiny
from rewardkit.trainers.datasets import answer_text

if TYPE_CHECKING:
    from trl import GRPOConfig

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


# What the tiny model is fitted to produce, for every prompt alike: a mixture,
# so sampled groups differ in format, correctness and code.
ANSWERS = [
    answer_text("print(int(input())*2)", "double"),
    answer_text("n = int(input())\nprint(n*n)", "square"),
    answer_text("print(int(input())+2)", "add"),
    "```python\nprint(int(input())*2)\n```",
    "print(int(input())**2)",
    "<thinking>loop</thinking>\n<solution>\nfor i in range(3):\n    pass\n</solution>",
]


def corpus() -> list[str]:
    """Text the tokenizer learns its merges from."""
    return [p["prompt"] for p in PROBLEMS] + ANSWERS + [p["baseline_code"] for p in PROBLEMS]


def prompt_texts(tokenizer: PreTrainedTokenizerFast) -> list[str]:
    """Every prompt as the trainer will render it, plain and conversational."""
    plain = [p["prompt"] for p in PROBLEMS]
    chat = [tokenizer.apply_chat_template([{"role": "user", "content": p["prompt"]}],
                                          tokenize=False, add_generation_prompt=True)
            for p in PROBLEMS]
    return plain + chat  # type: ignore[operator]


@dataclass
class TinyLM:
    """A fitted tiny model and its tokenizer, saved under ``path`` as well."""

    tokenizer: PreTrainedTokenizerFast
    model: LlamaForCausalLM
    path: Path


def build(path: Path, steps: int = 150, seed: int = 0) -> TinyLM:
    """Tokenizer plus a model fitted to :data:`ANSWERS`, saved to ``path`` (for trainers that want a name)."""
    tokenizer = tiny.build_tokenizer(corpus())
    model = tiny.fit(tiny.build_model(tokenizer, seed=seed), tokenizer, prompt_texts(tokenizer), ANSWERS,
                     steps=steps, seed=seed)
    return TinyLM(tokenizer, model, tiny.save(model, tokenizer, path))


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


def tool_caller(messages: list[dict[str, str]], tools: list[Any], calls: list[str]
                ) -> tuple[str, PreTrainedTokenizerFast, LlamaForCausalLM]:
    """A tokenizer and model fitted to answer ``messages`` (rendered with ``tools`` by the tiny chat
    template) with one of the tool ``calls`` or "no", each call one added token so that a few seconds
    of fitting suffice; with the rendered prompt."""
    draft = tiny.build_tokenizer(corpus())
    rendered = str(draft.apply_chat_template(messages, tools=tools, tokenize=False,
                                             add_generation_prompt=True))
    tokenizer = tiny.build_tokenizer([rendered, *corpus()], vocab_size=1000)
    tokenizer.add_tokens(calls)
    model = tiny.fit(tiny.build_model(tokenizer), tokenizer, [rendered], [*calls, "no"], steps=50, lr=1e-2)
    model.config.max_position_embeddings = 1024  # room for the tool results (RoPE has no fixed length)
    return rendered, tokenizer, model


def tool_grpo_config(output_dir: Path, max_steps: int, max_completion_length: int) -> GRPOConfig:
    """A CPU ``GRPOConfig`` for an environment's episodes: 4 rollouts of one prompt per step, up to
    3 tool calls each, scored by one reward function of weight 0 (it only records)."""
    from trl import GRPOConfig

    return GRPOConfig(output_dir=str(output_dir), max_steps=max_steps, per_device_train_batch_size=4,
                      num_generations=4, max_completion_length=max_completion_length,
                      max_tool_calling_iterations=3, reward_weights=[0.0], logging_steps=1, report_to="none",
                      save_strategy="no", use_cpu=True, bf16=False, seed=0)
