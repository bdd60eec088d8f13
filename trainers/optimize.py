"""rewardkit optimize: the Afterburner loop over a dataset, with the Figure-5 plot.

Writes into --out: trajectories.jsonl (one trajectory per problem: every
step's code, answer, metrics, and generator_error when the generator gave no
text), iterations.json (per iteration, Pass@1 and Beyond-T/M/I of the best
codes so far with 95% bootstrap CIs across problems, and prompts /
generation_failures: how many prompts were sent and how many got no text)
and iterations.png (those metrics over the iterations; needs matplotlib).
A summary line on stderr counts the failed generations.

--generator openai needs the openai extra (pip install 'rewardkit[openai]'),
--generator local the train extra.  --generator replay --replay FILE.jsonl
answers from records {"problem_id", "text"}: a problem's records are used in
file order, one per iteration (iteration 0 included, whose first code is
generated), and start over when they run out; a problem without records
gets no text.

Exit codes: 0 when done (some generations may have failed: see the counts);
1 when the generator gave no text for any prompt of an iteration (a server
that is down, a wrong --base-url or --model): the run stops there, within
seconds when that is iteration 0, and writes the iterations done before it;
2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..benchmarks.loaders import load_dataset
from ..benchmarks.problem import Problem
from ..benchmarks.runner import HEADLINE, read_solutions
from ..optional import MissingExtra
from ..out_folder import FORCE_HELP, earlier_run
from ..sandbox import Sandbox
from .afterburner import GenerationFailed, Trajectory, iteration_metrics, optimize, problem_key
from .generators import KINDS, Generator, ReplayGenerator, Sampling, make_generator

LABELS = {"pass@1": "Pass@1", "beyond_t": "Beyond-T", "beyond_m": "Beyond-M", "beyond_i": "Beyond-I"}


class UsageError(ValueError):
    """Options that cannot be run; the message says what to fix."""


def build_parser() -> argparse.ArgumentParser:
    """The options of ``rewardkit optimize``."""
    parser = argparse.ArgumentParser(prog="rewardkit optimize", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="mini",
                        help="mini (embedded, default), venus, mercury, apps, humaneval, or a local path")
    parser.add_argument("--split", default=None, help="dataset split for hub datasets")
    parser.add_argument("--limit", type=int, default=None, help="optimise at most N problems")
    parser.add_argument("--problems", default=None, help="comma-separated problem ids to optimise")
    parser.add_argument("--generator", required=True, choices=KINDS)
    parser.add_argument("--base-url", help="openai: the API root, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--model", help="openai: the served model name; local: a model directory or hub id")
    parser.add_argument("--api-key", default=None,
                        help="openai: the key (default $OPENAI_API_KEY; empty for a local vLLM)")
    parser.add_argument("--retries", type=int, default=3,
                        help="openai: retries of a failed request (connection, timeout, 429, 5xx; default 3)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="openai: seconds per request attempt (default 60)")
    parser.add_argument("--concurrency", type=int, default=8,
                        help="openai: requests in flight at once (default 8)")
    parser.add_argument("--replay", metavar="FILE.jsonl", help="replay: records {problem_id, text}")
    parser.add_argument("--iterations", type=int, default=10, help="improvement rounds after iteration 0")
    parser.add_argument("--objective", default="time", choices=["time", "memory", "integral"])
    parser.add_argument("--out", default="out/optimize", help="output folder (default out/optimize)")
    parser.add_argument("--force", action="store_true", help=FORCE_HELP)
    parser.add_argument("--originals", metavar="FILE.jsonl",
                        help="the codes to start from: records {problem_id, code} as for rewardkit bench "
                             "(problems without one get a generated first code)")
    parser.add_argument("--no-feedback", action="store_true",
                        help="the seed's Table 2 'Remove Feedback' ablation: prompts leave out the execution "
                             "feedback (the current code's measured passed / time / memory / integral and "
                             "why it failed)")
    parser.add_argument("--no-original", action="store_true",
                        help="the seed's Table 2 'Remove Original Code' ablation: prompts leave out the "
                             "current code (its performance and failure text stay)")
    parser.add_argument("--temperature", type=float, default=Sampling.temperature)
    parser.add_argument("--max-new-tokens", type=int, default=Sampling.max_new_tokens)
    parser.add_argument("--workers", type=int, default=None, help="sandbox workers (default: CPU count)")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per passing run (median)")
    return parser


def main(argv: Sequence[str]) -> int:
    """Run ``rewardkit optimize``; the exit code is 0, 1 or 2 as the module docstring says.

    A missing extra raises :class:`~rewardkit.optional.MissingExtra` for the
    command line to print.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0)
    earlier = None if args.force else earlier_run(args.out, "trajectories.jsonl")
    if earlier:
        print(f"rewardkit optimize: {earlier}", file=sys.stderr)
        return 2
    try:
        problems = select_problems(args)
        generator = build_generator(args, problems)
        chosen = {p.problem_id for p in problems}
        originals = ({s.problem_id: s.code for s in read_solutions(args.originals) if s.problem_id in chosen}
                     if args.originals else None)
        sandbox = Sandbox(workers=args.workers, repeats=args.repeats)
    except MissingExtra:
        raise
    except (OSError, ValueError, ImportError) as exc:  # loader, replay and generator errors
        print(f"rewardkit optimize: {exc}", file=sys.stderr)
        return 2
    stopped: GenerationFailed | None = None
    with sandbox:
        try:
            trajectories = optimize(problems, generator, args.objective, args.iterations,
                                    original_code=originals, sandbox=sandbox,
                                    feedback=not args.no_feedback, show_original=not args.no_original,
                                    sampling=Sampling(max_new_tokens=args.max_new_tokens,
                                                      temperature=args.temperature))
        except GenerationFailed as exc:
            stopped, trajectories = exc, exc.trajectories
    rows = iteration_metrics(trajectories)
    if rows:
        files = write_outputs(trajectories, rows, Path(args.out), args, str(stopped) if stopped else None)
        print(table(rows))
        print(f"\nwritten: {', '.join(str(path) for path in files)}")
        print(f"rewardkit optimize: {failure_summary(rows)}", file=sys.stderr)
    if stopped is not None:
        hint = (" (is the server at --base-url up, and --model its name?)"
                if args.generator == "openai" else "")
        print(f"rewardkit optimize: stopped: {stopped}{hint}", file=sys.stderr)
        return 1
    return 0


def select_problems(args: argparse.Namespace) -> list[Problem]:
    """The dataset's problems, narrowed to ``--problems`` (in the dataset's order) and ``--limit``."""
    if args.iterations < 0 or (args.limit is not None and args.limit < 1) or args.repeats < 1:
        raise UsageError("--iterations must be 0 or more, --limit and --repeats 1 or more")
    if args.retries < 0 or args.timeout <= 0 or args.concurrency < 1:
        raise UsageError("--retries must be 0 or more, --timeout above 0 and --concurrency 1 or more")
    problems: list[Problem] = load_dataset(args.dataset, split=args.split,
                                           limit=None if args.problems else args.limit)
    if args.problems:
        wanted = [pid.strip() for pid in args.problems.split(",") if pid.strip()]
        missing = sorted(set(wanted) - {p.problem_id for p in problems})
        if missing:
            raise UsageError(f"no such problems in {args.dataset}: {', '.join(missing)}")
        problems = [p for p in problems if p.problem_id in set(wanted)][:args.limit]
    if not problems:
        raise UsageError(f"no problems to optimise in {args.dataset}")
    return problems


def build_generator(args: argparse.Namespace, problems: Sequence[Problem]) -> Generator:
    """The ``--generator`` with its options; UsageError names a missing one."""
    if args.generator == "replay":
        if not args.replay:
            raise UsageError("--generator replay needs --replay FILE.jsonl of {problem_id, text} records")
        return ReplayGenerator(read_replay(Path(args.replay)), key=problem_key(problems))
    if not args.model:
        raise UsageError(f"--generator {args.generator} needs --model")
    if args.generator == "local":
        return make_generator("local", model=args.model)
    if not args.base_url:
        raise UsageError("--generator openai needs --base-url, e.g. http://127.0.0.1:8000/v1")
    return make_generator("openai", base_url=args.base_url, model=args.model, api_key=args.api_key,
                          retries=args.retries, timeout_s=args.timeout, concurrency=args.concurrency)


def read_replay(path: Path) -> dict[str, list[str]]:
    """Replay texts per problem id, in file order, from JSONL records ``{"problem_id", "text"}``."""
    pool: dict[str, list[str]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            pool.setdefault(str(record["problem_id"]), []).append(str(record["text"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{path}:{number}: a replay record needs 'problem_id' and 'text' "
                             f"({exc})") from exc
    if not pool:
        raise UsageError(f"{path}: no replay records")
    return pool


def write_outputs(trajectories: Sequence[Trajectory], rows: list[dict[str, Any]], out: Path,
                  args: argparse.Namespace, stopped: str | None = None) -> list[Path]:
    """``trajectories.jsonl``, ``iterations.json`` and, with matplotlib, ``iterations.png``.

    ``stopped`` is why the run ended before its last iteration, if it did.
    """
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "trajectories.jsonl", out / "iterations.json"]
    paths[0].write_text("".join(json.dumps(t.to_dict()) + "\n" for t in trajectories), encoding="utf-8")
    summary = {"dataset": args.dataset, "generator": args.generator, "model": args.model,
               "objective": args.objective, "iterations": rows, "problems": len(trajectories),
               "feedback": not args.no_feedback, "original": not args.no_original, "repeats": args.repeats,
               "generation_failures": sum(row["generation_failures"] for row in rows), "stopped": stopped}
    paths[1].write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    plot = plot_iterations(rows, out / "iterations.png", f"{args.dataset}, objective {args.objective}")
    return paths + ([plot] if plot else [])


def plot_iterations(rows: list[dict[str, Any]], path: Path, title: str) -> Path | None:
    """The seed's Figure 5: one line per metric over the iterations, with its 95% CI band."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import MaxNLocator
    except ImportError:
        print("rewardkit optimize: iterations.png left out; install matplotlib", file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in HEADLINE:
        shown = [row for row in rows if name in row]
        if not shown:
            continue
        x = [row["iteration"] for row in shown]
        ax.plot(x, [row[name]["value"] for row in shown], marker="o", label=LABELS[name])
        ax.fill_between(x, [row[name]["ci95"][0] for row in shown], [row[name]["ci95"][1] for row in shown],
                        alpha=0.15)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("iteration")
    ax.set_ylabel("best code so far (95% CI across problems)")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Afterburner loop: {title}")
    ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def failure_summary(rows: list[dict[str, Any]]) -> str:
    """One line: how many generations failed, in which iterations."""
    failed, sent = sum(row["generation_failures"] for row in rows), sum(row["prompts"] for row in rows)
    where = ", ".join(f"iteration {row['iteration']}: {row['generation_failures']}"
                      for row in rows if row["generation_failures"])
    return (f"{failed} of {sent} generations failed" + (f" ({where}; each step's generator_error in "
                                                        "trajectories.jsonl says why)" if failed else ""))


def table(rows: list[dict[str, Any]]) -> str:
    """The per-iteration metrics as a Markdown table."""
    lines = ["| iteration | accepted | no text | " + " | ".join(LABELS[n] for n in HEADLINE) + " |",
             "| ---: | ---: | ---: |" + " ---: |" * len(HEADLINE)]
    for row in rows:
        cells = [f"{row[n]['value']:.3f}" if n in row else "-" for n in HEADLINE]
        lines.append(f"| {row['iteration']} | {row['accepted']} | {row['generation_failures']} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)
