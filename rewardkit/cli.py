"""rewardkit's command line: run, score, analyze, bench, demo, optimize, train, serve, docker.

Exit codes: 0 when the work was done (whatever the code's verdict); 2 on bad
usage, unreadable input or a missing optional extra (the message is the pip
install line); 1 when docker setup fails or docker status finds it not ready.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import signal
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .optional import MissingExtra, requires
from .out_folder import FORCE_HELP, earlier_run

if TYPE_CHECKING:
    from .sandbox import ExecutionResult
    from .sandbox.measurement import MeasurementProtocol
    from .scoring import Scorer


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    return Path(path).read_text(encoding="utf-8", errors="replace")


def _check_backend(backend: str) -> None:
    """MissingExtra now, not a traceback later, when the backend's extra is not installed."""
    if backend == "ray":
        with requires("ray"):
            import ray  # noqa: F401


def cmd_run(args: argparse.Namespace) -> int:
    """``rewardkit run``: one solution against a suite, as a table or JSON."""
    from .sandbox import Limits, Sandbox, SuiteError, TestSuite
    from .sandbox.measurement import protocol
    from .sandbox.runtime.languages import resolve_language

    _check_backend(args.backend)
    try:
        code = _read_text(args.solution)
        suite = TestSuite.from_dict(json.loads(Path(args.tests).read_text(encoding="utf-8")))
        resolve_language(args.language)
        chosen = protocol(args.protocol)
        limits = Limits(**{**chosen.limits.to_dict(),
                           **({"time_s": args.time_limit} if args.time_limit is not None else {}),
                           **({"memory_mb": args.memory_mb} if args.memory_mb is not None else {})})
    except (OSError, ValueError, SuiteError) as exc:
        print(f"rewardkit run: {exc}", file=sys.stderr)
        return 2
    with Sandbox(backend=args.backend, workers=1, meter=args.meter, repeats=args.repeats,
                 protocol=chosen) as sandbox:
        result = sandbox.run(code, suite, language=args.language, limits=limits)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    rows = _result_rows(result, chosen)
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    if result.feedback:
        print("\n" + result.feedback)
    return 0


def _result_rows(result: ExecutionResult, chosen: MeasurementProtocol) -> list[tuple[str, str]]:
    """``rewardkit run``'s table of an ExecutionResult: name and value per row."""
    rows = [
        ("status", result.status.value),
        ("tests", f"{result.tests_passed}/{result.tests_total}"),
        ("time_s (CPU)", f"{result.time_s:.6f}"),
        ("wall_s", f"{result.wall_s:.6f}"),
        ("peak_memory_kb", f"{result.peak_memory_kb:.0f}"),
        ("integral_kb_s", f"{result.integral_kb_s:.3f}"),
    ]
    if result.instructions is not None:
        rows.append(("instructions", f"{result.instructions:,}"))
    rows.append(("protocol", f"{chosen.name} ({chosen.statistic} of runs, {chosen.clock} time)"))
    if result.repeats > 1:
        rows.append(("repeats", str(result.repeats)))
        rows += [(f"spread {k}", f"{v:.2%}") for k, v in result.spread.items()]
    return rows


def _score_usage(args: argparse.Namespace) -> str | None:
    """What is wrong with this combination of ``score`` arguments, if anything."""
    if (args.solution is None) == (args.jsonl is None):
        return "give either a SOLUTION_FILE or --jsonl FILE"
    if args.solution is not None:
        if args.tests is None:
            return "a SOLUTION_FILE needs --tests TESTS.json"
        if args.out is not None:
            return "--out goes with --jsonl (a single result is printed)"
    elif args.format is not None:
        return "--format goes with a SOLUTION_FILE (--jsonl always writes JSON lines)"
    if [args.solution, args.jsonl, args.tests, args.baseline].count("-") > 1:
        return "only one input can be - (stdin)"
    return None


def _score_jsonl(scorer: Scorer, lines: list[str], out_path: str | None) -> int:
    """JSON lines to ``out_path`` (or stdout), progress and a summary on stderr."""
    with contextlib.ExitStack() as stack:
        try:
            out = stack.enter_context(open(out_path, "w", encoding="utf-8")) if out_path else sys.stdout
        except OSError as exc:
            print(f"rewardkit score: {exc}", file=sys.stderr)
            return 2
        summary = scorer.score_jsonl(lines, out, progress=sys.stderr)
    print(f"rewardkit score: {summary.line()}", file=sys.stderr)
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    """``rewardkit score``: a SOLUTION_FILE as a table or JSON, or a --jsonl file of records."""
    from .sandbox import Limits
    from .scoring import ScoreError, Scorer

    problem = _score_usage(args)
    if problem:
        print(f"rewardkit score: {problem}", file=sys.stderr)
        return 2
    try:
        completion = _read_text(args.solution) if args.solution is not None else None
        lines = _read_text(args.jsonl).split("\n") if args.jsonl is not None else []
        tests = _read_text(args.tests) if args.tests is not None else None
        baseline = _read_text(args.baseline) if args.baseline is not None else None
        limits = Limits(time_s=args.time_limit, memory_mb=args.memory_mb)
        scorer = Scorer(preset=args.preset, objective=args.objective, tests=tests,
                        baseline_code=baseline, language=args.language, limits=limits,
                        repeats=args.repeats, batch_size=args.batch_size,
                        quality_aggregate=args.quality_aggregate, format=args.test_format)
    except (OSError, ValueError) as exc:  # ScoreError is a ValueError
        print(f"rewardkit score: {exc}", file=sys.stderr)
        return 2
    with scorer:
        if completion is None:
            return _score_jsonl(scorer, lines, args.out)
        try:
            result, sample = scorer.score_completion(completion)
        except ScoreError as exc:
            print(f"rewardkit score: {exc}", file=sys.stderr)
            return 2
        if args.format == "json":
            print(json.dumps(scorer.result_dict(result), indent=2, default=str))
        else:
            print(scorer.table(result, *scorer.measurements(sample, result)))
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """``rewardkit bench``: evaluate solutions on a dataset and write the report."""
    from .benchmarks.bench import run_benchmark
    from .benchmarks.loaders import SkippedRecords, load_dataset
    from .benchmarks.report import metrics_table
    from .benchmarks.runner import read_solutions

    if args.solutions is None:
        print("rewardkit bench: give --solutions JSONL (records {\"problem_id\", \"code\", \"sample\"}); "
              "generating solutions with a model comes with rewardkit.trainers", file=sys.stderr)
        return 2
    earlier = None if args.force else earlier_run(args.out, "report.json")
    if earlier:
        print(f"rewardkit bench: {earlier}", file=sys.stderr)
        return 2
    try:
        with warnings.catch_warnings():  # printed below, on one line of our own
            warnings.simplefilter("ignore", SkippedRecords)
            problems = load_dataset(args.dataset, split=args.split, limit=args.limit, strict=args.strict_data)
        if problems.skipped:
            print(f"rewardkit bench: {problems.summary()}", file=sys.stderr)
        solutions = read_solutions(args.solutions)
        run = run_benchmark(problems, solutions, Path(args.out), dataset=args.dataset,
                            samples=args.samples, workers=args.workers, repeats=args.repeats,
                            evaluations=args.evaluations, measurement=args.protocol)
    except (OSError, ValueError) as exc:  # BenchError, loader and suite errors are ValueErrors
        print(f"rewardkit bench: {exc}", file=sys.stderr)
        return 2
    print(metrics_table(run.report))
    print(f"\nreport: {', '.join(str(path) for path in run.files)}")
    return 0


def cmd_docker(args: argparse.Namespace) -> int:
    """``rewardkit docker setup|status``: make the docker backend usable, or say what is there."""
    from .sandbox import docker_setup

    if args.action == "status":
        state = docker_setup.inspect(args.image)
        print("\n".join(state.lines()))
        return 0 if state.ready else 1
    if os.environ.get("REWARDKIT_SKIP_DOCKER") == "1":
        print("rewardkit docker setup: REWARDKIT_SKIP_DOCKER=1, nothing done", file=sys.stderr)
        return 0
    try:
        state = docker_setup.setup(args.image, Path(args.cache) if args.cache else None, args.rebuild)
    except docker_setup.SetupError as exc:
        print(f"rewardkit docker setup: {exc}", file=sys.stderr)
        return 1
    print(f"docker backend ready: engine {state.engine}, image {state.image}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """``rewardkit demo``: the main job on the embedded data."""
    from .demo import main as demo_main

    return int(demo_main(args.out))


def cmd_serve(args: argparse.Namespace) -> int:
    """``rewardkit serve``: the HTTP reward service, until interrupted."""
    from .sandbox import Limits
    from .serve import Caps, ServeConfig, ServeError

    with requires("serve"):  # the server modules import fastapi and uvicorn
        from .serve.server import serve
    _check_backend(args.backend)
    try:
        config = ServeConfig(host=args.host, port=args.port, token=args.token or None,
                             workers=args.workers, backend=args.backend,
                             limits=Limits(time_s=args.time_limit, memory_mb=args.memory_mb,
                                           suite_time_s=args.suite_time_s),
                             caps=Caps(body_bytes=int(args.max_body_mb * 1024 * 1024),
                                       batch=args.max_batch, cases=args.max_cases,
                                       queued=args.max_queued, run_s=args.max_run_s,
                                       analysis_s=args.max_analysis_s, tool_s=args.max_tool_s))
        config.check()
    except (ServeError, ValueError) as exc:
        print(f"rewardkit serve: {exc}", file=sys.stderr)
        return 2
    serve(config, log_level=args.log_level, access_log=args.access_log)
    return 0


# subcommands with their own argument parsers: name -> module with main(argv) -> int
OWN_PARSERS = {"analyze": ".analyzers.cli", "optimize": ".trainers.optimize", "train": ".trainers.train"}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand but ``analyze`` (which has its own)."""
    from .rewards.components import OBJECTIVE_CHOICES
    from .sandbox.formats import FORMATS
    from .sandbox.measurement import PROTOCOLS
    from .sandbox.sandbox import BACKENDS

    parser = argparse.ArgumentParser(prog="rewardkit", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a solution against a test suite in the sandbox")
    run.add_argument("solution", help="solution source file, or - for stdin")
    run.add_argument("--tests", required=True, help="test suite JSON (stdio, call or script mode)")
    run.add_argument("--language", default="python")
    run.add_argument("--json", action="store_true", help="print ExecutionResult.to_dict() as JSON")
    run.add_argument("--backend", default="local", choices=BACKENDS)
    run.add_argument("--meter", default="time", choices=["time", "instructions"])
    run.add_argument("--repeats", type=int, default=None,
                     help="runs per measurement (default: the protocol's)")
    run.add_argument("--time-limit", type=float, default=None,
                     help="seconds per test case (default: the protocol's, 10 for rewardkit)")
    run.add_argument("--memory-mb", type=int, default=None, help="default: the protocol's, 1024")
    run.add_argument("--protocol", default="rewardkit", choices=sorted(PROTOCOLS),
                     help="measurement protocol: limits, repeats, mean or median, clock, CPU pinning")
    run.set_defaults(func=cmd_run)

    score = sub.add_parser(
        "score", help="score a completion, or a JSONL file of records, with a reward preset",
        description="Score a completion (raw code or a model answer with fences or <solution> "
                    "tags) with a reward preset and print each component and the total; or score "
                    "a JSONL file of records {completion, tests, baseline_code, baseline_metrics, "
                    "language, id, ...} and write one JSON line per record, in order. The default "
                    "preset cisq_grpo needs only tests; afterburner and quality_efficiency compare "
                    "with a baseline (--baseline or the records' baseline_code/baseline_metrics).")
    score.add_argument("solution", nargs="?", metavar="SOLUTION_FILE",
                       help="the completion to score, or - for stdin")
    score.add_argument("--tests", metavar="TESTS.json",
                       help="test suite JSON (for --jsonl: records without 'tests')")
    score.add_argument("--baseline", metavar="FILE",
                       help="baseline code to compare with (for --jsonl: records without one)")
    score.add_argument("--jsonl", metavar="FILE", help="score the records of this JSONL file (- for stdin)")
    score.add_argument("--out", metavar="OUT.jsonl", help="with --jsonl: write results here, not stdout")
    score.add_argument("--preset", default="cisq_grpo",
                       help="a preset (afterburner, cisq_grpo, quality_efficiency) or one component "
                            "by name (pass_rate, binary, efficiency, quality...; default cisq_grpo)")
    score.add_argument("--objective", choices=OBJECTIVE_CHOICES,
                       help="efficiency objective of afterburner and quality_efficiency (default time)")
    score.add_argument("--quality-aggregate", choices=["mean", "total"],
                       help="quality of cisq_grpo: mean, the CISQ paper's average of the four "
                            "characteristics (default), or total, 1/(1+W) over all findings")
    score.add_argument("--format", choices=["table", "json"],
                       help="output for a SOLUTION_FILE (default table)")
    score.add_argument("--test-format", choices=list(FORMATS), default=None,
                       help="for --jsonl: the records' test format (default: found from each "
                            "record's fields, such as tests, verification_info, public_test_cases, "
                            "input_output)")
    score.add_argument("--language", default=None,
                       help="language of the code (default python; for --jsonl: records without one)")
    score.add_argument("--repeats", type=int, default=None,
                       help="runs per passing solution (default: the preset's, 3 for efficiency)")
    score.add_argument("--time-limit", type=float, default=10.0, help="seconds per test case")
    score.add_argument("--memory-mb", type=int, default=1024)
    score.add_argument("--batch-size", type=int, default=32,
                       help="with --jsonl: records scored together (sharing runs and caches)")
    score.set_defaults(func=cmd_score)

    # listed for the help text; main() hands these to their own modules' parsers
    sub.add_parser("analyze", help="static quality analysis (CISQ / ISO 5055)", add_help=False)
    sub.add_parser("optimize", help="the Afterburner loop: iteratively improve solutions with a generator",
                   add_help=False)
    sub.add_parser("train", help="train with TRL: grpo, sft or dpo with rewardkit rewards", add_help=False)

    _add_bench(sub)

    _add_serve(sub)
    _add_docker(sub)

    demo = sub.add_parser("demo", help="the main job on the embedded benchmark: rewards, metrics, report")
    demo.add_argument("--out", default=None, help="report folder (default out/demo)")
    demo.set_defaults(func=cmd_demo)
    return parser


def _add_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``rewardkit bench``'s arguments."""
    from .sandbox.measurement import PROTOCOLS

    bench = sub.add_parser("bench", help="evaluate solutions on a benchmark; write report.json/md and plots")
    bench.add_argument("--dataset", default="mini",
                       help="mini (embedded, default), venus, mercury, apps, humaneval, or a local path")
    bench.add_argument("--solutions", help="JSONL of {problem_id, code, sample} records")
    bench.add_argument("--samples", type=int, default=None, help="keep the first N samples per problem")
    bench.add_argument("--out", default="out/bench",
                       help="report folder (default out/bench); one holding a report is refused")
    bench.add_argument("--force", action="store_true", help=FORCE_HELP)
    bench.add_argument("--split", default=None, help="dataset split for hub datasets")
    bench.add_argument("--limit", type=int, default=None, help="load at most N problems")
    bench.add_argument("--strict-data", action="store_true",
                       help="stop at the first dataset record that cannot be loaded (default: skip it, "
                            "and list the skipped records with their reasons on stderr)")
    bench.add_argument("--workers", type=int, default=None)
    bench.add_argument("--repeats", type=int, default=None,
                       help="measurements per run (default: median of 3 under the rewardkit protocol, "
                            "the protocol's own otherwise)")
    bench.add_argument("--protocol", default="rewardkit", choices=sorted(PROTOCOLS),
                       help="measurement protocol: rewardkit (default; CPU time), mercury (elapsed time, "
                            "mean of 3, 30 s) or monolith (elapsed time, 90 s, 1 GB, one pinned CPU)")
    bench.add_argument("--evaluations", type=int, default=1,
                       help="evaluate every solution N times, fresh runs (Afterburner appendix G.1: 16); "
                            "the CIs then resample evaluations, not samples (default 1)")
    bench.set_defaults(func=cmd_bench)


def _add_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from .sandbox.sandbox import BACKENDS
    from .serve import config as conf

    serve = sub.add_parser(
        "serve", help="HTTP reward service: /score, /run, /analyze, /openrlhf, /health",
        description="Serve rewardkit's rewards over HTTP (OpenAPI at /openapi.json), for trainers in "
                    "other processes: TRL through rewardkit.client.RemoteReward, verl through "
                    "rewardkit.client.compute_score_async, OpenRLHF through --reward.remote_url "
                    ".../openrlhf?preset=NAME (with --data.label_key naming the tests column). One process "
                    "with one shared sandbox and caches; needs the [serve] extra.")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to bind (default 127.0.0.1; any other needs a token)")
    serve.add_argument("--port", type=int, default=conf.DEFAULT_PORT, help=f"default {conf.DEFAULT_PORT}")
    serve.add_argument("--token", default=os.environ.get(conf.TOKEN_ENV),
                       help=f"clients must send 'Authorization: Bearer TOKEN' (default ${conf.TOKEN_ENV}); "
                            "without one, only requests to a loopback Host are answered")
    serve.add_argument("--workers", type=int, default=None,
                       help="sandbox jobs at once, shared fairly by all requests (default: CPU count; "
                            "timing presets get a second pool); requests computed at once: twice this")
    serve.add_argument("--backend", default="local", choices=BACKENDS, help="sandbox backend (default local)")
    serve.add_argument("--max-batch", type=int, default=conf.DEFAULT_MAX_BATCH,
                       help=f"most completions (or sources) per request (default {conf.DEFAULT_MAX_BATCH})")
    serve.add_argument("--max-body-mb", type=float, default=conf.DEFAULT_MAX_BODY_BYTES / 2**20,
                       help=f"largest request body in MiB (default {conf.DEFAULT_MAX_BODY_BYTES / 2**20:g})")
    serve.add_argument("--max-queued", type=int, default=conf.DEFAULT_MAX_QUEUED,
                       help="requests that may wait for a turn to be computed; more are answered 503 "
                            f"(default {conf.DEFAULT_MAX_QUEUED})")
    serve.add_argument("--max-cases", type=int, default=conf.DEFAULT_MAX_CASES,
                       help=f"most cases in one test suite (default {conf.DEFAULT_MAX_CASES})")
    serve.add_argument("--time-limit", type=float, default=10.0,
                       help="seconds per test case, for every run (default 10)")
    serve.add_argument("--suite-time-s", type=float, default=conf.DEFAULT_SUITE_TIME_S,
                       help="seconds for a whole suite, so the longest one job holds a sandbox slot "
                            f"(default {conf.DEFAULT_SUITE_TIME_S:g})")
    serve.add_argument("--memory-mb", type=int, default=1024, help="memory per run (default 1024)")
    serve.add_argument("--max-run-s", type=float, default=conf.DEFAULT_MAX_RUN_S,
                       help=f"seconds of sandbox jobs a request may use (default {conf.DEFAULT_MAX_RUN_S:g})")
    serve.add_argument("--max-analysis-s", type=float, default=conf.DEFAULT_MAX_ANALYSIS_S,
                       help="seconds of analysis one request may use "
                            f"(default {conf.DEFAULT_MAX_ANALYSIS_S:g})")
    serve.add_argument("--max-tool-s", type=float, default=conf.DEFAULT_MAX_TOOL_S,
                       help="most seconds an analysis tool gets per source, whatever a profile asks "
                            f"(default {conf.DEFAULT_MAX_TOOL_S:g})")
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.add_argument("--access-log", action="store_true", help="log every request")
    serve.set_defaults(func=cmd_serve)


def _add_docker(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    docker = sub.add_parser(
        "docker", help="set up the docker backend: engine and sandbox image",
        description="Make the docker backend usable on this machine. setup installs Debian's "
                    "docker.io when docker is missing (root and apt), starts dockerd when the engine "
                    "does not answer, and builds the sandbox image when it is absent (debootstrap, no "
                    "registry; caches in $REWARDKIT_CACHE, else ~/.cache/rewardkit/docker). status "
                    "prints what is there and exits 1 unless the backend is ready.")
    actions = docker.add_subparsers(dest="action", required=True)
    setup = actions.add_parser("setup", help="install, start and build what is missing (idempotent)",
                               description="Install docker.io, start dockerd and build the sandbox "
                                           "image, each only when missing. Needs root for those steps.")
    setup.add_argument("--image", default=None,
                       help="image tag (default $REWARDKIT_IMAGE or rewardkit-sandbox:latest)")
    setup.add_argument("--cache", default=None,
                       help="build cache folder (default $REWARDKIT_CACHE or ~/.cache/rewardkit/docker)")
    setup.add_argument("--rebuild", action="store_true",
                       help="rebuild the image's root filesystem even when the image and cache exist")
    status = actions.add_parser("status", help="print the docker CLI, engine, image and cache",
                                description="Print what the docker backend needs and whether it is "
                                            "there; exit 0 when ready, 1 otherwise. Changes nothing.")
    status.add_argument("--image", default=None,
                        help="image tag (default $REWARDKIT_IMAGE or rewardkit-sandbox:latest)")
    docker.set_defaults(func=cmd_docker)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    A reader that goes away (``| head``) ends the command quietly with 141
    (128 + SIGPIPE), as Unix tools do, not with a traceback.
    """
    try:
        return _run(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        return 128 + signal.SIGPIPE


def _run(args_in: list[str]) -> int:
    """Dispatch to the subcommand; a missing optional extra is its pip line and exit 2."""
    try:
        return _dispatch(args_in)
    except MissingExtra as exc:
        command = f"rewardkit {args_in[0]}" if args_in else "rewardkit"
        print(f"{command}: {exc}", file=sys.stderr)
        return 2


def _dispatch(args_in: list[str]) -> int:
    if args_in and args_in[0] in OWN_PARSERS:  # so that `rewardkit analyze -h` is analyze's own help
        module = importlib.import_module(OWN_PARSERS[args_in[0]], __package__)
        return int(module.main(args_in[1:]))
    parser = build_parser()
    try:
        args = parser.parse_args(args_in)
    except SystemExit as exc:
        return int(exc.code or 0)
    return int(args.func(args))
