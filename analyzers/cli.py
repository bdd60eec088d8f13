"""``rewardkit analyze PATH... [--format table|json|sarif] [--profile FILE] [--fail-under S]``.

``-`` reads one source from stdin; a directory means every ``*.py`` under it.
Exit 0 when the analysis ran (whatever it found), 1 when ``--fail-under`` is
given and the mean score is below it, 2 on bad usage or a path that cannot be
read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from .batch import analyze_many
from .profile import load_profile
from .report import QualityReport
from .sarif import to_sarif


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rewardkit analyze", description="CISQ-style quality analysis of Python code."
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="file, directory, or - (stdin)")
    parser.add_argument("--format", choices=("table", "json", "sarif"), default="table")
    parser.add_argument("--profile", type=Path, help="TOML profile (tools, severity, thresholds)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes")
    parser.add_argument("--summary", action="store_true",
                        help="table format: one line per file, no findings")
    parser.add_argument("--fail-under", type=float, metavar="SCORE",
                        help="exit 1 when the mean score of the files is below SCORE (a CI gate)")
    return parser


def _expand(paths: Sequence[str]) -> list[str]:
    out: list[str] = []
    for p in paths:
        path = Path(p)
        out.extend(sorted(map(str, path.rglob("*.py"))) if path.is_dir() else [p])
    return out


def _table(files: Sequence[tuple[str, QualityReport]], summary: bool) -> str:
    lines = []
    for name, rep in files:
        per = "  ".join(f"{c[:4]}={s:.3f}" for c, s in rep.by_characteristic.items())
        lines.append(f"{name}: score {rep.score:.3f}  W={rep.weighted_count:g}  [{per}]")
        if summary:
            continue
        for f in rep.findings:
            cwe = f"CWE-{f.cwe}" if f.cwe else "-"
            lines.append(
                f"  {f.line:>5}  {f.severity:<8} {f.tool}:{f.rule:<24} {cwe:<9} {f.message}"
            )
        lines += [f"  error: {e.tool}: {e.reason}" for e in rep.errors]
    if len(files) > 1:
        lines.append(f"{len(files)} files: mean score {_mean_score(files):.3f}, "
                     f"{sum(len(r.findings) for _, r in files)} findings")
    return "\n".join(lines)


def _mean_score(files: Sequence[tuple[str, QualityReport]]) -> float:
    return sum(r.score for _, r in files) / len(files) if files else 1.0


def main(argv: list[str]) -> int:
    """Run the command; ``argv`` excludes the word ``analyze``."""
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    try:
        profile = load_profile(args.profile)
    except (OSError, ValueError) as exc:
        print(f"rewardkit analyze: bad profile: {exc}", file=sys.stderr)
        return 2
    names = _expand(args.paths)
    codes: list[bytes] = []
    for name in names:
        try:
            codes.append(sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes())
        except OSError as exc:
            print(f"rewardkit analyze: cannot read {name}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    reports = analyze_many(codes, profile, workers=args.workers)
    files = [("<stdin>" if n == "-" else n, r) for n, r in zip(names, reports, strict=True)]
    if args.format == "json":
        print(json.dumps({"files": [{"path": n, **r.to_dict()} for n, r in files]}, indent=2))
    elif args.format == "sarif":
        print(json.dumps(to_sarif(files), indent=2))
    else:
        print(_table(files, args.summary))
    if args.fail_under is not None and _mean_score(files) < args.fail_under:
        print(f"rewardkit analyze: mean score {_mean_score(files):.3f} is under {args.fail_under}",
              file=sys.stderr)
        return 1
    return 0
