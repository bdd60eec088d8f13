"""Command line: ``rewardkit run|analyze|demo``.

Exit codes: 0 when the work was done (whatever the code's verdict), 2 on bad
usage or unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    return Path(path).read_text(encoding="utf-8", errors="replace")


def cmd_run(args: argparse.Namespace) -> int:
    from .sandbox import Limits, Sandbox, SuiteError, TestSuite
    from .sandbox.runtime.languages import resolve_language

    try:
        code = _read_text(args.solution)
        suite = TestSuite.from_dict(json.loads(Path(args.tests).read_text(encoding="utf-8")))
        resolve_language(args.language)
        limits = Limits(time_s=args.time_limit, memory_mb=args.memory_mb)
    except (OSError, ValueError, SuiteError) as exc:
        print(f"rewardkit run: {exc}", file=sys.stderr)
        return 2
    with Sandbox(backend=args.backend, workers=1, meter=args.meter, repeats=args.repeats) as sandbox:
        result = sandbox.run(code, suite, language=args.language, limits=limits)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
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
    if result.repeats > 1:
        rows.append(("repeats", str(result.repeats)))
        rows += [(f"spread {k}", f"{v:.2%}") for k, v in result.spread.items()]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    if result.feedback:
        print("\n" + result.feedback)
    return 0


def cmd_analyze(args: argparse.Namespace) -> int:
    from .analyzers.cli import main as analyze_main

    return int(analyze_main(args.rest))


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import main as demo_main

    return int(demo_main(args.out))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rewardkit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run a solution against a test suite in the sandbox")
    run.add_argument("solution", help="solution source file, or - for stdin")
    run.add_argument("--tests", required=True, help="test suite JSON (stdio, call or script mode)")
    run.add_argument("--language", default="python")
    run.add_argument("--json", action="store_true", help="print ExecutionResult.to_dict() as JSON")
    run.add_argument("--backend", default="local", choices=["local", "docker"])
    run.add_argument("--meter", default="time", choices=["time", "instructions"])
    run.add_argument("--repeats", type=int, default=1)
    run.add_argument("--time-limit", type=float, default=10.0, help="seconds per test case")
    run.add_argument("--memory-mb", type=int, default=1024)
    run.set_defaults(func=cmd_run)

    analyze = sub.add_parser("analyze", help="static quality analysis (CISQ / ISO 5055)",
                             add_help=False)
    analyze.add_argument("rest", nargs=argparse.REMAINDER)
    analyze.set_defaults(func=cmd_analyze)

    demo = sub.add_parser("demo", help="run the bundled examples and print a results table")
    demo.add_argument("--out", default=None, help="also write the results as JSON here")
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return int(args.func(args))
