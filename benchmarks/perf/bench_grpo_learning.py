"""GRPO learning benchmark: rewardkit's format reward moves a policy, on CPU, in a few minutes.

A tiny Llama (:mod:`rewardkit.trainers.tiny`) is fitted for a few seconds on
a mixture of answers to four toy prompts: three in Afterburner's format
(``<thinking>...</thinking><solution>...</solution>``) and five near misses
(a bare code block, a missing or repeated block, text after the solution).
Sampled at temperature 1 this starting policy is well formatted about a
third of the time (30-37% over seeds 0-2).  TRL's ``GRPOTrainer`` then trains
it with ``rewards.afterburner_format()`` (+1 well formatted, -1 otherwise) as
the only reward, and the mean reward per step is read from
``trainer.state.log_history``.

The references, measured in the same run from the same starting weights:

1. the starting policy's mean reward over :data:`EVAL_SAMPLES` completions
   sampled as the trainer samples (same prompts, temperature, length);
2. a control GRPO run of the same length with ``learning_rate=0``: same
   trainer, seed, rewards and sampling, no update, so its curve shows what
   the per-step noise looks like when nothing is learnt.

The trained policy is then sampled like the starting one.  Printed: the curve
(mean reward and share well formatted per :data:`WINDOW` steps, trained next to
control), start, end and control figures, and the runtime; the plot is saved
to ``out/bench/grpo_learning.png``.  The format reward needs no sandbox, so a
step costs the model's sampling and update only.  PyTorch runs on one thread:
ops this small do not gain from two, and on shared cores a second thread
waiting for the first made each step ten times slower.

Run: ``python benchmarks/perf/bench_grpo_learning.py [--seed N]`` (``make bench`` runs it).
"""

from __future__ import annotations

import os

# Never reach a hub: set before any Hugging Face module reads these at import.
os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1")

import argparse
import copy
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import matplotlib
import psutil
import torch
from datasets import Dataset
from transformers import LlamaForCausalLM, PreTrainedTokenizerFast, PrinterCallback, ProgressCallback
from transformers.utils import logging as hf_logging
from trl import GRPOConfig, GRPOTrainer

from rewardkit import rewards
from rewardkit.trainers import tiny
from rewardkit.trainers.datasets import answer_text

matplotlib.use("Agg")
import matplotlib.pyplot as plt

STEPS = 300  # GRPO steps, trained and control alike
WINDOW = 30  # steps per row of the printed curve
GROUP = 4  # completions per prompt (num_generations)
BATCH = 8  # completions per step: 2 prompts x GROUP
LEARNING_RATE = 2e-4
MAX_TOKENS = 32  # max_completion_length; the longest fitted answer is 27 tokens plus the eos
FIT_STEPS = 150
EVAL_SAMPLES = 256
PLOT = Path("out/bench/grpo_learning.png")
T = TypeVar("T")

PROMPTS = ["Read n and print 2*n.", "Read n and print n*n.", "Read a and b, print a+b.",
           "Print the sum of a list."]


# What the starting policy is fitted to produce, for every prompt alike: 3 of 8 well formatted.
WELL_FORMATTED = [answer_text("print(int(input())*2)", "double"),
                  answer_text("n = int(input())\nprint(n*n)", "square"),
                  answer_text("print(sum(map(int, input().split())))", "add")]
ILL_FORMATTED = ["```python\nprint(int(input())*2)\n```",
                 "print(int(input())**2)",
                 "<thinking>add</thinking>\n```python\nprint(1)\n```",
                 "<solution>\nprint(2)\n</solution>",
                 answer_text("print(int(input())**2)", "square") + "\ndone"]


def starting_policy(seed: int) -> tuple[PreTrainedTokenizerFast, LlamaForCausalLM, list[str]]:
    """Tokenizer, the fitted tiny model and the prompts rendered with the chat template."""
    tokenizer = tiny.build_tokenizer(PROMPTS + WELL_FORMATTED + ILL_FORMATTED)
    prompts = [str(tokenizer.apply_chat_template([{"role": "user", "content": p}], tokenize=False,
                                                 add_generation_prompt=True)) for p in PROMPTS]
    model = tiny.build_model(tokenizer, seed=seed)
    tiny.fit(model, tokenizer, prompts, WELL_FORMATTED + ILL_FORMATTED, steps=FIT_STEPS, seed=seed)
    return tokenizer, model, prompts


def sampled_reward(model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, prompts: list[str],
                   seed: int) -> float:
    """Mean format reward of :data:`EVAL_SAMPLES` completions sampled as the trainer samples."""
    torch.manual_seed(seed)
    batch = tokenizer(prompts * (EVAL_SAMPLES // len(prompts)), return_tensors="pt", padding=True,
                      add_special_tokens=False)
    model.eval()
    generate = cast(Any, model).generate  # transformers' annotation of generate() rejects a Llama
    with torch.inference_mode():
        output = generate(**batch, do_sample=True, temperature=1.0, top_k=0, top_p=1.0,
                          max_new_tokens=MAX_TOKENS)
    completions = tokenizer.batch_decode(output[:, batch["input_ids"].shape[1]:], skip_special_tokens=True)
    scores = rewards.afterburner_format()(completions=completions)  # text only: never None
    return statistics.fmean(score for score in scores if score is not None)


def grpo(model: LlamaForCausalLM, tokenizer: PreTrainedTokenizerFast, prompts: list[str],
         learning_rate: float, seed: int) -> list[float]:
    """Train ``model`` (in place) for :data:`STEPS` GRPO steps; the mean reward logged at each step."""
    with tempfile.TemporaryDirectory() as output_dir:
        config = GRPOConfig(
            output_dir=output_dir, max_steps=STEPS, per_device_train_batch_size=BATCH,
            num_generations=GROUP, max_completion_length=MAX_TOKENS, learning_rate=learning_rate,
            lr_scheduler_type="constant", beta=0.0, logging_steps=1, report_to="none",
            save_strategy="no", use_cpu=True, bf16=False, seed=seed, disable_tqdm=True,
            gradient_checkpointing=False,  # recomputing a two-layer model's activations buys nothing
        )
        trainer = GRPOTrainer(model=model, processing_class=tokenizer,
                              reward_funcs=[rewards.afterburner_format()], args=config,
                              train_dataset=Dataset.from_list([{"prompt": p} for p in prompts]))
        for quiet in (PrinterCallback, ProgressCallback):  # no log line per step
            trainer.remove_callback(quiet)
        trainer.train()
    return [entry["reward"] for entry in trainer.state.log_history if "reward" in entry]


def windows(values: list[float]) -> list[float]:
    """Mean of each run of :data:`WINDOW` consecutive values."""
    return [statistics.fmean(values[i:i + WINDOW]) for i in range(0, len(values), WINDOW)]


def well_formatted(reward: float) -> float:
    """Share of completions well formatted, from the mean of the +1/-1 format reward."""
    return (reward + 1) / 2


def print_curve(trained: list[float], control: list[float]) -> None:
    """The two curves side by side, one row per :data:`WINDOW` steps."""
    print(f"{'steps':>9}  {'trained reward':>14} {'formatted':>9}  {'control reward':>14} {'formatted':>9}")
    for row, (t, c) in enumerate(zip(windows(trained), windows(control), strict=True)):
        steps = f"{row * WINDOW + 1}-{min((row + 1) * WINDOW, len(trained))}"
        print(f"{steps:>9}  {t:>+14.2f} {well_formatted(t):>9.0%}  {c:>+14.2f} {well_formatted(c):>9.0%}")


def plot(trained: list[float], control: list[float], start: float, seed: int) -> Path:
    """Per-step rewards and their :data:`WINDOW`-step means, trained and control, saved as PNG."""
    PLOT.parent.mkdir(parents=True, exist_ok=True)
    figure, axes = plt.subplots(figsize=(8, 4.5))
    centres = [i + WINDOW / 2 for i in range(0, STEPS, WINDOW)]
    for values, label, colour in ((trained, f"GRPO, lr={LEARNING_RATE:g}", "tab:blue"),
                                  (control, "control, lr=0", "tab:grey")):
        axes.plot(range(1, len(values) + 1), values, color=colour, alpha=0.25, linewidth=0.8)
        axes.plot(centres[:len(windows(values))], windows(values), color=colour, marker="o",
                  label=f"{label} ({WINDOW}-step mean)")
    axes.axhline(start, color="tab:red", linestyle="--", label="starting policy (sampled)")
    axes.set(xlabel="GRPO step", ylabel="mean afterburner_format reward", ylim=(-1.05, 1.05),
             title=f"Tiny Llama on CPU, {BATCH} completions/step, seed {seed}")
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(PLOT, dpi=120)
    plt.close(figure)
    return PLOT


def timed(function: Callable[..., T], *args: Any) -> tuple[T, float]:
    """``function(*args)`` and the wall seconds it took."""
    clock = time.perf_counter()
    return function(*args), time.perf_counter() - clock


def print_summary(start: float, control: list[float], trained: list[float], end: float) -> None:
    """Start, control, end, and how far the trained curve ends above the control."""
    last, control_mean = statistics.fmean(trained[-WINDOW:]), statistics.fmean(control)
    print(f"start {start:+.2f} (sampled) | control, lr=0: {control_mean:+.2f} over {STEPS} steps | "
          f"trained: {last:+.2f} over its last {WINDOW} steps, {end:+.2f} sampled after training")
    print(f"well formatted: {well_formatted(start):.0%} at start -> {well_formatted(end):.0%} trained "
          f"({well_formatted(end) / max(well_formatted(start), 1e-9):.1f}x); "
          f"reward gain over the control {last - control_mean:+.2f}")


def main() -> None:
    """Fit the starting policy, train it and a control with GRPO, print the curves and save the plot."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    seed = parser.parse_args().seed
    warnings.filterwarnings("ignore")  # TRL's and transformers' advice for real runs
    hf_logging.set_verbosity_error()
    torch.set_num_threads(1)
    (tokenizer, model, prompts), fit_s = timed(starting_policy, seed)
    start = sampled_reward(model, tokenizer, prompts, seed)
    print(f"GRPO learning benchmark, seed {seed}: {STEPS} steps x {BATCH} completions "
          f"({len(prompts)} prompts, groups of {GROUP}, <= {MAX_TOKENS} tokens), lr {LEARNING_RATE:g}, "
          f"beta 0, reward afterburner_format (+1/-1), torch on 1 thread")
    print(f"starting policy (fitted {FIT_STEPS} steps, {fit_s:.0f} s): reward {start:+.2f}, "
          f"{well_formatted(start):.0%} well formatted ({EVAL_SAMPLES} samples)")
    control, control_s = timed(grpo, copy.deepcopy(model), tokenizer, prompts, 0.0, seed)
    trained, trained_s = timed(grpo, model, tokenizer, prompts, LEARNING_RATE, seed)
    end = sampled_reward(model, tokenizer, prompts, seed)
    print_curve(trained, control)
    print_summary(start, control, trained, end)
    print(f"plot: {plot(trained, control, start, seed)}")
    print(f"runtime {time.time() - psutil.Process().create_time():.0f} s, imports included "
          f"(GRPO {trained_s:.0f} s = {trained_s / STEPS:.2f} s/step, control {control_s:.0f} s)")


if __name__ == "__main__":
    main()
