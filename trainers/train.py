"""rewardkit train grpo|sft|dpo: a training recipe end to end.

Loads the problems, measures their references in the sandbox (cached per
machine), builds the recipe's rows (rewardkit.trainers.datasets), trains
from --model with the seed's defaults and saves the model (or its LoRA
adapter) and tokenizer to --out.  GRPO rewards with --preset and measures
candidates with the same sandbox and repeats as the references.  The seed's
batch shapes are for GPUs (GRPO: 4 x 128 accumulation); on a CPU (found and
used automatically, in FP32; BF16 only on a CUDA GPU that supports it) set
--batch-size and --grad-accum.  Training needs the train extra:
pip install 'rewardkit[train]'.

Exit codes: 0 when trained, 2 on bad usage, unreadable data or a model that
cannot be loaded.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..benchmarks.loaders import load_dataset
from ..benchmarks.problem import Problem
from ..benchmarks.references import measure_references
from ..out_folder import FORCE_HELP, earlier_run
from ..rewards import PRESETS, Engine
from ..rewards.engine import OBJECTIVES
from ..rewards.presets import EFFICIENCY_REPEATS
from ..sandbox import Sandbox
from . import datasets

if TYPE_CHECKING:
    from trl import DPOTrainer, GRPOTrainer, SFTTrainer

PROG = "rewardkit train"
MIX = "mix"  # --objective mix: the rows of every objective together


def main(argv: Sequence[str]) -> int:
    """Run ``rewardkit train`` with the arguments after ``train``; returns the exit code."""
    try:
        args = build_parser().parse_args(list(argv))
    except SystemExit as exc:  # argparse has printed the usage error or the help
        return int(exc.code or 0)
    recipe = recipe_module(args.recipe)  # without the train extra: MissingExtra, before any work
    earlier = None if args.force else earlier_run(args.out, "*")
    if earlier:
        return _fail(earlier)
    try:
        problems = load_dataset(args.dataset, split=args.split, limit=args.limit)
    except (OSError, ValueError) as exc:
        return _fail(str(exc))
    with Sandbox(workers=args.workers, repeats=args.repeats) as sandbox:
        measure_references(problems, sandbox)
        rows = build_rows(args, problems)
        if not rows:
            return _fail(f"no {args.recipe} rows from {len(problems)} problem(s): "
                         f"{args.recipe} needs passing references (sft two, dpo three per problem)")
        try:
            trainer = build(args, recipe, rows, sandbox)
        except OSError as exc:
            return _fail(f"cannot load the model {args.model!r}: {exc}")
        trainer.train()
    trainer.save_model(args.out)
    print(f"{PROG}: {len(rows)} rows, {trainer.state.global_step} steps; saved to {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The parser of ``rewardkit train``: one subcommand per recipe."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--model", required=True, help="model path or Hub name to start from")
    common.add_argument("--dataset", default="mini",
                        help="mini (embedded, default), venus, mercury, apps, humaneval, or a local path")
    common.add_argument("--split", default=None, help="dataset split for Hub datasets")
    common.add_argument("--limit", type=_count, default=None, help="load at most N problems")
    common.add_argument("--objective", choices=[*OBJECTIVES, MIX], default="time",
                        help="efficiency objective; mix: the rows of all three, each rewarded (grpo) "
                             "on its own, as the Afterburner seed trains")
    common.add_argument("--out", required=True, help="folder for checkpoints and the trained model")
    common.add_argument("--force", action="store_true", help=FORCE_HELP)
    common.add_argument("--max-steps", type=_positive, default=None, help="stop after N optimizer steps")
    common.add_argument("--lr", type=float, default=None, help="learning rate (default: the seed's)")
    common.add_argument("--batch-size", type=_positive, default=None,
                        help="per-device batch (default: the seed's)")
    common.add_argument("--grad-accum", type=_positive, default=None,
                        help="gradient accumulation steps (default: the seed's)")
    common.add_argument("--save-steps", type=_positive, default=None, help="checkpoint every N steps")
    common.add_argument("--repeats", type=_positive, default=EFFICIENCY_REPEATS,
                        help=f"sandbox runs per measurement (median; default {EFFICIENCY_REPEATS})")
    common.add_argument("--workers", type=_positive, default=None, help="sandbox workers (default: CPUs)")

    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="recipe", required=True)
    grpo_parser = sub.add_parser("grpo", parents=[common], help="GRPO with a rewardkit preset (DS_GRPO)")
    grpo_parser.add_argument("--preset", choices=sorted(PRESETS), default="quality_efficiency")
    grpo_parser.add_argument("--num-generations", type=_positive, default=None,
                             help="completions per prompt (default 16)")
    grpo_parser.add_argument("--max-completion-length", type=_positive, default=None,
                             help="tokens per completion (default: TRL's)")
    for name, text in (("sft", "supervised C- -> C+ pairs (DS_SFT)"),
                       ("dpo", "preference triples: best chosen, worst rejected (DS_DPO)")):
        offline = sub.add_parser(name, parents=[common], help=text)
        offline.add_argument("--lora-r", type=_positive, default=None, help="train a LoRA of this rank")
        offline.add_argument("--per-problem", type=_positive, default=1,
                             help="pairs (sft) or triples (dpo) drawn per problem and objective")
    return parser


def build_rows(args: argparse.Namespace, problems: list[Problem]) -> list[dict[str, Any]]:
    """The recipe's training rows, in TRL's conversational format."""
    objectives = OBJECTIVES if args.objective == MIX else (args.objective,)
    if args.recipe == "grpo":
        return [row for objective in objectives for row in datasets.grpo_rows(problems, objective)]
    builder = datasets.sft_rows if args.recipe == "sft" else datasets.dpo_rows
    return [row for objective in objectives
            for row in builder(problems, objective, per_problem=args.per_problem)]


def recipe_module(recipe: str) -> ModuleType:
    """The module of ``recipe`` (grpo, sft or dpo); MissingExtra without the train extra."""
    return importlib.import_module(f".{recipe}", __package__)


def build(args: argparse.Namespace, recipe: ModuleType, rows: list[dict[str, Any]],
          sandbox: Sandbox) -> GRPOTrainer | SFTTrainer | DPOTrainer:
    """The recipe's trainer from ``recipe``'s module, with the seed's defaults and the options given."""
    options = {"max_steps": args.max_steps, "learning_rate": args.lr, "save_steps": args.save_steps,
               "per_device_train_batch_size": args.batch_size, "gradient_accumulation_steps": args.grad_accum}
    if args.recipe == "grpo":
        options.update(num_generations=args.num_generations, max_completion_length=args.max_completion_length)
    overrides = {key: value for key, value in options.items() if value is not None}
    trainer: GRPOTrainer | SFTTrainer | DPOTrainer
    if args.recipe == "grpo":
        objective = None if args.objective == MIX else args.objective  # None: each row's own
        trainer = recipe.build_trainer(args.model, rows, args.preset, objective, args.out,
                                       Engine(sandbox=sandbox), **overrides)
    else:
        trainer = recipe.build_trainer(args.model, rows, args.out, lora_r=args.lora_r, **overrides)
    return trainer


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _fail(message: str) -> int:
    print(f"{PROG}: {message}", file=sys.stderr)
    return 2
